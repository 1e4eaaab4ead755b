//===- DepthwiseKxK.h - f32_dwconv_padded: depthwise planes, any kernel -*- C++ -*-===//
//
// One channel plane of a depthwise layer of any kernel size and dilation,
// at stride 1 or 2, from a zero-padded copy of the plane: a vector of
// outputs a step, for four output rows at once (the last 1-3 together), each summing its KH·KW
// taps in a register (four independent chains of multiply-adds) and
// written once, ReLU and ReLU6 applied as a clamp in the same loop. Rows
// are stored as f32_dwconv3x3_padded stores them: a row ends with a step
// that overlaps the one before it, and a row shorter than a vector stores
// whole vectors into the rows after it (computed later, or in the same
// step in order).
//
// At stride 2 a tap's even columns are split out of two vectors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Epilogue.h"
#include "MicroKernels.h"
#include "Unroll.h"

#include <type_traits>

namespace kc::uk::KC_UK_ISA {

/// acc[r] = b plus the taps of output rows oh0 + r (r < R) for the vector
/// of outputs whose first tap column is `col`.
template <class T, int S, int R>
KC_UK_INLINE void dwTapsKxK(const float *pad, int64_t PWt, int64_t oh0, int64_t col,
                            const DepthwiseShape &s, const float *k, typename T::V vb,
                            typename T::V acc[R]) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  for (int r = 0; r < R; ++r)
    acc[r] = vb;
  for (int64_t kh = 0; kh < s.KH; ++kh) {
    const float *rows[R];
    for (int r = 0; r < R; ++r)
      rows[r] = pad + ((oh0 + r) * S + kh * s.DH) * PWt + col;
    for (int64_t kw = 0; kw < s.KW; ++kw) {
      const V w = T::set1(k[kh * s.KW + kw]);
      const int64_t off = kw * s.DW;
      for (int r = 0; r < R; ++r) {
        V v;
        if constexpr (S == 1)
          v = T::load(rows[r] + off);
        else
          v = T::evenLanes(T::load(rows[r] + off), T::load(rows[r] + off + L));
        acc[r] = T::fma(w, v, acc[r]);
      }
    }
  }
}

/// DepthwiseKxKFn at stride S.
template <class T, int S>
void f32_dwconv_padded(const float *pad, int64_t PWt, float *dst, int64_t OH, int64_t OW,
                       const DepthwiseShape &s, const float *k, float b,
                       const DepthwiseEpilogue &e) {
  using V = typename T::V;
  constexpr int L = T::kLanes, kRows = 4;
  const V vb = T::set1(b), vlo = T::set1(e.lo), vhi = T::set1(e.hi);
  auto rows = [&](auto count, int64_t oh0) {
    constexpr int R = decltype(count)::value;
    for (int64_t step = 0; step < OW; step += L) {
      int64_t ow = maxOf<int64_t>(0, minOf<int64_t>(step, OW - L));
      V acc[R];
      dwTapsKxK<T, S, R>(pad, PWt, oh0, S * ow, s, k, vb, acc);
      for (int r = 0; r < R; ++r) {
        int64_t at = (oh0 + r) * OW + ow;
        storeFirst<T>(dst + at, vclamp<T>(acc[r], vlo, vhi), at + L <= OH * OW, OW);
      }
    }
  };
  int64_t oh = 0;
  for (; oh + kRows <= OH; oh += kRows)
    rows(std::integral_constant<int, kRows>{}, oh);
  // The last 1-3 rows together: one row at a time, each waited on its
  // single chain of multiply-adds (a 7x7 plane's last three rows took as
  // long as the first four).
  if (oh < OH)
    withWidth<kRows - 1>(OH - oh, [&](auto count) { rows(count, oh); });
  if (!e.clampOnly)
    depthwiseActivate<T>(e, dst, OH * OW);
}

} // namespace kc::uk::KC_UK_ISA
