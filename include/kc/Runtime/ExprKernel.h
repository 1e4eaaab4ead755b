//===- kc/Runtime/ExprKernel.h - Expression programs at run time -*- C++ -*-===//
///
/// \file
/// Runs a primitive expression function (a `pnnx.Expression`) as its
/// reverse-Polish program on a stack machine, block by block: each block of
/// output elements goes through the whole program in cache-sized scratch
/// rows, with NumPy broadcasting of the operands, instead of one temporary
/// tensor per operator.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Rpn.h"
#include "kc/Runtime/OpKernel.h"

#include <optional>

namespace kc::rt {

/// A kernel for `call`, whose callee is the primitive function `fn`.
llvm::Expected<std::unique_ptr<OpKernel>> makeExprKernel(const CallNode &call,
                                                         const FunctionNode &fn,
                                                         const KernelBuildContext &ctx);

/// An expression kernel run in place on the output of the kernel that
/// computes one of its operands, a block at a time as that kernel stores
/// it, so the value between the two is never written and read back (a
/// residual sum after a convolution).
class OutputExpression {
public:
  virtual ~OutputExpression() = default;
  /// y[begin, begin + n) = act(f(...)), the producer's operand read from
  /// y itself (the expression's result has its shape); `operands` are the
  /// expression's other operands, in order.
  virtual void apply(float *y, int64_t begin, int64_t n, KernelInputs operands, Act act,
                     float slope) const = 0;
  /// The index in `operands` of one the expression only adds to y, element
  /// for element and laid out as y (a residual): a producer may add it in
  /// registers before it stores, and apply nothing. -1 for any other.
  virtual int addedOperand() const { return -1; }
};

/// `k`, an expression kernel, as an OutputExpression on its operand `arg`;
/// null where it cannot be one: a result that is not f32, an operand that
/// is not f32, the operand `arg` not of the result's shape, an activation
/// taken already, or a program that needs more scratch than a block's.
std::unique_ptr<OutputExpression> makeOutputExpression(const OpKernel &k, unsigned arg);

/// The operands of an expression kernel computing x * s per channel
/// (matchChannelScale: the gate of a squeeze-and-excitation block), in
/// f32 and with no activation: the kernel that reads the product may scale
/// its input as it reads it instead.
std::optional<ChannelScaleOperands> channelScale(const OpKernel &k);

} // namespace kc::rt
