//===- Epilogue.cpp - Bias and activation after a kernel's product --------===//
#include "Epilogue.h"
#include "../ukernels/MicroKernels.h"

namespace kc::rt {

void biasActivationRow(float *p, int64_t n, float bias, Act act, float slope) {
  if (act == Act::None && bias == 0.f)
    return;
  uk::microKernels().biasAct[int(act)][0](p, n, &bias, slope);
}

void rowBiasActivation(float *p, int64_t n, const float *bias, Act act, float slope) {
  if (bias)
    return uk::microKernels().biasAct[int(act)][1](p, n, bias, slope);
  if (act != Act::None)
    biasActivationRow(p, n, 0.f, act, slope);
}

void biasActivation(float *data, int64_t rows, int64_t cols, const float *bias, Act act,
                    float slope) {
  if (!bias && act == Act::None)
    return;
  parallelFor(rows, rows * cols > 65536, [&](int64_t r) {
    biasActivationRow(data + r * cols, cols, bias ? bias[r] : 0.f, act, slope);
  });
}

} // namespace kc::rt
