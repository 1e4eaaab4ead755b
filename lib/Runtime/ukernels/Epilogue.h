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

/// act over n values in place, act chosen at run time (not None).
template <class T> void biasActInPlace(float *p, int64_t n, Act act, float slope) {
  const float zero = 0.f;
  switch (act) {
  case Act::None: return;
  case Act::Relu: return f32_bias_act<T, Act::Relu, false>(p, n, &zero, slope);
  case Act::Relu6: return f32_bias_act<T, Act::Relu6, false>(p, n, &zero, slope);
  case Act::Silu: return f32_bias_act<T, Act::Silu, false>(p, n, &zero, slope);
  case Act::Sigmoid: return f32_bias_act<T, Act::Sigmoid, false>(p, n, &zero, slope);
  case Act::Hardswish: return f32_bias_act<T, Act::Hardswish, false>(p, n, &zero, slope);
  case Act::LeakyRelu: return f32_bias_act<T, Act::LeakyRelu, false>(p, n, &zero, slope);
  case Act::Gelu:
    return f32_bias_act<T, Act::Gelu, false>(p, n, &zero, slope);
  case Act::GeluTanh:
    return f32_bias_act<T, Act::GeluTanh, false>(p, n, &zero, slope);
  }
}

/// A depthwise loop's activation over n values in place (e.clampOnly
/// false): e.activate if set, else on T.
template <class T> void depthwiseActivate(const DepthwiseEpilogue &e, float *p, int64_t n) {
  const float zero = 0.f;
  if (e.activate)
    return e.activate(p, n, &zero, e.slope);
  biasActInPlace<T>(p, n, e.act, e.slope);
}

} // namespace kc::uk::KC_UK_ISA
