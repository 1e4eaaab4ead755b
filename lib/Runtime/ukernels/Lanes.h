//===- Lanes.h - Portable vector traits: N floats in an array ---*- C++ -*-===//
//
// The vector-traits type of the scalar micro-kernels (Lanes<8, false>,
// which give the same tiles as the AVX2 ones) and of the tests' emulated
// AVX-512 (Lanes<16, true>, masks as bits): plain loops over plain arrays,
// which define what every intrinsic form (Avx2.h, Avx512.h) must compute.
// fma is fused (__builtin_fmaf), as the hardware's is.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Unroll.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kc::uk::KC_UK_ISA {

/// GCC's generic vectors of N floats (a dependent vector_size is not
/// accepted on a typedef inside a template).
template <int N> struct LaneVector;
template <> struct LaneVector<8> {
  typedef float type __attribute__((vector_size(32)));
};
template <> struct LaneVector<16> {
  typedef float type __attribute__((vector_size(64)));
};

template <int N, bool FastMasks> struct Lanes {
  static constexpr int kLanes = N;
  /// Whether masked loads and stores are as fast as plain ones.
  static constexpr bool kFastMasks = FastMasks;
  /// The 8-lane form, for the micro-kernels written for 8 lanes.
  using Narrow = Lanes<8, false>;
  /// The 8-lane form with fast masks, if any (void: none).
  using ShortMasked = std::conditional_t<FastMasks && N != 8, Lanes<8, true>, void>;
  /// GCC's generic vectors: +, -, * and / lane by lane, a scalar operand
  /// applying to every lane; values, never memory, so that sanitizers do
  /// not instrument every lane (arrays of floats made instrumented builds
  /// take minutes a file).
  using V = typename LaneVector<N>::type;
  using Mask = uint32_t;

#define KC_LANES_MAP(EXPR)                                                                         \
  V r;                                                                                             \
  for (int i = 0; i < N; ++i)                                                                      \
    r[i] = (EXPR);                                                                                 \
  return r;

  static KC_UK_INLINE V zero() { return V{}; }
  static KC_UK_INLINE V set1(float x) { return V{} + x; }
  static KC_UK_INLINE V load(const float *p) {
    V r = {};
    std::memcpy(&r, p, sizeof r);
    return r;
  }
  static KC_UK_INLINE V broadcast(const float *p) { return set1(*p); }
  static KC_UK_INLINE void store(float *p, V a) { std::memcpy(p, &a, sizeof a); }
  static KC_UK_INLINE V add(V a, V b) { return a + b; }
  static KC_UK_INLINE V sub(V a, V b) { return a - b; }
  static KC_UK_INLINE V mul(V a, V b) { return a * b; }
  static KC_UK_INLINE V div(V a, V b) { return a / b; }
  /// a·b + c, rounded once.
  static KC_UK_INLINE V fma(V a, V b, V c) { KC_LANES_MAP(__builtin_fmaf(a[i], b[i], c[i])) }
  /// c - a·b, rounded once.
  static KC_UK_INLINE V fnma(V a, V b, V c) { KC_LANES_MAP(__builtin_fmaf(-a[i], b[i], c[i])) }
  /// As maxps/minps: the second operand where the two are equal or either
  /// is NaN.
  static KC_UK_INLINE V max(V a, V b) { KC_LANES_MAP(a[i] > b[i] ? a[i] : b[i]) }
  static KC_UK_INLINE V min(V a, V b) { KC_LANES_MAP(a[i] < b[i] ? a[i] : b[i]) }
  /// max lane by lane, NaN where either is.
  static KC_UK_INLINE V maxNaN(V m, V x) {
    KC_LANES_MAP(m[i] != m[i] ? m[i] : m[i] > x[i] ? m[i] : x[i])
  }
  /// ifPositive where x > 0, else otherwise.
  static KC_UK_INLINE V selectPositive(V x, V ifPositive, V otherwise) {
    KC_LANES_MAP(x[i] > 0.f ? ifPositive[i] : otherwise[i])
  }
  /// 2^k for integer-valued k (as float bits (k + 127) << 23). A NaN k
  /// (vexp of NaN, which gives NaN through its polynomial) counts as 0:
  /// converting NaN to int is undefined here, where the x86 forms'
  /// conversion instruction defines it.
  static KC_UK_INLINE V pow2(V k) {
    V r = {};
    for (int i = 0; i < N; ++i) {
      int32_t bits = int32_t(uint32_t(int32_t(k[i] == k[i] ? k[i] : 0.f) + 127) << 23);
      float f;
      std::memcpy(&f, &bits, sizeof f);
      r[i] = f;
    }
    return r;
  }
  /// The even-indexed (odd-indexed) floats of a:c (2N consecutive), in order.
  static KC_UK_INLINE V evenLanes(V a, V c) { KC_LANES_MAP(2 * i < N ? a[2 * i] : c[2 * i - N]) }
  static KC_UK_INLINE V oddLanes(V a, V c) {
    KC_LANES_MAP(2 * i + 1 < N ? a[2 * i + 1] : c[2 * i + 1 - N])
  }
  /// Lanes S.. of lo, then the first S of hi.
  template <int S> static KC_UK_INLINE V alignr(V hi, V lo) {
    KC_LANES_MAP(i + S < N ? lo[i + S] : hi[i + S - N])
  }

  /// The first n lanes (none for n ≤ 0, all for n ≥ N).
  static KC_UK_INLINE Mask firstLanes(int64_t n) {
    return n >= N ? Mask((uint64_t(1) << N) - 1) : n <= 0 ? Mask(0) : Mask((uint64_t(1) << n) - 1);
  }
  static KC_UK_INLINE Mask andNot(Mask a, Mask b) { return Mask(a & ~b); }
  /// Lanes of m from p, zero elsewhere; other lanes are not read.
  static KC_UK_INLINE V maskLoad(Mask m, const float *p) {
    V r = zero();
    for (int i = 0; i < N; ++i)
      if ((m >> i) & 1)
        r[i] = p[i];
    return r;
  }
  static KC_UK_INLINE void maskStore(float *p, Mask m, V a) {
    for (int i = 0; i < N; ++i)
      if ((m >> i) & 1)
        p[i] = a[i];
  }

  /// Transposes N rows of N floats in place; the names of the intrinsic
  /// forms, for 8 and 16 lanes.
  static KC_UK_INLINE void transposeSquare(V r[N]) {
    float a[N * N], t[N * N];
    std::memcpy(a, r, sizeof a);
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j)
        t[N * j + i] = a[N * i + j];
    std::memcpy(r, t, sizeof t);
  }
  static KC_UK_INLINE void transpose8x8(V r[8]) {
    static_assert(N == 8);
    transposeSquare(r);
  }
  static KC_UK_INLINE void transpose16x16(V r[16]) {
    static_assert(N == 16);
    transposeSquare(r);
  }
  /// Writes o[k] lane t as dst[4t + k]: 4 rows of 8 transposed into 32
  /// floats (8-lane forms only).
  static KC_UK_INLINE void storeTransposed4(const V o[4], float *dst) {
    static_assert(N == 8);
    for (int t = 0; t < 8; ++t)
      for (int k = 0; k < 4; ++k)
        dst[4 * t + k] = o[k][t];
  }
#undef KC_LANES_MAP
};

} // namespace kc::uk::KC_UK_ISA
