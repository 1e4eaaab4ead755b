//===- kc/Pass/PatternMatch.h - Matching calls in passes --------*- C++ -*-===//
///
/// \file
/// The small questions the passes that recognize chains of calls
/// (fuse-attention, fuse-layer-norm) ask of a node.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/AttrOperands.h"
#include "kc/IR/Op.h"

#include <optional>

namespace kc {

/// `e` if it is a call of op or expression function `name` (an alias
/// counts) with `arity` operands (-1: any) and no attribute operands.
inline const CallNode *callTo(const ExprNode *e, llvm::StringRef name, int arity = -1) {
  auto *c = llvm::dyn_cast_or_null<CallNode>(e);
  return c && isCallTo(c, name) && (arity < 0 || c->numArgs() == size_t(arity)) &&
                 !hasAttrOperands(*c)
             ? c
             : nullptr;
}

/// `e`'s type if it is a static f32 tensor, else null.
inline const TensorTypeNode *staticF32(const ExprNode *e) {
  auto *t = e ? llvm::dyn_cast_or_null<TensorTypeNode>(e->type().get()) : nullptr;
  return t && t->dtype() == DType::F32 && t->isStatic() ? t : nullptr;
}

/// The value of a scalar number literal, else nullopt.
inline std::optional<double> scalarLiteral(const ExprNode *e) {
  auto *k = llvm::dyn_cast_or_null<ConstantNode>(e);
  if (!k || !k->isScalar() || !k->scalar().isNumber())
    return std::nullopt;
  return k->scalar().getNumber();
}

/// The expression function (a primitive function with one parameter per
/// operand) that call `c` runs, else null.
inline const FunctionNode *expressionOf(const CallNode &c, const Module &m) {
  const FunctionNode *f = m.callee(c);
  return f && f->isPrimitive() && f->params().size() == c.numArgs() ? f : nullptr;
}

} // namespace kc
