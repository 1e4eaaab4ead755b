//===- RowReduce.h - Row kernels: max pool, moments, exp sums ---*- C++ -*-===//
#pragma once

#include "MicroKernels.h"
#include "ScalarMath.h"
#include "Unroll.h"
#include "VecMath.h"

namespace kc::uk::KC_UK_ISA {

/// A pool's running value and one more tap: the maximum (NaN where either
/// is) or the sum.
template <class T, bool IsMax>
KC_UK_INLINE typename T::V poolTake(typename T::V a, typename T::V x) {
  if constexpr (IsMax)
    return T::maxNaN(a, x);
  else
    return T::add(a, x);
}

/// f32_pool_row at stride S, its fields in registers (read through the
/// reference, they were loaded again after every store).
template <class T, bool IsMax, int S>
KC_UK_INLINE void poolRowAtStride(const float *t, float *row, int64_t OW, int64_t K, int64_t D,
                                  const float *counts, float rowCount) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  auto tap = [&](const float *q) {
    if constexpr (S == 1)
      return T::load(q);
    else
      return T::evenLanes(T::load(q), T::load(q + L));
  };
  // Four vectors a step: four chains of taps at once (one waited on each
  // of its taps in turn).
  int64_t step = 0;
  for (; step + 4 * L <= OW; step += 4 * L) {
    const float *q = t + S * step;
    V a[4];
    unroll<4>([&](auto j) { a[j] = tap(q + j * S * L); });
    for (int64_t k = 1; k < K; ++k)
      unroll<4>([&](auto j) { a[j] = poolTake<T, IsMax>(a[j], tap(q + k * D + j * S * L)); });
    unroll<4>([&](auto j) {
      if (counts)
        a[j] = T::div(a[j], T::mul(T::set1(rowCount), T::load(counts + step + j * L)));
      T::store(row + step + j * L, a[j]);
    });
  }
  for (; step < OW; step += L) {
    int64_t ow = maxOf<int64_t>(0, minOf<int64_t>(step, OW - L));
    const float *q = t + S * ow;
    V a = tap(q);
    for (int64_t k = 1; k < K; ++k)
      a = poolTake<T, IsMax>(a, tap(q + k * D));
    if (counts)
      a = T::div(a, T::mul(T::set1(rowCount), T::load(counts + ow)));
    storeFirst<T>(row + ow, a, OW >= L, OW);
  }
}

/// f32_pool_row at stride 2 over 2 or 3 adjacent columns: the even and
/// the odd lanes of one pair of loads are the first two taps.
template <class T, bool IsMax>
KC_UK_INLINE void poolRowStride2Adjacent(const float *t, float *row, int64_t OW, bool third,
                                         const float *counts, float rowCount) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  for (int64_t step = 0; step < OW; step += L) {
    int64_t ow = maxOf<int64_t>(0, minOf<int64_t>(step, OW - L));
    const float *q = t + 2 * ow;
    V a = T::load(q), c = T::load(q + L);
    V m = poolTake<T, IsMax>(T::evenLanes(a, c), T::oddLanes(a, c));
    if (third)
      m = poolTake<T, IsMax>(m, T::evenLanes(T::load(q + 2), T::load(q + L + 2)));
    if (counts)
      m = T::div(m, T::mul(T::set1(rowCount), T::load(counts + ow)));
    storeFirst<T>(row + ow, m, OW >= L, OW);
  }
}

/// PoolRowFn: a vector of outputs a step, each tap one load at stride 1
/// and, at stride 2, the even lanes of two (the window's columns split out
/// in registers); the last step overlaps the one before it, a row shorter
/// than a vector goes through a buffer.
template <class T, bool IsMax> void f32_pool_row(const float *t, float *row, const PoolRow &r) {
  if (r.S == 2 && r.D == 1 && (r.K == 2 || r.K == 3))
    poolRowStride2Adjacent<T, IsMax>(t, row, r.OW, r.K == 3, r.counts, r.rowCount);
  else if (r.S == 1)
    poolRowAtStride<T, IsMax, 1>(t, row, r.OW, r.K, r.D, r.counts, r.rowCount);
  else
    poolRowAtStride<T, IsMax, 2>(t, row, r.OW, r.K, r.D, r.counts, r.rowCount);
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
