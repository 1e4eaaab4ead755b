//===- Epilogue.h - f32_bias_act: bias and activation over a row -*- C++ -*-===//
#pragma once

#include "MicroKernels.h"
#include "ScalarMath.h"
#include "Unroll.h"
#include "VecMath.h"

namespace kc::uk::KC_UK_ISA {

/// BiasActFn: p[j] = act(p[j] + bias) with one bias for the row
/// (PerElement false, bias[0]) or one per value (bias[j]), a vector at a
/// time, the tail through lane masks where they are fast, else one by one.
template <class T, Act A, bool PerElement>
void f32_bias_act(float *p, int64_t n, const float *bias, float slope) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  int64_t j = 0;
  const V b = PerElement ? T::zero() : T::set1(bias[0]);
  for (; j + L <= n; j += L) {
    V v = T::add(T::load(p + j), PerElement ? T::load(bias + j) : b);
    T::store(p + j, vact<T, A>(v, slope));
  }
  if constexpr (T::kFastMasks) {
    if (j < n) {
      auto m = T::firstLanes(n - j);
      V v = T::add(T::maskLoad(m, p + j), PerElement ? T::maskLoad(m, bias + j) : b);
      T::maskStore(p + j, m, vact<T, A>(v, slope));
    }
    return;
  }
  for (; j < n; ++j)
    p[j] = applyAct(A, p[j] + bias[PerElement ? j : 0], slope);
}

} // namespace kc::uk::KC_UK_ISA
