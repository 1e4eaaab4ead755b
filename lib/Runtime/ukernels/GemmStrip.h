//===- GemmStrip.h - f32_gemm_strip: 6 rows × 2 vectors ---------*- C++ -*-===//
//
// The strip kernel's register tile (f32_gemm_6x16 on 8 lanes, 6x32 on 16):
// per k, two vector loads of B, six broadcasts of A, twelve fused
// multiply-adds into twelve accumulators that start at the bias; the
// activation is applied in registers before the one store. Tiles short of
// rows or columns store through lane masks where those are fast, else
// through a buffer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "MicroKernels.h"
#include "Unroll.h"
#include "VecMath.h"

namespace kc::uk::KC_UK_ISA {

/// acc[r][v] += the tile's values of D (rows × cols of them, ldd apart):
/// where masks are fast through them, else whole vectors from full tiles
/// and a copy of a partial one.
template <class T, int R, int NV>
KC_UK_INLINE void addTile(typename T::V (&acc)[R][NV], const float *d, int64_t ldd, int64_t rows,
                          int64_t cols) {
  constexpr int L = T::kLanes;
  if constexpr (T::kFastMasks) {
    unroll<R>([&](auto r) {
      if (r < rows)
        unroll<NV>([&](auto v) {
          acc[r][v] =
              T::add(acc[r][v], T::maskLoad(T::firstLanes(cols - v * L), d + r * ldd + v * L));
        });
    });
  } else {
    alignas(64) float t[NV * L];
    for (int r = 0; r < R && r < rows; ++r) {
      const float *row = d + r * ldd;
      if (cols < NV * L) {
        for (int j = 0; j < NV * L; ++j)
          t[j] = j < cols ? row[j] : 0.f;
        row = t;
      }
      for (int v = 0; v < NV; ++v)
        acc[r][v] = T::add(acc[r][v], T::load(row + v * L));
    }
  }
}

/// One tile: 6 rows × NV vectors of columns (NV·kLanes, of which `cols`
/// are stored).
template <class T, Act A, int NV>
KC_UK_INLINE void f32_gemm_strip_tile(const float *a, const float *b, int64_t ldb, int64_t K,
                                      const float *bias, float slope, float *c, int64_t ldc,
                                      int64_t rows, int64_t cols, const float *d) {
  using V = typename T::V;
  constexpr int L = T::kLanes, R = int(kStripRows);
  V acc[R][NV];
  unroll<R>([&](auto r) {
    V init = T::set1(bias && r < rows ? bias[int(r)] : 0.f);
    unroll<NV>([&](auto v) { acc[r][v] = init; });
  });
  for (int64_t k = 0; k < K; ++k) {
    V bv[NV];
    unroll<NV>([&](auto v) { bv[v] = T::load(b + k * ldb + v * L); });
    const float *ak = a + k * R;
    unroll<R>([&](auto r) {
      V ar = T::broadcast(ak + r);
      unroll<NV>([&](auto v) { acc[r][v] = T::fma(ar, bv[v], acc[r][v]); });
    });
  }
  if (d)
    addTile<T, R, NV>(acc, d, ldc, rows, cols);
  if constexpr (T::kFastMasks) {
    unroll<R>([&](auto r) {
      if (r < rows)
        unroll<NV>([&](auto v) {
          T::maskStore(c + r * ldc + v * L, T::firstLanes(cols - v * L),
                       vact<T, A>(acc[r][v], slope));
        });
    });
  } else {
    bool full = rows == R && cols == NV * L;
    alignas(64) float t[R][NV * L];
    unroll<R>([&](auto r) {
      unroll<NV>([&](auto v) {
        V x = vact<T, A>(acc[r][v], slope);
        T::store(full ? c + r * ldc + v * L : t[r] + v * L, x);
      });
    });
    if (full)
      return;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j)
        c[r * ldc + j] = t[r][j];
  }
}

/// A strip of A times a block of B, tile by tile (GemmStripFn): tiles of
/// two vectors, a last one of at most one vector's columns on one (a 14x14
/// plane's 196 columns end in a tile of 4, which two vectors computed at
/// the cost of 32).
template <class T, Act A>
void f32_gemm_strip(const float *a, const float *b, int64_t ldb, int64_t K, const float *bias,
                    float slope, float *c, int64_t ldc, int64_t rows, int64_t cols,
                    const float *d) {
  constexpr int64_t L = T::kLanes, W = 2 * L;
  for (int64_t t0 = 0; t0 < cols; t0 += W) {
    int64_t n = minOf(W, cols - t0);
    const float *dt = d ? d + t0 : nullptr;
    if (n > L)
      f32_gemm_strip_tile<T, A, 2>(a, b + t0, ldb, K, bias, slope, c + t0, ldc, rows, n, dt);
    else
      f32_gemm_strip_tile<T, A, 1>(a, b + t0, ldb, K, bias, slope, c + t0, ldc, rows, n, dt);
  }
}

} // namespace kc::uk::KC_UK_ISA
