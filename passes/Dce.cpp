//===- Dce.cpp - Dead code elimination ------------------------------------===//
//
// The IR is a DAG reached from `main`'s result, so an unused node is gone as
// soon as nothing refers to it. What dce removes is dead code that is still
// referenced:
//   - no-op operators (nn.Identity, nn.Dropout*, Tensor.contiguous),
//   - tuple plumbing: `(a, b).1` is `b`,
//   - parameters an expression function never reads, with the call's argument,
//   - functions no longer called.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/Pass/Pass.h"
#include "kc/Pass/PassUtils.h"

#include "llvm/ADT/DenseSet.h"

using namespace kc;

namespace {

bool isNoOp(const CallNode *c) {
  const OpDef *op = c->opDef();
  return op && op->is(OpFlags::NoOp) && c->numArgs() >= 1;
}

class DeadCode final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  uint64_t removed = 0;

  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    auto *c = llvm::cast<CallNode>(post.get());
    if (isNoOp(c)) {
      ++removed;
      return c->arg(0);
    }
    auto *f = llvm::dyn_cast<FunctionNode>(c->callee().get());
    if (!f || !f->isPrimitive())
      return post;
    // Which parameters does the body read?
    llvm::DenseSet<const ExprNode *> used;
    PostOrderVisit(f->body(), [&](const Expr &e) {
      if (llvm::isa<VarNode>(e.get()))
        used.insert(e.get());
    });
    if (used.size() == f->params().size())
      return post;
    llvm::SmallVector<Var, 4> params;
    llvm::SmallVector<Expr, 4> args;
    llvm::SmallVector<ArgKey, 4> keys;
    for (size_t i = 0; i < f->params().size() && i < c->numArgs(); ++i)
      if (used.count(f->params()[i].get())) {
        params.push_back(f->params()[i]);
        args.push_back(c->arg(i));
        keys.push_back(c->keys()[i]);
      }
    removed += f->params().size() - params.size();
    Function nf = make<const FunctionNode>(f->name(), params, f->body(), f->retType(),
                                           f->functionKind(), f->attrs());
    Call n = call(Expr(nf), args, c->attrs(), keys, c->name());
    n->setLoc(c->loc());
    return n;
  }

  Expr Rewrite_(const TupleGetItemNode *pre, const Expr &post) override {
    auto *g = llvm::cast<TupleGetItemNode>(post.get());
    if (auto *t = llvm::dyn_cast<TupleNode>(g->tuple().get()))
      if (g->index() < t->fields().size()) {
        ++removed;
        return t->fields()[g->index()];
      }
    return post;
  }
};

class Dce final : public Pass {
public:
  llvm::StringRef name() const override { return "dce"; }
  llvm::StringRef description() const override {
    return "Remove no-op operators, tuple plumbing, unused expression parameters and functions";
  }
  llvm::Error run(Module &m) override {
    DeadCode d;
    rewriteMain(m, [&](const Expr &body) { return d.Mutate(body); });
    numRemoved += d.removed;
    size_t before = m.functions().size();
    m.removeUnreferencedFunctions();
    numFunctions += before - m.functions().size();
    return llvm::Error::success();
  }

private:
  Statistic numRemoved{this, "num-removed", "Nodes and parameters removed"};
  Statistic numFunctions{this, "num-functions", "Functions removed"};
};

} // namespace

KC_REGISTER_PASS(Dce);
