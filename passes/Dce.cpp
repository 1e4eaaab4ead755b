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

/// Which parameters of each expression function its body reads, for the
/// functions that leave some unread.
using ParamMasks = llvm::StringMap<std::vector<bool>>;

class DeadCode final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  explicit DeadCode(const ParamMasks &masks) : masks_(masks) {}
  uint64_t removed = 0;

  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    auto *c = llvm::cast<CallNode>(post.get());
    if (isNoOp(c)) {
      ++removed;
      return c->arg(0);
    }
    auto it = c->global() ? masks_.find(c->global()->name()) : masks_.end();
    if (it == masks_.end() || it->second.size() != c->numArgs())
      return post; // the verifier reports a wrong count
    llvm::SmallVector<Expr, 4> args;
    llvm::SmallVector<ArgKey, 4> keys;
    for (size_t i = 0; i < c->numArgs(); ++i)
      if (it->second[i]) {
        args.push_back(c->arg(i));
        keys.push_back(c->keys()[i]);
      }
    Call n = call(c->callee(), args, c->attrs(), keys, c->name());
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

private:
  const ParamMasks &masks_;
};

class Dce final : public Pass {
public:
  llvm::StringRef name() const override { return "dce"; }
  llvm::StringRef description() const override {
    return "Remove no-op operators, tuple plumbing, unused expression parameters and functions";
  }
  llvm::Error run(Module &m) override {
    // Expression functions lose the parameters they do not read (one
    // module update each); then every graph's calls of them lose the
    // matching arguments.
    ParamMasks masks;
    std::vector<Function> narrowed;
    for (const Function &f : m.functions()) {
      if (!f->isPrimitive())
        continue;
      llvm::DenseSet<const ExprNode *> used;
      PostOrderVisit(f->body(), [&](const Expr &e) {
        if (llvm::isa<VarNode>(e.get()))
          used.insert(e.get());
      });
      if (used.size() == f->params().size())
        continue;
      std::vector<bool> &mask = masks[f->name()];
      llvm::SmallVector<Var, 4> params;
      for (const Var &p : f->params()) {
        mask.push_back(used.count(p.get()) != 0);
        if (mask.back())
          params.push_back(p);
      }
      numRemoved += f->params().size() - params.size();
      narrowed.push_back(make<const FunctionNode>(f->name(), params, f->body(), f->retType(),
                                                  f->functionKind(), f->attrs()));
    }
    for (Function &f : narrowed)
      m.add(std::move(f));
    std::vector<Function> graphs;
    for (const Function &f : m.functions())
      if (!f->isPrimitive())
        graphs.push_back(f);
    for (const Function &g : graphs) {
      DeadCode d(masks);
      Expr body = d.Mutate(g->body());
      numRemoved += d.removed;
      if (body.get() != g->body().get())
        m.add(withBody(g, g->params(), body));
    }
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
