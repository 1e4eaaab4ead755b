//===- kc/IR/Uses.h - How often each node is used ---------------*- C++ -*-===//
#pragma once

#include "kc/IR/Module.h"

#include "llvm/ADT/DenseMap.h"

namespace kc {

/// How many times each node of `fn`'s body is used as an operand (the body
/// itself counts one use, by the return). Passes and the runtime's
/// schedule decide fusions from it.
llvm::DenseMap<const ExprNode *, unsigned> countUses(const Function &fn);

} // namespace kc
