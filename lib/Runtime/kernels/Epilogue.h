//===- Epilogue.h - Bias and activation after a kernel's product -*- C++ -*-===//
#pragma once

#include "Parallel.h"
#include "../ukernels/ScalarMath.h"
#include "kc/Runtime/Activation.h"
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

/// Applies `act` (and a per-row bias) to `rows` × `cols` values in place.
void biasActivation(float *data, int64_t rows, int64_t cols, const float *bias, Act act,
                    float slope);

/// Kernels that take a following activation into their epilogue.
class FusableKernel : public OpKernel {
public:
  bool fuseActivation(const Activation &a) override {
    act_ = a.kind;
    slope_ = a.slope;
    return true;
  }

protected:
  Act act_ = Act::None;
  float slope_ = 0.f;
};

} // namespace kc::rt
