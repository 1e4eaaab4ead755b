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

/// ScalarMath.h's geluErf lane by lane.
template <class T> KC_UK_INLINE typename T::V vgeluErf(typename T::V x) {
  using V = typename T::V;
  const V zero = T::zero(), one = T::set1(1.f), half = T::set1(0.5f);
  V z = T::mul(x, T::set1(0.70710678118654752f));
  V a = T::max(z, T::sub(zero, z));
  V t = T::div(one, T::fma(T::set1(kErfP), a, one));
  V q = T::set1(kErfQ[0]);
  for (int i = 1; i < 5; ++i)
    q = T::fma(q, t, T::set1(kErfQ[i]));
  q = T::mul(T::mul(q, t), vexp<T>(T::sub(zero, T::mul(a, a))));
  V hx = T::mul(half, x);
  return T::selectPositive(z, T::mul(hx, T::sub(T::set1(2.f), q)), T::mul(hx, q));
}

/// ScalarMath.h's geluTanh lane by lane (tanh's sign of zero aside, which
/// 1 + tanh does not see).
template <class T> KC_UK_INLINE typename T::V vgeluTanh(typename T::V x) {
  using V = typename T::V;
  const V zero = T::zero(), one = T::set1(1.f);
  V x3 = T::mul(T::mul(x, x), x);
  V u = T::mul(T::set1(0.79788456080286536f), T::fma(T::set1(0.044715f), x3, x));
  V a = T::max(u, T::sub(zero, u)), a2 = T::mul(a, a);
  V small = T::fma(a2, T::set1(62.f / 2835), T::set1(-17.f / 315));
  small = T::fma(a2, small, T::set1(2.f / 15));
  small = T::fma(a2, small, T::set1(-1.f / 3));
  small = T::mul(a, T::fma(a2, small, one));
  V big = T::sub(one, T::div(T::set1(2.f), T::add(vexp<T>(T::add(a, a)), one)));
  V r = T::selectPositive(T::sub(T::set1(0.25f), a), small, big);
  V th = T::selectPositive(u, r, T::sub(zero, r));
  return T::mul(T::mul(T::set1(0.5f), x), T::add(one, th));
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
  else if constexpr (A == Act::Gelu)
    return vgeluErf<T>(x);
  else if constexpr (A == Act::GeluTanh)
    return vgeluTanh<T>(x);
  else
    return x;
}

} // namespace kc::uk::KC_UK_ISA
