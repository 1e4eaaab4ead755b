//===- TypeRuleUtils.h - Helpers for op type rules --------------*- C++ -*-===//
///
/// \file
/// Shared pieces of the type rules registered in lib/IR/ops: reading data
/// inputs and attributes of a call, broadcasting, normalizing dims.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Op.h"

#include "llvm/ADT/Twine.h"

#include <vector>

namespace kc::typerules {

/// The i-th data (non-weight) argument, or null.
const ExprNode *dataArg(const CallNode &c, size_t i);
size_t numDataArgs(const CallNode &c);
/// The tensor type of the i-th data argument, or null when unknown.
const TensorTypeNode *dataType(const CallNode &c, size_t i);

/// An error naming the op: `nn.Conv2d 'conv1': <msg>`.
llvm::Error fail(const CallNode &c, const llvm::Twine &msg);

/// Normalizes a possibly negative dim against `rank`; -1 when out of range.
int64_t normDim(int64_t d, int64_t rank);

/// NumPy broadcasting of two dim lists; nullopt if incompatible.
std::optional<std::vector<int64_t>> broadcast(llvm::ArrayRef<int64_t> a,
                                              llvm::ArrayRef<int64_t> b);

/// An int-list attribute with `n` entries (a scalar is repeated).
std::vector<int64_t> intsN(const CallNode &c, llvm::StringRef key, size_t n,
                           std::vector<int64_t> dflt);

/// Type rule: the result has the type of the first data input.
llvm::Expected<Type> sameAsInput(const CallNode &c);

} // namespace kc::typerules
