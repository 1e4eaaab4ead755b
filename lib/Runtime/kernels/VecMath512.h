//===- VecMath512.h - Activations on 16 floats at a time --------*- C++ -*-===//
//
// The AVX-512 forms of VecMath.h's exp8 and act8, for the AVX-512 kernels'
// epilogues. Internal linkage, as Isa.h requires of AVX-512 code.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Isa.h"
#include "KernelUtils.h"

#ifdef KC_HAVE_AVX512_KERNELS
// GCC 12's AVX-512 min, max and conversion intrinsics start from
// _mm512_undefined_*, which -Wmaybe-uninitialized reports once inlined
// (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace kc::rt {
namespace {

KC_AVX512 inline __m512 exp16(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.33654f)), _mm512_set1_ps(88.37626f));
  const __m512 magic = _mm512_set1_ps(12582912.f);
  __m512 k = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), magic), magic);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fmadd_ps(k, _mm512_set1_ps(2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.f)));
  __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(k), _mm512_set1_epi32(127));
  return _mm512_mul_ps(p, _mm512_castsi512_ps(_mm512_slli_epi32(e, 23)));
}

/// act(x) on 16 lanes; the same function as applyAct and act8.
KC_AVX512 inline __m512 act16(Act act, __m512 x, float slope) {
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.f);
  switch (act) {
  case Act::None: return x;
  case Act::Relu: return _mm512_max_ps(x, zero);
  case Act::Relu6: return _mm512_min_ps(_mm512_max_ps(x, zero), _mm512_set1_ps(6.f));
  case Act::Silu: return _mm512_div_ps(x, _mm512_add_ps(one, exp16(_mm512_sub_ps(zero, x))));
  case Act::Sigmoid: return _mm512_div_ps(one, _mm512_add_ps(one, exp16(_mm512_sub_ps(zero, x))));
  case Act::Hardswish: {
    __m512 t = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(x, _mm512_set1_ps(3.f)), zero),
                             _mm512_set1_ps(6.f));
    return _mm512_div_ps(_mm512_mul_ps(x, t), _mm512_set1_ps(6.f));
  }
  case Act::LeakyRelu:
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, zero, _CMP_GT_OQ),
                                _mm512_mul_ps(x, _mm512_set1_ps(slope)), x);
  }
  return x;
}

/// min(max(x, lo), hi) lane by lane.
KC_AVX512 inline __m512 clamp16(__m512 x, __m512 lo, __m512 hi) {
  return _mm512_min_ps(_mm512_max_ps(x, lo), hi);
}

/// The first n (≤ 16) lanes.
KC_AVX512 inline __mmask16 firstLanes(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
}

} // namespace
} // namespace kc::rt
#pragma GCC diagnostic pop
#endif
