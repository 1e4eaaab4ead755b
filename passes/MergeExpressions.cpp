//===- MergeExpressions.cpp - Fuse chains of elementwise expressions ------===//
//
// When the result of one expression call feeds only another expression call,
// the two become one primitive function: the producer's body is substituted
// for the consumer's parameter. The interpreter then runs the whole chain in
// one blockwise pass instead of materializing the intermediate tensor.
//
//   %3 = @e1(%0, %1)                  %4 = @e2(%0, %1, %2)
//   %4 = @e2(%3, %2)          ⇒       fn @e2(%a, %b, %c) { mul(add(%a, %b), %c) }
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/IR/Rpn.h"
#include "kc/Pass/Pass.h"
#include "kc/Pass/PassUtils.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

using namespace kc;

namespace {

/// An ExprMutator whose memo is seeded with parameter replacements.
class Substitute final : public ExprMutator {
public:
  void bind(const ExprNode *from, Expr to) { memo_[from] = std::move(to); }
};

const FunctionNode *primitiveCallee(const ExprNode *e) {
  auto *c = llvm::dyn_cast_or_null<CallNode>(e);
  if (!c)
    return nullptr;
  auto *f = llvm::dyn_cast<FunctionNode>(c->callee().get());
  // Lowered programs are opaque here: their parameters are positional tokens.
  return f && f->isPrimitive() && !isLoweredToRpn(*f) ? f : nullptr;
}

class Merger final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  Merger(const llvm::DenseMap<const ExprNode *, unsigned> &uses, int64_t maxOperands,
         llvm::StringMap<unsigned> &callsOf, llvm::StringSet<> &names)
      : uses_(uses), maxOperands_(maxOperands), callsOf_(callsOf), names_(names) {}
  uint64_t merged = 0;

  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    auto *c = llvm::cast<CallNode>(post.get());
    const FunctionNode *f = primitiveCallee(c);
    if (!f || f->params().size() != c->numArgs())
      return post;
    // New operand list: each operand once; producers' operands spliced in.
    llvm::SmallVector<Expr, 8> operands;
    llvm::DenseMap<const ExprNode *, Var> paramFor;
    llvm::SmallVector<Var, 8> params;
    auto paramOf = [&](const Expr &operand, const Var &like) {
      auto it = paramFor.find(operand.get());
      if (it != paramFor.end())
        return it->second;
      Var v = var(std::to_string(params.size()), like->type());
      paramFor[operand.get()] = v;
      params.push_back(v);
      operands.push_back(operand);
      return v;
    };
    Substitute subst;
    bool changed = false;
    for (size_t i = 0; i < c->numArgs(); ++i) {
      const Expr &a = c->arg(i);
      const FunctionNode *g = primitiveCallee(a.get());
      auto *preArg = pre->arg(i).get();
      if (g && uses_.lookup(preArg) == 1 && g->params().size() == llvm::cast<CallNode>(a.get())->numArgs()) {
        auto *ac = llvm::cast<CallNode>(a.get());
        Substitute inner;
        for (size_t j = 0; j < ac->numArgs(); ++j)
          inner.bind(g->params()[j].get(), paramOf(ac->arg(j), g->params()[j]));
        subst.bind(f->params()[i].get(), inner.Mutate(g->body()));
        changed = true;
      } else {
        subst.bind(f->params()[i].get(), paramOf(a, f->params()[i]));
      }
    }
    if (!changed || int64_t(operands.size()) > maxOperands_)
      return post;
    Expr body = subst.Mutate(f->body());
    // The merged function keeps the consumer's name only when no other call
    // still needs the original.
    std::string name = f->name();
    if (callsOf_.lookup(name) > 1) {
      for (unsigned i = 0; names_.count(name); ++i)
        name = f->name() + "_merged" + std::to_string(i);
      names_.insert(name);
    }
    Function nf = make<const FunctionNode>(name, params, body, f->retType(), true, f->attrs());
    Call n = call(Expr(nf), operands, c->attrs(), {}, c->name());
    n->setLoc(c->loc());
    ++merged;
    return n;
  }

private:
  const llvm::DenseMap<const ExprNode *, unsigned> &uses_;
  int64_t maxOperands_;
  llvm::StringMap<unsigned> &callsOf_;
  llvm::StringSet<> &names_;
};

class MergeExpressions final : public Pass {
public:
  llvm::StringRef name() const override { return "merge-expressions"; }
  llvm::StringRef description() const override {
    return "Merge chains of elementwise expression functions into one function";
  }
  llvm::Error run(Module &m) override {
    Function main = m.main();
    if (!main)
      return llvm::Error::success();
    auto uses = countUses(main);
    llvm::StringMap<unsigned> callsOf;
    PostOrderVisit(main->body(), [&](const Expr &e) {
      if (auto *c = llvm::dyn_cast<CallNode>(e.get()))
        if (auto *f = llvm::dyn_cast<FunctionNode>(c->callee().get()))
          ++callsOf[f->name()];
    });
    llvm::StringSet<> names;
    for (const Function &f : m.functions())
      names.insert(f->name());
    Merger mg(uses, int64_t(std::min<uint64_t>(*maxOperands, INT64_MAX)), callsOf, names);
    rewriteMain(m, [&](const Expr &body) { return mg.Mutate(body); });
    m.removeUnreferencedFunctions();
    numMerged += mg.merged;
    return llvm::Error::success();
  }

private:
  Option<uint64_t> maxOperands{this, "max-operands", "Largest operand count of a merged function",
                               16};
  Statistic numMerged{this, "num-merged", "Expression calls merged into their consumer"};
};

} // namespace

KC_REGISTER_PASS(MergeExpressions);
