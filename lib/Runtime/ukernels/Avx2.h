//===- Avx2.h - Vector traits: AVX2 and FMA, 8 floats -----------*- C++ -*-===//
//
// The operations of Lanes.h on __m256. Masked stores (vmaskmovps) are slow
// on some cores (Zen), so the AVX2 micro-kernels do without masks.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Unroll.h"

#include <immintrin.h>

/// The register type, the lane count and the operations of Lanes.h that
/// AVX2 and AVX-512 spell alike but for the intrinsics' prefix P (_mm256,
/// _mm512) and the register width W: one source for both.
#define KC_UK_X86_LANE_OPS(P, W)                                                                   \
  using V = __m##W;                                                                                \
  static constexpr int kLanes = W / 32;                                                            \
  static KC_UK_INLINE V zero() { return P##_setzero_ps(); }                                        \
  static KC_UK_INLINE V set1(float x) { return P##_set1_ps(x); }                                   \
  static KC_UK_INLINE V load(const float *p) { return P##_loadu_ps(p); }                           \
  static KC_UK_INLINE void store(float *p, V a) { P##_storeu_ps(p, a); }                           \
  static KC_UK_INLINE V add(V a, V b) { return P##_add_ps(a, b); }                                 \
  static KC_UK_INLINE V sub(V a, V b) { return P##_sub_ps(a, b); }                                 \
  static KC_UK_INLINE V mul(V a, V b) { return P##_mul_ps(a, b); }                                 \
  static KC_UK_INLINE V div(V a, V b) { return P##_div_ps(a, b); }                                 \
  static KC_UK_INLINE V fma(V a, V b, V c) { return P##_fmadd_ps(a, b, c); }                       \
  static KC_UK_INLINE V fnma(V a, V b, V c) { return P##_fnmadd_ps(a, b, c); }                     \
  static KC_UK_INLINE V max(V a, V b) { return P##_max_ps(a, b); }                                 \
  static KC_UK_INLINE V min(V a, V b) { return P##_min_ps(a, b); }                                 \
  /* 2^k for integral k: k + 127 in the exponent bits. */                                          \
  static KC_UK_INLINE V pow2(V k) {                                                                \
    __m##W##i e = P##_add_epi32(P##_cvtps_epi32(k), P##_set1_epi32(127));                          \
    return P##_castsi##W##_ps(P##_slli_epi32(e, 23));                                              \
  }

namespace kc::uk::KC_UK_ISA {

struct Avx2 {
  KC_UK_X86_LANE_OPS(_mm256, 256)
  static KC_UK_INLINE V broadcast(const float *p) { return _mm256_broadcast_ss(p); }
  static constexpr bool kFastMasks = false;
  using Narrow = Avx2;
  /// The 8-lane form with fast masks, if any (void: none).
  using ShortMasked = void;

  static KC_UK_INLINE V maxNaN(V m, V x) {
    // maxps returns its second operand when either is NaN.
    return _mm256_blendv_ps(_mm256_max_ps(m, x), m, _mm256_cmp_ps(m, m, _CMP_UNORD_Q));
  }
  static KC_UK_INLINE V selectPositive(V x, V ifPositive, V otherwise) {
    return _mm256_blendv_ps(otherwise, ifPositive, _mm256_cmp_ps(x, zero(), _CMP_GT_OQ));
  }
  static KC_UK_INLINE V evenLanes(V a, V c) {
    __m256 t = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), 0xD8));
  }
  static KC_UK_INLINE V oddLanes(V a, V c) {
    __m256 t = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(3, 1, 3, 1));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), 0xD8));
  }

  static KC_UK_INLINE void transpose8x8(V r[8]) {
    __m256 u[8], w[8];
    for (int i = 0; i < 4; ++i) {
      u[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      u[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; ++i)
      for (int h = 0; h < 2; ++h) {
        __m256 a = u[4 * i + h], b = u[4 * i + 2 + h];
        w[4 * i + 2 * h] = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 1, 0));
        w[4 * i + 2 * h + 1] = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 2, 3, 2));
      }
    for (int j = 0; j < 4; ++j) {
      r[j] = _mm256_permute2f128_ps(w[j], w[4 + j], 0x20);
      r[4 + j] = _mm256_permute2f128_ps(w[j], w[4 + j], 0x31);
    }
  }
  static KC_UK_INLINE void storeTransposed4(const V o[4], float *dst) {
    __m256 ab0 = _mm256_unpacklo_ps(o[0], o[1]), ab1 = _mm256_unpackhi_ps(o[0], o[1]);
    __m256 cd0 = _mm256_unpacklo_ps(o[2], o[3]), cd1 = _mm256_unpackhi_ps(o[2], o[3]);
    // Per 128-bit half: tiles (0,4), (1,5), (2,6), (3,7) as a b c d.
    __m256 t0 = _mm256_shuffle_ps(ab0, cd0, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 t1 = _mm256_shuffle_ps(ab0, cd0, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 t2 = _mm256_shuffle_ps(ab1, cd1, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 t3 = _mm256_shuffle_ps(ab1, cd1, _MM_SHUFFLE(3, 2, 3, 2));
    _mm256_storeu_ps(dst, _mm256_permute2f128_ps(t0, t1, 0x20));
    _mm256_storeu_ps(dst + 8, _mm256_permute2f128_ps(t2, t3, 0x20));
    _mm256_storeu_ps(dst + 16, _mm256_permute2f128_ps(t0, t1, 0x31));
    _mm256_storeu_ps(dst + 24, _mm256_permute2f128_ps(t2, t3, 0x31));
  }
};

} // namespace kc::uk::KC_UK_ISA
