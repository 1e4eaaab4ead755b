//===- kc/IR/Permutation.h - Tensor.permute's dims -------------*- C++ -*-===//
///
/// \file
/// What a Tensor.permute (torch.permute) call's `dims` say, read once for
/// its type rule and for the passes that remove or merge permutes.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Expr.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace kc {

class OpDef;

/// The op Tensor.permute (torch.permute is its alias).
const OpDef *permuteOp();

/// `c`'s dims as a permutation of `rank` dims, each in [0, rank) (negative
/// entries count from the end), or an error (without the op's name) when
/// they are not one.
llvm::Expected<std::vector<int64_t>> permutationOf(const CallNode &c, int64_t rank);

} // namespace kc
