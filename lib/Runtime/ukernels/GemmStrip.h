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

template <class T, Act A>
KC_UK_INLINE void f32_gemm_strip_tile(const float *a, const float *b, int64_t ldb, int64_t K,
                                      const float *bias, float slope, float *c, int64_t ldc,
                                      int64_t rows, int64_t cols) {
  using V = typename T::V;
  constexpr int L = T::kLanes, R = int(kStripRows);
  V acc[R][2];
  unroll<R>([&](auto r) {
    acc[r][0] = acc[r][1] = T::set1(bias && r < rows ? bias[int(r)] : 0.f);
  });
  for (int64_t k = 0; k < K; ++k) {
    V b0 = T::load(b + k * ldb), b1 = T::load(b + k * ldb + L);
    const float *ak = a + k * R;
    unroll<R>([&](auto r) {
      V ar = T::broadcast(ak + r);
      acc[r][0] = T::fma(ar, b0, acc[r][0]);
      acc[r][1] = T::fma(ar, b1, acc[r][1]);
    });
  }
  if constexpr (T::kFastMasks) {
    auto lo = T::firstLanes(cols), hi = T::firstLanes(cols - L);
    unroll<R>([&](auto r) {
      if (r < rows) {
        T::maskStore(c + r * ldc, lo, vact<T, A>(acc[r][0], slope));
        T::maskStore(c + r * ldc + L, hi, vact<T, A>(acc[r][1], slope));
      }
    });
  } else {
    bool full = rows == R && cols == 2 * L;
    alignas(64) float t[R][2 * L];
    unroll<R>([&](auto r) {
      V v0 = vact<T, A>(acc[r][0], slope), v1 = vact<T, A>(acc[r][1], slope);
      if (full) {
        T::store(c + r * ldc, v0);
        T::store(c + r * ldc + L, v1);
      } else {
        T::store(t[r], v0);
        T::store(t[r] + L, v1);
      }
    });
    if (full)
      return;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j)
        c[r * ldc + j] = t[r][j];
  }
}

/// A strip of A times a block of B, tile by tile (GemmStripFn).
template <class T, Act A>
void f32_gemm_strip(const float *a, const float *b, int64_t ldb, int64_t K, const float *bias,
                    float slope, float *c, int64_t ldc, int64_t rows, int64_t cols) {
  constexpr int64_t W = 2 * T::kLanes;
  for (int64_t t0 = 0; t0 < cols; t0 += W)
    f32_gemm_strip_tile<T, A>(a, b + t0, ldb, K, bias, slope, c + t0, ldc, rows,
                              minOf(W, cols - t0));
}

} // namespace kc::uk::KC_UK_ISA
