//===- kc/Pass/PassUtils.h - Helpers shared by passes -----------*- C++ -*-===//
///
/// \file
/// Small operations several passes need.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"
#include "kc/IR/Uses.h" // countUses

#include "llvm/ADT/DenseMap.h"

namespace kc {

/// After a pass replaced functions in the module (by name), calls in `main`
/// still refer to the old function nodes: point them at the module's current
/// definitions.
void rebindFunctionCalls(Module &m);

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

} // namespace kc
