//===- kc/IR/Einsum.h - torch.einsum equations -------------------*- C++ -*-===//
///
/// \file
/// An einsum equation as operand and result label lists, shared by the
/// type rule and the kernel. Labels are letters; the dims of an ellipsis
/// get labels of their own (kEllipsisLabel and up), right-aligned across
/// operands and broadcast as PyTorch does. pnnx writes `...ij,...jk->...ik`
/// without its ellipses (`ik,kj->ij` on 3-d operands): an operand with
/// more dims than labels is read as having a leading ellipsis, and then so
/// is the result.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace kc {

constexpr int kEllipsisLabel = 64;

struct EinsumSpec {
  std::vector<std::vector<int>> inputs; ///< one label per dim of each operand
  std::vector<int> output;
  /// The size of every label (index by label), broadcast over operands.
  std::vector<int64_t> sizes;
};

/// Parses `equation` for operands of `shapes`; an error says what is wrong.
llvm::Expected<EinsumSpec> parseEinsum(llvm::StringRef equation,
                                       llvm::ArrayRef<std::vector<int64_t>> shapes);

} // namespace kc
