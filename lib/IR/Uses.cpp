//===- Uses.cpp - How often each node is used -----------------------------===//
#include "kc/IR/Uses.h"
#include "kc/IR/Functor.h"

namespace kc {

llvm::DenseMap<const ExprNode *, unsigned> countUses(const Function &fn) {
  llvm::DenseMap<const ExprNode *, unsigned> uses;
  PostOrderVisit(fn->body(), [&](const Expr &e) {
    if (auto *c = llvm::dyn_cast<CallNode>(e.get()))
      for (const Expr &a : c->args())
        ++uses[a.get()];
    else if (auto *t = llvm::dyn_cast<TupleNode>(e.get()))
      for (const Expr &a : t->fields())
        ++uses[a.get()];
    else if (auto *g = llvm::dyn_cast<TupleGetItemNode>(e.get()))
      ++uses[g->tuple().get()];
  });
  ++uses[fn->body().get()];
  return uses;
}

} // namespace kc
