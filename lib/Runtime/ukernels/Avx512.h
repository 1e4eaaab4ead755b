//===- Avx512.h - Vector traits: AVX-512 F/DQ/BW/VL, 16 floats --*- C++ -*-===//
//
// The operations of Lanes.h on __m512 and __mmask16, masked loads and
// stores included (fast on every AVX-512 core). The 8-lane micro-kernels
// take Avx2.h's forms, compiled here with the AVX-512 flags.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Avx2.h"

#include <immintrin.h>

// GCC 12's AVX-512 min, max, alignr and conversion intrinsics start from
// _mm512_undefined_*, which -Wmaybe-uninitialized (and, for an alignr of
// two constants, -Wuninitialized) reports once inlined (GCC bug 105593,
// fixed in GCC 13).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace kc::uk::KC_UK_ISA {

struct Avx512Ymm;

struct Avx512 {
  using Mask = __mmask16;
  KC_UK_X86_LANE_OPS(_mm512, 512)
  static KC_UK_INLINE V broadcast(const float *p) { return _mm512_set1_ps(*p); }
  static constexpr bool kFastMasks = true;
  using Narrow = Avx2;
  using ShortMasked = Avx512Ymm;

  static KC_UK_INLINE V maxNaN(V m, V x) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(m, m, _CMP_UNORD_Q), _mm512_max_ps(m, x), m);
  }
  static KC_UK_INLINE V selectPositive(V x, V ifPositive, V otherwise) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, zero(), _CMP_GT_OQ), otherwise, ifPositive);
  }
  static KC_UK_INLINE V evenLanes(V a, V c) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(a, even, c);
  }
  static KC_UK_INLINE V oddLanes(V a, V c) {
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    return _mm512_permutex2var_ps(a, odd, c);
  }

  /// Lanes N.. of lo, then the first N of hi.
  template <int N> static KC_UK_INLINE V alignr(V hi, V lo) {
    return _mm512_castsi512_ps(
        _mm512_alignr_epi32(_mm512_castps_si512(hi), _mm512_castps_si512(lo), N));
  }

  /// Transposes 16 rows of 16 floats in place: 4x4 blocks within each
  /// 128-bit lane by unpacks, then the lanes by two rounds of shuffles.
  static KC_UK_INLINE void transpose16x16(V r[16]) {
    V s[16];
    for (int g = 0; g < 4; ++g) {
      V t0 = _mm512_unpacklo_ps(r[4 * g], r[4 * g + 1]);
      V t1 = _mm512_unpackhi_ps(r[4 * g], r[4 * g + 1]);
      V t2 = _mm512_unpacklo_ps(r[4 * g + 2], r[4 * g + 3]);
      V t3 = _mm512_unpackhi_ps(r[4 * g + 2], r[4 * g + 3]);
      // Lane k of s[4g + j]: column 4k + j of rows 4g .. 4g + 3.
      s[4 * g] = pd(_mm512_unpacklo_pd(dp(t0), dp(t2)));
      s[4 * g + 1] = pd(_mm512_unpackhi_pd(dp(t0), dp(t2)));
      s[4 * g + 2] = pd(_mm512_unpacklo_pd(dp(t1), dp(t3)));
      s[4 * g + 3] = pd(_mm512_unpackhi_pd(dp(t1), dp(t3)));
    }
    for (int j = 0; j < 4; ++j) {
      V even01 = _mm512_shuffle_f32x4(s[j], s[4 + j], _MM_SHUFFLE(2, 0, 2, 0));
      V odd01 = _mm512_shuffle_f32x4(s[j], s[4 + j], _MM_SHUFFLE(3, 1, 3, 1));
      V even23 = _mm512_shuffle_f32x4(s[8 + j], s[12 + j], _MM_SHUFFLE(2, 0, 2, 0));
      V odd23 = _mm512_shuffle_f32x4(s[8 + j], s[12 + j], _MM_SHUFFLE(3, 1, 3, 1));
      r[j] = _mm512_shuffle_f32x4(even01, even23, _MM_SHUFFLE(2, 0, 2, 0));
      r[4 + j] = _mm512_shuffle_f32x4(odd01, odd23, _MM_SHUFFLE(2, 0, 2, 0));
      r[8 + j] = _mm512_shuffle_f32x4(even01, even23, _MM_SHUFFLE(3, 1, 3, 1));
      r[12 + j] = _mm512_shuffle_f32x4(odd01, odd23, _MM_SHUFFLE(3, 1, 3, 1));
    }
  }

  static KC_UK_INLINE Mask firstLanes(int64_t n) {
    return n >= 16 ? Mask(0xFFFF) : n <= 0 ? Mask(0) : Mask((1u << n) - 1);
  }
  static KC_UK_INLINE Mask andNot(Mask a, Mask b) { return Mask(a & ~b); }
  static KC_UK_INLINE V maskLoad(Mask m, const float *p) { return _mm512_maskz_loadu_ps(m, p); }
  static KC_UK_INLINE void maskStore(float *p, Mask m, V a) { _mm512_mask_storeu_ps(p, m, a); }

private:
  static KC_UK_INLINE __m512d dp(V a) { return _mm512_castps_pd(a); }
  static KC_UK_INLINE V pd(__m512d a) { return _mm512_castpd_ps(a); }
};

/// Avx2's 8 lanes with AVX-512VL's masked loads and stores: a 3x3
/// depthwise row of at most 8 outputs (a 7x7 plane) is one step read in
/// place, where 16 lanes would be more than half empty.
struct Avx512Ymm : Avx2 {
  using Mask = __mmask8;
  static constexpr bool kFastMasks = true;

  template <int N> static KC_UK_INLINE V alignr(V hi, V lo) {
    return _mm256_castsi256_ps(
        _mm256_alignr_epi32(_mm256_castps_si256(hi), _mm256_castps_si256(lo), N));
  }

  static KC_UK_INLINE Mask firstLanes(int64_t n) {
    return n >= 8 ? Mask(0xFF) : n <= 0 ? Mask(0) : Mask((1u << n) - 1);
  }
  static KC_UK_INLINE Mask andNot(Mask a, Mask b) { return Mask(a & ~b); }
  static KC_UK_INLINE V maskLoad(Mask m, const float *p) { return _mm256_maskz_loadu_ps(m, p); }
  static KC_UK_INLINE void maskStore(float *p, Mask m, V a) { _mm256_mask_storeu_ps(p, m, a); }
};

} // namespace kc::uk::KC_UK_ISA
