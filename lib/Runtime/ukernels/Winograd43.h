//===- Winograd43.h - f32_winograd43: F(4x4, 3x3) transforms ----*- C++ -*-===//
//
// Lavin & Gray's minimal filtering: each 6x6 input tile d gives Bᵀ d B and
// each 6x6 product m gives a 4x4 output tile Aᵀ m A. Tiles are transformed
// 8 consecutive ones at a time (possibly across tile rows), one per lane:
// each of a tile's input rows is loaded as 8 floats, 8 tiles' rows
// transposed into columns in registers; the 4 outputs of a row of 8 tiles
// are transposed back into 32 contiguous floats. (Gathering the columns
// instead was slower: gathers are slow on some cores.)
//
//===----------------------------------------------------------------------===//
#pragma once

#include "MicroKernels.h"
#include "Unroll.h"

namespace kc::uk::KC_UK_ISA {

// r = Bᵀ d for a 6-vector d; written out so the zeros of Bᵀ cost nothing.
template <typename In, typename Out> KC_UK_INLINE void winogradInputRow(In d, Out r) {
  r(0, 4 * d(0) - 5 * d(2) + d(4));
  r(1, -4 * (d(1) + d(2)) + d(3) + d(4));
  r(2, 4 * (d(1) - d(2)) - d(3) + d(4));
  r(3, -2 * (d(1) - d(3)) - d(2) + d(4));
  r(4, 2 * (d(1) - d(3)) - d(2) + d(4));
  r(5, 4 * d(1) - 5 * d(3) + d(5));
}

// o = Aᵀ m for a 6-vector m.
template <typename In, typename Out> KC_UK_INLINE void winogradOutputRow(In m, Out o) {
  auto a = m(1) + m(2), b = m(1) - m(2), c = m(3) + m(4), d = m(3) - m(4);
  o(0, m(0) + a + c);
  o(1, b + 2 * d);
  o(2, a + 4 * c);
  o(3, b + 8 * d + m(5));
}

/// WinogradInputFn (8 lanes).
template <class T>
void f32_winograd43_input(const float *pad, int64_t PWt, int64_t TW, int64_t tiles, float *v,
                          int64_t vStride) {
  using V = typename T::V;
  static_assert(T::kLanes == 8);
  for (int64_t t0 = 0; t0 < tiles; t0 += 8) {
    int64_t n = minOf<int64_t>(8, tiles - t0);
    const float *base[8];
    for (int l = 0; l < 8; ++l) {
      int64_t t = t0 + minOf<int64_t>(l, n - 1);
      base[l] = pad + 4 * (t / TW) * PWt + 4 * (t % TW);
    }
    V d[6][8];
    for (int i = 0; i < 6; ++i) {
      V rows[8];
      for (int l = 0; l < 8; ++l)
        rows[l] = T::load(base[l] + i * PWt);
      T::transpose8x8(rows);
      for (int j = 0; j < 6; ++j)
        d[i][j] = rows[j];
    }
    V t[6][6];
    for (int j = 0; j < 6; ++j)
      winogradInputRow([&](int k) { return d[k][j]; }, [&](int k, V r) { t[k][j] = r; });
    for (int i = 0; i < 6; ++i)
      winogradInputRow([&](int k) { return t[i][k]; }, [&](int k, V r) {
        storeFirst<T>(v + (i * 6 + k) * vStride + t0, r, n == 8, n);
      });
  }
}

/// dst[0, n) = src[0, n) for n ≤ 32, by vectors and a float at a time.
template <class T> KC_UK_INLINE void copyFloats(float *dst, const float *src, int64_t n) {
  constexpr int64_t L = T::kLanes;
  int64_t j = 0;
  for (; j + L <= n; j += L)
    T::store(dst + j, T::load(src + j));
  for (; j < n; ++j)
    dst[j] = src[j];
}

/// WinogradOutputFn (8 lanes). Lanes past the last tile read m's padding
/// (or the next plane) and are never copied out.
template <class T>
void f32_winograd43_output(const float *m, int64_t mStride, int64_t TW, int64_t tiles,
                           float *plane, int64_t OH, int64_t OW) {
  using V = typename T::V;
  static_assert(T::kLanes == 8);
  for (int64_t t0 = 0; t0 < tiles; t0 += 8) {
    int64_t n = minOf<int64_t>(8, tiles - t0);
    alignas(64) float o[4][8][4]; // [row][tile][column]
    V t[4][6];
    for (int j = 0; j < 6; ++j)
      winogradOutputRow([&](int k) { return T::load(m + (k * 6 + j) * mStride + t0); },
                        [&](int k, V r) { t[k][j] = r; });
    // Eight whole tiles of one tile row: their rows are 32 consecutive
    // outputs, stored straight into the plane.
    const int64_t top = 4 * (t0 / TW), left = 4 * (t0 % TW);
    const bool direct = n == 8 && left + 32 <= OW && top + 4 <= OH && t0 % TW + 8 <= TW;
    for (int i = 0; i < 4; ++i) {
      V r[4];
      winogradOutputRow([&](int k) { return t[i][k]; }, [&](int k, V x) { r[k] = x; });
      T::storeTransposed4(r, direct ? plane + (top + i) * OW + left : &o[i][0][0]);
    }
    if (direct)
      continue;
    // The tiles by runs within one tile row: each output row of a run is
    // one contiguous copy. Tile by tile, with a division each, these
    // groups had cost several times the direct ones.
    for (int64_t l = 0, tr = t0 / TW, tc = t0 % TW; l < n; l += TW - tc, ++tr, tc = 0) {
      int64_t oh0 = 4 * tr, ow0 = 4 * tc;
      int64_t rows = minOf<int64_t>(4, OH - oh0);
      int64_t cols = minOf<int64_t>(4 * minOf<int64_t>(n - l, TW - tc), OW - ow0);
      for (int64_t i = 0; i < rows; ++i)
        copyFloats<T>(plane + (oh0 + i) * OW + ow0, &o[i][l][0], cols);
    }
  }
}

} // namespace kc::uk::KC_UK_ISA
