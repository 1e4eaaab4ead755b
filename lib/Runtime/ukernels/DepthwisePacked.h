//===- DepthwisePacked.h - f32_dwconv_packed: a vector of channels -*- C++ -*-===//
//
// A depthwise layer L channels at a time (L = the vector's lanes), each
// vector one position's L channels: every tap is one multiply-add of a
// whole vector, whatever the plane's width, where a plane-at-a-time loop
// leaves lanes idle on rows shorter than a vector (9 of 16 on a 7x7 plane)
// and splits even and odd columns at stride 2. The block's planes are
// transposed, L positions at a time, into a zero-padded copy of L
// interleaved planes; eight outputs of a row a step sum their taps from
// it, and are transposed back into the output planes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "MicroKernels.h"
#include "Unroll.h"
#include "VecMath.h"

#include <type_traits>

namespace kc::uk::KC_UK_ISA {

/// Transposes T::kLanes vectors of as many lanes in place.
template <class T> KC_UK_INLINE void transposeLanes(typename T::V r[]) {
  if constexpr (T::kLanes == 16)
    T::transpose16x16(r);
  else
    T::transpose8x8(r);
}

/// Positions [0, n) of `count` planes (plane p at src + p·ld) into `pack`,
/// position i's L channels at pack + at(i)·L (zeros past `count`).
template <class T, class At>
KC_UK_INLINE void packPositions(const float *src, int64_t ld, int64_t count, int64_t n, float *pack,
                                At &&at) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    V r[L];
    for (int p = 0; p < L; ++p)
      r[p] = p < count ? T::load(src + p * ld + i) : T::zero();
    transposeLanes<T>(r);
    for (int j = 0; j < L; ++j)
      T::store(pack + at(i + j) * L, r[j]);
  }
  for (; i < n; ++i) {
    float *d = pack + at(i) * L;
    for (int p = 0; p < L; ++p)
      d[p] = p < count ? src[p * ld + i] : 0.f;
  }
}

/// The inverse: positions [0, n) of `pack` (position i at pack + i·L) into
/// the first `count` planes at dst (plane p at dst + p·ld).
template <class T>
KC_UK_INLINE void unpackPositions(const float *pack, int64_t count, int64_t n, float *dst,
                                  int64_t ld) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    V r[L];
    for (int j = 0; j < L; ++j)
      r[j] = T::load(pack + (i + j) * L);
    transposeLanes<T>(r);
    for (int p = 0; p < count; ++p)
      T::store(dst + p * ld + i, r[p]);
  }
  for (; i < n; ++i)
    for (int p = 0; p < count; ++p)
      dst[p * ld + i] = pack[i * L + p];
}

/// R outputs of row oh from column ow: each sums its taps in its own
/// register (R chains of multiply-adds) and is stored clamped into out.
/// With the kernel's width KW known (else 0), a kernel row's weights stay
/// in registers and each input vector is loaded once for every output it
/// reaches: at stride 1, R + KW - 1 loads for R·KW multiply-adds, where
/// loading each tap's input took one load per multiply-add.
template <class T, int S, int KW, int R>
KC_UK_INLINE void dwPackedRow(const float *pad, const DepthwisePackedShape &s, int64_t oh,
                              int64_t ow, const float *k, typename T::V vb, typename T::V vlo,
                              typename T::V vhi, float *out) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  V acc[R];
  unroll<R>([&](auto r) { acc[r] = vb; });
  const float *row = pad + (oh * s.SH * s.PWt + ow * S) * L;
  for (int64_t kh = 0; kh < s.KH; ++kh, row += s.DH * s.PWt * L) {
    if constexpr (KW > 0) {
      V w[KW];
      unroll<KW>([&](auto j) { w[j] = T::load(k + j * L); });
      k += KW * L;
      unroll<(R - 1) * S + KW>([&](auto j) KC_UK_INLINE_LAMBDA {
        const V v = T::load(row + j * L);
        unroll<R>([&](auto r) KC_UK_INLINE_LAMBDA {
          constexpr int kw = decltype(j)::value - decltype(r)::value * S;
          if constexpr (kw >= 0 && kw < KW)
            acc[r] = T::fma(w[kw], v, acc[r]);
        });
      });
    } else {
      const float *q = row;
      for (int64_t kw = 0; kw < s.KW; ++kw, q += s.DW * L, k += L) {
        const V w = T::load(k);
        unroll<R>([&](auto r) { acc[r] = T::fma(w, T::load(q + r * S * L), acc[r]); });
      }
    }
  }
  unroll<R>([&](auto r) { T::store(out + (oh * s.OW + ow + r) * L, vclamp<T>(acc[r], vlo, vhi)); });
}

/// Every output row, kRow outputs a step (eight chains hide the
/// multiply-add's latency), the last ones of a row together.
template <class T, int S, int KW>
void dwPackedRows(const float *pad, const DepthwisePackedShape &s, const float *k, typename T::V vb,
                  typename T::V vlo, typename T::V vhi, float *out) {
  constexpr int kRow = 8;
  for (int64_t oh = 0; oh < s.OH; ++oh) {
    int64_t ow = 0;
    for (; ow + kRow <= s.OW; ow += kRow)
      dwPackedRow<T, S, KW, kRow>(pad, s, oh, ow, k, vb, vlo, vhi, out);
    if (ow < s.OW)
      withWidth<kRow - 1>(s.OW - ow, [&](auto n) {
        dwPackedRow<T, S, KW, decltype(n)::value>(pad, s, oh, ow, k, vb, vlo, vhi, out);
      });
  }
}

/// DepthwisePackedFn at column stride S.
template <class T, int S>
void f32_dwconv_packed(const float *src, int64_t count, float *dst, const DepthwisePackedShape &s,
                       const float *k, const float *b, const DepthwiseClamp &e, float *pad,
                       float *out) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  const int64_t W = s.W, rowAt = s.PH * s.PWt + s.PW;
  // The border: rows above and below the input's window, then the columns
  // on either side of it (rows that hold no output's taps stay unwritten).
  const int64_t PHt = (s.OH - 1) * s.SH + (s.KH - 1) * s.DH + 1;
  auto zeros = [&](int64_t at, int64_t n) {
    for (float *p = pad + at * L, *end = p + n * L; p < end; p += L)
      T::store(p, T::zero());
  };
  zeros(0, s.PH * s.PWt);
  if (PHt > s.PH + s.H)
    zeros((s.PH + s.H) * s.PWt, (PHt - s.PH - s.H) * s.PWt);
  for (int64_t h = 0; h < minOf(s.H, PHt - s.PH); ++h) {
    zeros((s.PH + h) * s.PWt, s.PW);
    zeros((s.PH + h) * s.PWt + s.PW + W, s.PWt - s.PW - W);
  }
  int64_t h = 0, w = 0; // the position packPositions asks for next, in order
  packPositions<T>(src, s.H * W, count, s.H * W, pad, [&](int64_t) {
    int64_t at = rowAt + h * s.PWt + w;
    if (++w == W)
      w = 0, ++h;
    return at;
  });
  const V vb = T::load(b), vlo = T::set1(e.lo), vhi = T::set1(e.hi);
  if (s.DW == 1 && s.KW == 3)
    dwPackedRows<T, S, 3>(pad, s, k, vb, vlo, vhi, out);
  else if (s.DW == 1 && s.KW == 5)
    dwPackedRows<T, S, 5>(pad, s, k, vb, vlo, vhi, out);
  else if (s.DW == 1 && s.KW == 7)
    dwPackedRows<T, S, 7>(pad, s, k, vb, vlo, vhi, out);
  else
    dwPackedRows<T, S, 0>(pad, s, k, vb, vlo, vhi, out);
  unpackPositions<T>(out, count, s.OH * s.OW, dst, s.OH * s.OW);
}

} // namespace kc::uk::KC_UK_ISA
