//===- DepthwiseKxK.h - f32_dwconv_padded: depthwise planes, any kernel -*- C++ -*-===//
//
// One channel plane of a depthwise layer of any kernel size and dilation,
// at stride 1 or 2, from a zero-padded copy of the plane: two vectors of
// outputs a step for four output rows at once, or one for eight rows
// where a row fits one vector, each output summing its KH·KW taps in a
// register (eight independent chains of multiply-adds) and written once, ReLU and ReLU6 applied as
// a clamp in the same loop. Rows are stored as f32_dwconv3x3_padded stores them: a row ends with a
// step that overlaps the one before it, and a row shorter than a vector stores whole vectors into
// the rows after it (computed later, or in the same step in order).
//
// At stride 2 a tap's even columns are split out of two vectors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "MicroKernels.h"
#include "Unroll.h"
#include "VecMath.h"

#include <type_traits>

namespace kc::uk::KC_UK_ISA {

/// acc[r][c] = b plus the taps of output row oh0 + r (r < R) for the
/// vector of outputs whose first tap column is col[c] (c < C).
template <class T, int S, int R, int C>
KC_UK_INLINE void dwTapsKxK(const float *pad, int64_t PWt, int64_t oh0, const int64_t col[C],
                            const DepthwiseShape &s, const float *k, typename T::V vb,
                            typename T::V acc[R][C]) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      acc[r][c] = vb;
  auto tap = [&](const float *q, int r, int c, typename T::V w) {
    V v;
    if constexpr (S == 1)
      v = T::load(q);
    else
      v = T::evenLanes(T::load(q), T::load(q + L));
    acc[r][c] = T::fma(w, v, acc[r][c]);
  };
  if constexpr (C == 1) {
    // One vector a row: every load is one pointer, stepped a tap at a
    // time, plus a multiple of the row step. Through a row pointer each
    // (and the tap's offset), the loop ran out of registers and moved
    // offsets in and out of vector registers: 7x7 planes 30 % slower.
    const int64_t rs = S * PWt;
    const float *p = pad + oh0 * S * PWt + col[0], *w = k;
    for (int64_t kh = 0; kh < s.KH; ++kh, p += s.DH * PWt) {
      const float *q = p;
      for (int64_t kw = 0; kw < s.KW; ++kw, q += s.DW) {
        const V wv = T::set1(*w++);
        for (int r = 0; r < R; ++r)
          tap(q + r * rs, r, 0, wv);
      }
    }
    return;
  }
  for (int64_t kh = 0; kh < s.KH; ++kh) {
    const float *rows[R];
    for (int r = 0; r < R; ++r)
      rows[r] = pad + ((oh0 + r) * S + kh * s.DH) * PWt;
    for (int64_t kw = 0; kw < s.KW; ++kw) {
      const V w = T::set1(k[kh * s.KW + kw]);
      const int64_t off = kw * s.DW;
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c)
          tap(rows[r] + col[c] + off, r, c, w);
    }
  }
}

/// DepthwiseKxKFn at stride S. Each step keeps eight chains of
/// multiply-adds going, as many as hide the multiply-add's latency at two
/// a cycle: four rows × two vectors of a row, or eight rows of one vector
/// where a row is one vector wide (7x7 and 14x14 planes on 8 lanes ran at
/// half the rate on four chains).
template <class T, int S>
void f32_dwconv_padded(const float *pad, int64_t PWt, float *dst, int64_t OH, int64_t OW,
                       const DepthwiseShape &s, const float *k, float b, const DepthwiseClamp &e) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  const V vb = T::set1(b), vlo = T::set1(e.lo), vhi = T::set1(e.hi);
  // The first output of vector c of the step at `step`: the last vector of
  // a row overlaps the one before it.
  auto start = [&](int64_t step) { return maxOf<int64_t>(0, minOf<int64_t>(step, OW - L)); };
  auto rows = [&](auto count, auto vectors, int64_t oh0) {
    constexpr int R = decltype(count)::value, C = decltype(vectors)::value;
    for (int64_t step = 0; step < OW; step += C * L) {
      int64_t ow[C], col[C];
      for (int c = 0; c < C; ++c)
        ow[c] = start(step + c * L), col[c] = S * ow[c];
      V acc[R][C];
      dwTapsKxK<T, S, R, C>(pad, PWt, oh0, col, s, k, vb, acc);
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
          int64_t at = (oh0 + r) * OW + ow[c];
          storeFirst<T>(dst + at, vclamp<T>(acc[r][c], vlo, vhi), at + L <= OH * OW, OW);
        }
    }
  };
  // Rows a group: four of two vectors, or eight of one; the last rows
  // together, never one at a time on a single chain.
  auto plane = [&](auto group, auto vectors) {
    constexpr int G = decltype(group)::value;
    int64_t oh = 0;
    for (; oh + G <= OH; oh += G)
      rows(group, vectors, oh);
    if (oh < OH)
      withWidth<G - 1>(OH - oh, [&](auto count) { rows(count, vectors, oh); });
  };
  if (OW > L)
    plane(std::integral_constant<int, 4>{}, std::integral_constant<int, 2>{});
  else
    plane(std::integral_constant<int, 8>{}, std::integral_constant<int, 1>{});
}

} // namespace kc::uk::KC_UK_ISA
