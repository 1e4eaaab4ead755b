//===- SoftmaxRow.h - Softmax of one contiguous row -------------*- C++ -*-===//
//
// nn.Softmax, nn.LogSoftmax and the attention kernels' weights: the
// maximum subtracted, the exponentials times the reciprocal of their sum,
// as PyTorch. exp is the micro-kernels' (2 ulp of std::exp) in vectors,
// where a call to std::exp per value cost ~4 ns.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../ukernels/MicroKernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace kc::rt {

/// y = softmax(sign * x) over `n` values (`y` may be `x`); with `log`,
/// log-softmax instead. A NaN makes the row NaN (through the sum), a row
/// of -inf too, as in PyTorch. The maximum runs in 8 lanes (one running
/// value would serialize it), the exponentials and their sum in the
/// micro-kernel f32_exp_sum.
inline void softmaxRow(const float *x, float *y, int64_t n, float sign = 1.f, bool log = false) {
  constexpr int64_t L = 8;
  float lanes[L];
  std::fill(lanes, lanes + L, -INFINITY);
  int64_t j = 0;
  for (; j + L <= n; j += L)
    for (int64_t k = 0; k < L; ++k)
      lanes[k] = std::max(lanes[k], sign * x[j + k]);
  float m = -INFINITY;
  for (int64_t k = 0; k < L; ++k)
    m = std::max(m, lanes[k]);
  for (; j < n; ++j)
    m = std::max(m, sign * x[j]);
  // log-softmax keeps x in y until the end: the exponentials are only summed.
  float sum = uk::microKernels().expSum(x, log ? nullptr : y, n, sign, m);
  if (log) {
    float ls = std::log(sum) + m;
    for (int64_t i = 0; i < n; ++i)
      y[i] = sign * x[i] - ls;
    return;
  }
  float inv = 1.f / sum;
  for (int64_t i = 0; i < n; ++i)
    y[i] *= inv;
}

} // namespace kc::rt
