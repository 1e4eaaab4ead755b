//===- VecMath.h - Activations on 8 floats at a time ------------*- C++ -*-===//
//
// AVX2 forms of the activations a kernel applies in its epilogue, so that
// SiLU and sigmoid cost a few instructions per 8 values instead of a scalar
// exp per value (yolo_small's SiLU took ~0.8 of its 3 ms). exp8 is the same
// Cody-Waite reduction and Cephes polynomial as expApprox, lane by lane.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "KernelUtils.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define KC_HAVE_VEC8 1

namespace kc::rt {

inline __m256 exp8(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.33654f)), _mm256_set1_ps(88.37626f));
  const __m256 magic = _mm256_set1_ps(12582912.f);
  __m256 k = _mm256_sub_ps(_mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), magic), magic);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fmadd_ps(k, _mm256_set1_ps(2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.f)));
  __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127));
  __m256i bits = _mm256_slli_epi32(e, 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

/// act(x) on 8 lanes; the same function as applyAct.
inline __m256 act8(Act act, __m256 x, float slope) {
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.f);
  switch (act) {
  case Act::None: return x;
  case Act::Relu: return _mm256_max_ps(x, zero);
  case Act::Relu6: return _mm256_min_ps(_mm256_max_ps(x, zero), _mm256_set1_ps(6.f));
  case Act::Silu:
    return _mm256_div_ps(x, _mm256_add_ps(one, exp8(_mm256_sub_ps(zero, x))));
  case Act::Sigmoid: return _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(zero, x))));
  case Act::Hardswish: {
    __m256 t = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(x, _mm256_set1_ps(3.f)), zero),
                             _mm256_set1_ps(6.f));
    return _mm256_div_ps(_mm256_mul_ps(x, t), _mm256_set1_ps(6.f));
  }
  case Act::LeakyRelu:
    return _mm256_blendv_ps(_mm256_mul_ps(x, _mm256_set1_ps(slope)), x,
                            _mm256_cmp_ps(x, zero, _CMP_GT_OQ));
  }
  return x;
}

/// max(m, v) lane by lane, NaN where either is (as PyTorch's max pooling).
inline __m256 maxNaN8(__m256 m, __m256 v) {
  // maxps returns its second operand when either is NaN.
  __m256 r = _mm256_max_ps(m, v);
  return _mm256_blendv_ps(r, m, _mm256_cmp_ps(m, m, _CMP_UNORD_Q));
}

/// The even-indexed floats of a:c (16 consecutive floats), in order.
inline __m256 evenLanes(__m256 a, __m256 c) {
  __m256 t = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), 0xD8));
}

/// The odd-indexed floats of a:c, in order.
inline __m256 oddLanes(__m256 a, __m256 c) {
  __m256 t = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(3, 1, 3, 1));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), 0xD8));
}

} // namespace kc::rt

#endif

namespace kc::rt {

/// Copies n floats; with AVX2, by vector moves inline, the last one
/// overlapping the one before it: for the rows of 7 to 56 floats of small
/// planes, a memcpy call costs more than the copy, and masked stores are
/// slow on some cores.
inline void copyShortRow(float *dst, const float *src, int64_t n) {
#ifdef KC_HAVE_VEC8
  if (n >= 8) {
    for (int64_t i = 0; i + 8 < n; i += 8)
      _mm256_storeu_ps(dst + i, _mm256_loadu_ps(src + i));
    _mm256_storeu_ps(dst + n - 8, _mm256_loadu_ps(src + n - 8));
    return;
  }
  if (n >= 4) {
    __m128 head = _mm_loadu_ps(src), tail = _mm_loadu_ps(src + n - 4);
    _mm_storeu_ps(dst, head);
    _mm_storeu_ps(dst + n - 4, tail);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i)
    dst[i] = src[i];
}

/// Copies `rows` rows of n floats, srcStride and dstStride floats apart:
/// a plane into the middle of a zero-bordered one. Its arguments are
/// locals, which the vector stores (may-alias types) cannot clobber, so
/// nothing is reloaded per row as it would be from a lambda's captures.
inline void copyRows(float *dst, int64_t dstStride, const float *src, int64_t srcStride,
                     int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r)
    copyShortRow(dst + r * dstStride, src + r * srcStride, n);
}

} // namespace kc::rt
