//===- RowReduce.h - Row kernels: max pool, moments, exp sums ---*- C++ -*-===//
#pragma once

#include "MicroKernels.h"
#include "ScalarMath.h"
#include "Unroll.h"
#include "VecMath.h"

namespace kc::uk::KC_UK_ISA {

/// MaxRowStride2Fn: a vector of outputs a step, the window's even and odd
/// columns split out of two vectors; the last step overlaps the one before
/// it, a row shorter than a vector goes through a buffer.
template <class T> void f32_maxpool_row_s2(const float *t, float *row, int64_t OW, int64_t kw) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  for (int64_t step = 0; step < OW; step += L) {
    int64_t ow = maxOf<int64_t>(0, minOf<int64_t>(step, OW - L));
    const float *q = t + 2 * ow;
    V a = T::load(q), c = T::load(q + L);
    V m = T::maxNaN(T::evenLanes(a, c), T::oddLanes(a, c));
    if (kw == 3)
      m = T::maxNaN(m, T::evenLanes(T::load(q + 2), T::load(q + L + 2)));
    storeFirst<T>(row + ow, m, OW >= L, OW);
  }
}

/// MeanVarianceFn: 8 floats per step into 8 double accumulators (one
/// running sum would wait on each add in turn: tiny_transformer's
/// LayerNorms over rows of 64 took 10 % of it), accumulators 0-3 and 4-7
/// added pairwise at the end.
template <class T> void f32_mean_variance(const float *x, int64_t n, double *mean, double *var) {
  double acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j)
      acc[j] += double(x[i + j]);
  double lanes[4];
  for (int j = 0; j < 4; ++j)
    lanes[j] = acc[j] + acc[j + 4];
  double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  for (; i < n; ++i)
    sum += x[i];
  const double m = sum / double(n);
  for (int j = 0; j < 8; ++j)
    acc[j] = 0.0;
  i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) {
      double d = double(x[i + j]) - m;
      acc[j] = __builtin_fma(d, d, acc[j]);
    }
  for (int j = 0; j < 4; ++j)
    lanes[j] = acc[j] + acc[j + 4];
  double sq = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  for (; i < n; ++i)
    sq += (x[i] - m) * (x[i] - m);
  *mean = m;
  *var = sq / double(n);
}

/// ExpSumFn: e[i] = exp(sign * x[i] - shift) (0 where that is below
/// kExpMin, so -inf gives 0), written to `e` unless null; returns the sum
/// of the e[i], in lanes, then the tail.
template <class T>
float f32_exp_sum(const float *x, float *e, int64_t n, float sign, float shift) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  const V s = T::set1(sign), m = T::set1(shift), lo = T::set1(kExpMin), zero = T::zero();
  V acc = zero;
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    V d = T::sub(T::mul(s, T::load(x + i)), m);
    V v = T::selectPositive(T::sub(lo, d), zero, vexp<T>(d));
    if (e)
      T::store(e + i, v);
    acc = T::add(acc, v);
  }
  float lanes[L];
  T::store(lanes, acc);
  float sum = 0;
  for (int k = 0; k < L; ++k)
    sum += lanes[k];
  for (; i < n; ++i) {
    float d = sign * x[i] - shift;
    float v = d < kExpMin ? 0.f : expApprox(d);
    if (e)
      e[i] = v;
    sum += v;
  }
  return sum;
}

} // namespace kc::uk::KC_UK_ISA
