//===- Epilogue.h - Bias and activation after a kernel's product -*- C++ -*-===//
#pragma once

#include "../ukernels/ScalarMath.h"
#include "Parallel.h"
#include "kc/Runtime/Activation.h"
#include "kc/Runtime/ExprKernel.h"
#include "kc/Runtime/OpKernel.h"

#include <cstdint>

namespace kc::rt {

using uk::applyAct;
using uk::expApprox;

/// Adds `bias` to `n` values and applies `act`, in place (f32_bias_act).
void biasActivationRow(float *p, int64_t n, float bias, Act act, float slope);

/// p[j] = act(p[j] + bias[j]) for j < n (bias may be null): a linear
/// layer's epilogue, one bias per output feature.
void rowBiasActivation(float *p, int64_t n, const float *bias, Act act, float slope);

/// What a kernel applies to each block of its output `y` as it stores it:
/// the bias, then a fused expression (reading `operands`), then the
/// activation.
struct BlockEpilogue {
  float *y = nullptr;
  const OutputExpression *expr = nullptr;
  KernelInputs operands;
  Act act = Act::None;
  float slope = 0.f;

  /// The activation a loop may apply itself as it stores a value: none
  /// when an expression comes between.
  Act storeAct() const { return expr ? Act::None : act; }
  /// The operand the expression only adds to y (OutputExpression::
  /// addedOperand), or null.
  const float *addend() const {
    int i = expr ? expr->addedOperand() : -1;
    return i < 0 ? nullptr : operands[size_t(i)]->data<float>();
  }
  /// This epilogue for a loop that adds addend() itself: the activation
  /// then comes after it, and no expression is left.
  BlockEpilogue withoutAddend() const {
    BlockEpilogue e = *this;
    e.expr = nullptr;
    e.operands = {};
    return e;
  }

  /// The whole epilogue on `rows` × `cols` values at `block` (a part of y,
  /// rows `ld` apart), a bias per row (or none); over the threads when
  /// there is enough work and no region runs already.
  void operator()(float *block, int64_t rows, int64_t cols, int64_t ld, const float *bias) const;

  /// The expression and the activation on a block stored with its bias
  /// and storeAct() applied already, on the calling thread: nothing
  /// without an expression.
  void afterStore(float *block, int64_t rows, int64_t cols, int64_t ld) const {
    if (!expr)
      return;
    if (ld == cols) // one run: the expression's cost is per run as well as per value
      return onRow(block, rows * cols, 0.f);
    for (int64_t r = 0; r < rows; ++r)
      onRow(block + r * ld, cols, 0.f);
  }

private:
  void onRow(float *row, int64_t cols, float bias) const;
};

/// Kernels that take a following activation into their epilogue and,
/// where every path ends in a BlockEpilogue (`takesExpression_`), an
/// elementwise expression before it.
class FusableKernel : public OpKernel {
public:
  bool fuseActivation(const Activation &a) override {
    if (act_ != Act::None)
      return false;
    act_ = a.kind;
    slope_ = a.slope;
    return true;
  }

  bool fuseExpression(std::unique_ptr<OutputExpression> &e, unsigned firstOperand) override {
    if (!takesExpression_ || expr_ || act_ != Act::None)
      return false;
    expr_ = std::move(e);
    firstOperand_ = firstOperand;
    return true;
  }

protected:
  /// This run's epilogue for output `y`, the expression's operands from
  /// the run's inputs.
  BlockEpilogue epilogue(float *y, KernelInputs in) const {
    return {y, expr_.get(), expr_ ? in.drop_front(firstOperand_) : KernelInputs(), act_, slope_};
  }

  Act act_ = Act::None;
  float slope_ = 0.f;
  bool takesExpression_ = false;
  std::shared_ptr<const OutputExpression> expr_;
  unsigned firstOperand_ = 0;
};

} // namespace kc::rt
