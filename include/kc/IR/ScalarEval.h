//===- kc/IR/ScalarEval.h - Evaluate expression ops on scalars --*- C++ -*-===//
///
/// \file
/// Python-semantics evaluation of the `pnnx.Expression` functions on literal
/// scalars, used by constant folding: int op int stays int (except `div`,
/// `pow` with a negative exponent and the transcendental functions), int op
/// float is float, `floor_divide` and `remainder` round toward −∞ as Python
/// does.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Attr.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace kc {

/// The value of `op(args...)`, or nullopt when `op` is not foldable on these
/// values (unknown op, a string operand, integer division by zero, an integer
/// result outside int64, a float rounded to an integer outside int64).
std::optional<AttrValue> evalScalarOp(llvm::StringRef op, llvm::ArrayRef<AttrValue> args);

} // namespace kc
