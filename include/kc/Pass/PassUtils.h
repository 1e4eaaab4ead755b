//===- kc/Pass/PassUtils.h - Helpers shared by passes -----------*- C++ -*-===//
///
/// \file
/// Small operations several passes need.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Functor.h"
#include "kc/IR/Module.h"
#include "kc/IR/Uses.h" // countUses

#include "llvm/ADT/DenseMap.h"

namespace kc {

/// Rewrites `main` with `mutate` (an ExprMutator-like callable taking and
/// returning the body) and installs the result.
template <typename F> void rewriteMain(Module &m, F &&mutate) {
  Function main = m.main();
  if (!main)
    return;
  Expr body = mutate(main->body());
  if (body.get() != main->body().get())
    m.setMain(withBody(main, main->params(), body));
}

/// Rewrites calls of `main` one at a time, operands first:
/// `rewrite(pre, rewritten)` returns the replacement of call `pre` (of
/// the graph as it was, with its types), or null to keep it; `rewritten(e)`
/// gives the rewritten form of any node `pre` reads. Installs the new
/// `main`; returns how many calls were replaced.
template <typename F> uint64_t rewriteCalls(Module &m, F &&rewrite) {
  class Rewriter final : public MixedModeMutator {
  public:
    using MixedModeMutator::Rewrite_;
    explicit Rewriter(F &f) : f_(f) {}
    uint64_t count = 0;
    Expr Rewrite_(const CallNode *pre, const Expr &post) override {
      // Operands are visited before their users: Mutate returns their
      // memoized rewritten forms.
      Expr r = f_(*pre, [this](const ExprNode *e) { return Mutate(Expr(e)); });
      if (!r)
        return post;
      ++count;
      return r;
    }

  private:
    F &f_;
  } r(rewrite);
  rewriteMain(m, [&](const Expr &body) { return r.Mutate(body); });
  return r.count;
}

} // namespace kc
