//===- VecMath.h - exp and the activations over vector traits ---*- C++ -*-===//
//
// The activations a kernel applies in its epilogue, a vector at a time, so
// that SiLU and sigmoid cost a few instructions per vector instead of a
// scalar exp per value (yolo_small's SiLU took ~0.8 of its 3 ms). vexp is
// ScalarMath.h's expApprox (the same constants) lane by lane, with fused
// multiply-adds.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "MicroKernels.h"
#include "ScalarMath.h"
#include "Unroll.h"

namespace kc::uk::KC_UK_ISA {

/// min(hi, max(lo, x)), NaN kept: maxps and minps return their second
/// operand where either is NaN, so x goes second. As PyTorch, a clamped
/// activation (ReLU, ReLU6) maps NaN to NaN.
template <class T>
KC_UK_INLINE typename T::V vclamp(typename T::V x, typename T::V lo, typename T::V hi) {
  return T::min(hi, T::max(lo, x));
}

/// exp lane by lane: NaN stays NaN, above kExpMax is +inf (so that, as in
/// PyTorch, sigmoid(-inf) is 0 and silu(-inf) is NaN).
template <class T> KC_UK_INLINE typename T::V vexp(typename T::V x0) {
  using V = typename T::V;
  V x = vclamp<T>(x0, T::set1(kExpMin), T::set1(kExpMax));
  const V magic = T::set1(kExpRound);
  V k = T::sub(T::fma(x, T::set1(kLog2e), magic), magic);
  V r = T::fnma(k, T::set1(kLn2Hi), x);
  r = T::fma(k, T::set1(kLn2Lo), r);
  V p = T::set1(kExpPoly[0]);
  for (int i = 1; i < 6; ++i)
    p = T::fma(p, r, T::set1(kExpPoly[i]));
  p = T::fma(T::mul(p, r), r, T::add(r, T::set1(1.f)));
  V e = T::mul(p, T::pow2(k));
  return T::selectPositive(T::sub(x0, T::set1(kExpMax)), T::set1(__builtin_inff()), e);
}

/// act(x) lane by lane; the same function as applyAct.
template <class T, Act A> KC_UK_INLINE typename T::V vact(typename T::V x, float slope) {
  using V = typename T::V;
  const V zero = T::zero(), one = T::set1(1.f);
  if constexpr (A == Act::Relu)
    return T::max(zero, x);
  else if constexpr (A == Act::Relu6)
    return vclamp<T>(x, zero, T::set1(6.f));
  else if constexpr (A == Act::Silu)
    return T::div(x, T::add(one, vexp<T>(T::sub(zero, x))));
  else if constexpr (A == Act::Sigmoid)
    return T::div(one, T::add(one, vexp<T>(T::sub(zero, x))));
  else if constexpr (A == Act::Hardswish)
    return T::div(T::mul(x, T::min(T::max(T::add(x, T::set1(3.f)), zero), T::set1(6.f))),
                  T::set1(6.f));
  else if constexpr (A == Act::LeakyRelu)
    return T::selectPositive(x, x, T::mul(x, T::set1(slope)));
  else
    return x;
}

} // namespace kc::uk::KC_UK_ISA
