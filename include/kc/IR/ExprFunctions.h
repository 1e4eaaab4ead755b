//===- kc/IR/ExprFunctions.h - The functions of pnnx.Expression -*- C++ -*-===//
///
/// \file
/// The functions an expression body may call (`add`, `floor_divide`,
/// `torch.float`, ...), each listed once in ExprFunctions.def with its
/// arity, flags and floating-point value; this header gives the flags and a
/// lookup by name.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

namespace kc {

namespace exprfn {
/// f(a, b) == f(b, a).
constexpr unsigned Commutative = 1u << 0;
/// The result is floating for integer operands too (`div`, `exp`).
constexpr unsigned Floating = 1u << 1;
/// `and`, `or`, `xor`: logical on bools, bitwise on integers.
constexpr unsigned Logical = 1u << 2;
/// Folding a number gives a Python int (`ceil`, `int`).
constexpr unsigned Rounding = 1u << 3;
} // namespace exprfn

struct ExprFunction {
  llvm::StringRef name;
  int arity;
  unsigned flags;
  llvm::StringRef doc;
  /// Its floating-point value (of x, or of x and y), in double, from the
  /// table's formula; null for a KC_EXPR_OTHER entry, which the expression
  /// kernel refuses.
  double (*value)(double x, double y);

  bool is(unsigned flag) const { return (flags & flag) != 0; }
};

/// The function named `name` (as PNNX writes it), or null.
const ExprFunction *findExprFunction(llvm::StringRef name);

} // namespace kc
