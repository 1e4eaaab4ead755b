//===- kc/IR/StructuralHash.h - Hashing nodes for hash-consing --*- C++ -*-===//
///
/// \file
/// What makes two nodes the same computation once their operands are
/// unique (TVM's StructuralEqual/StructuralHash, one level deep): a call's
/// callee, its operands by identity with their keys, and its attributes by
/// value; a scalar literal's value and type. Hashes agree with the
/// equalities (every NaN alike, 0.0 and -0.0 apart).
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Expr.h"

#include "llvm/ADT/Hashing.h"

namespace kc {

llvm::hash_code callHash(const CallNode &c);
bool sameCall(const CallNode &a, const CallNode &b);

/// Literals: scalar constants (others are weights, never merged).
llvm::hash_code literalHash(const ConstantNode &k);
bool sameLiteral(const ConstantNode &a, const ConstantNode &b);

} // namespace kc
