//===- GemmPanel.h - f32_gemm_panel: packed A × few columns -----*- C++ -*-===//
//
// The panel kernel's register block: R vectors of A's rows (one panel of
// 16 rows on 8 lanes, one or two on 16) times NR columns of B, per k R
// vector loads of A, NR broadcasts of B and R·NR fused multiply-adds
// (f32_gemm_16x6 on AVX2: twelve accumulators, the classic Haswell
// blocking; f32_gemm_32x12 on AVX-512: 24). With twice the columns a long
// K streams A from L2 half as often per multiply-add, which sets the pace
// there (one thread, 512x4608x49: 2.32 to 1.77 ms with 12 columns
// instead of 6). Blocks are written through a buffer, transposed into C's
// rows or, with RowsOut, as C's columns.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "MicroKernels.h"
#include "Unroll.h"

namespace kc::uk::KC_UK_ISA {

/// Widest block of columns: 12 with 32 registers of 16 lanes, else 6.
template <class T> constexpr int kPanelMaxCols = T::kLanes >= 16 ? int(2 * kColumnStrip) : int(kColumnStrip);

/// How `cols` columns are cut into blocks: `wide` blocks of the widest,
/// then one of 6 if `six`, then the rest as one block. A block streams the
/// panels' K rows whatever its width, so a last block of 1 to 5 columns
/// costs about as much as one of 6 (a 7×7 plane's 49 columns: 4 blocks of
/// 12 and 1); the last wide block and such a tail are taken as 6 and 7 to
/// 11 instead.
struct ColumnCut {
  int64_t wide;
  bool six;
};
template <int Max> KC_UK_INLINE ColumnCut cutColumns(int64_t cols) {
  int64_t wide = cols / Max, tail = cols % Max;
  bool six = Max > kColumnStrip && wide > 0 && tail > 0 && tail < kColumnStrip;
  return {wide - six, six};
}

template <class T> int64_t f32_gemm_panel_column_blocks(int64_t cols) {
  constexpr int Max = kPanelMaxCols<T>;
  ColumnCut cut = cutColumns<Max>(cols);
  return cut.wide + cut.six + (cols > cut.wide * Max + cut.six * kColumnStrip);
}

/// Stores a block's first `rows` rows (of R·L) by masked vector stores:
/// with RowsOut each column as it is, else transposed 16 rows at a time
/// into rows of NR floats. A float at a time, the store had cost about as
/// much as the products over a K of 16 (Winograd's over 16 channels).
template <class T, int R, int NR, bool RowsOut>
KC_UK_INLINE void storeBlock(typename T::V (&acc)[NR][R], float *c, int64_t ldc, int64_t rows) {
  constexpr int L = T::kLanes;
  if constexpr (RowsOut) {
    unroll<R>([&](auto r) KC_UK_INLINE_LAMBDA {
      typename T::Mask m = T::firstLanes(rows - r * L);
      unroll<NR>([&](auto j)
                     KC_UK_INLINE_LAMBDA { T::maskStore(c + j * ldc + r * L, m, acc[j][r]); });
    });
  } else {
    static_assert(L == 16 && NR <= L);
    unroll<R>([&](auto r) KC_UK_INLINE_LAMBDA {
      typename T::V v[L];
      unroll<L>([&](auto j) KC_UK_INLINE_LAMBDA { v[j] = acc[j < NR ? int(j) : 0][r]; });
      T::transpose16x16(v);
      typename T::Mask m = T::firstLanes(NR);
      for (int64_t i = 0; i < L && i < rows - r * L; ++i)
        T::maskStore(c + (r * L + i) * ldc, m, v[i]);
    });
  }
}

/// R vectors of rows of A (panels panelStride floats apart) × NR columns
/// (columns 6 to 11 read from b2), `rows` of the R·lanes written.
template <class T, int R, int NR, bool RowsOut, bool Fetch>
void f32_gemm_panel_block(const float *a, int64_t panelStride, const float *b, const float *b2,
                          int64_t ldb, int64_t K, float *c, int64_t ldc, int64_t rows,
                          const Prefetch &pf) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  static_assert(NR >= 1 && NR <= 2 * kColumnStrip && R * L <= 2 * kPanelRows);
  V acc[NR][R];
  unroll<NR>([&](auto j) { unroll<R>([&](auto r) { acc[j][r] = T::zero(); }); });
  for (int64_t k = 0; k < K; ++k) {
    if constexpr (Fetch)
      __builtin_prefetch(pf.from + ((k * pf.step) >> 16), 0, 2); // into L2
    V av[R];
    unroll<R>([&](auto r) {
      av[r] = T::load(a + (r * L / kPanelRows) * panelStride + k * kPanelRows + r * L % kPanelRows);
    });
    const float *bk = b + k * ldb, *b2k = b2 + k * ldb;
    unroll<NR>([&](auto j) {
      V bj = T::broadcast(j < kColumnStrip ? bk + j : b2k + (j - kColumnStrip));
      unroll<R>([&](auto r) { acc[j][r] = T::fma(av[r], bj, acc[j][r]); });
    });
  }
  if constexpr (T::kFastMasks && (RowsOut || L == 16)) {
    storeBlock<T, R, NR, RowsOut>(acc, c, ldc, rows);
    return;
  }
  // Elsewhere through a buffer, a float at a time.
  alignas(64) float t[NR][R * L];
  unroll<NR>([&](auto j) { unroll<R>([&](auto r) { T::store(t[j] + r * L, acc[j][r]); }); });
  if constexpr (RowsOut) {
    for (int j = 0; j < NR; ++j)
      for (int64_t r = 0; r < rows; ++r)
        c[j * ldc + r] = t[j][r];
  } else {
    for (int64_t r = 0; r < rows; ++r)
      for (int j = 0; j < NR; ++j)
        c[r * ldc + j] = t[j][r];
  }
}

/// R vectors of rows of A × columns [n0, n1) of B, cut by cutColumns; the
/// fetch-ahead advances a slice per block.
template <class T, int R, bool RowsOut, bool Fetch>
void f32_gemm_panel_columns(const float *a, int64_t panelStride, const PanelColumns &B, int64_t K,
                            int64_t n0, int64_t n1, float *c, int64_t ldc, int64_t rows,
                            const Prefetch &pf) {
  constexpr int Max = kPanelMaxCols<T>;
  auto at = [&](int64_t n) {
    return B.stripStride ? B.base + n / kColumnStrip * B.stripStride + n % kColumnStrip
                         : B.base + n;
  };
  Prefetch f = pf;
  ColumnCut cut = cutColumns<Max>(n1 - n0);
  int64_t n = n0;
  auto block = [&](auto nr) {
    f32_gemm_panel_block<T, R, decltype(nr)::value, RowsOut, Fetch>(
        a, panelStride, at(n), at(n + kColumnStrip), B.ldb, K,
        RowsOut ? c + (n - n0) * ldc : c + (n - n0), ldc, rows, f);
  };
  for (int64_t i = 0; i < cut.wide; ++i, n += Max, f.from += f.advance)
    block(std::integral_constant<int, Max>());
  if (cut.six) {
    block(std::integral_constant<int, int(kColumnStrip)>());
    n += kColumnStrip, f.from += f.advance;
  }
  if (n < n1)
    withWidth<Max - 1>(n1 - n, block);
}

/// GemmPanelFn: two panels at a time where 16 lanes leave registers for
/// them, else one.
template <class T, bool RowsOut, bool Fetch>
void f32_gemm_panel(const float *a, int64_t K, const PanelColumns &B, int64_t n0, int64_t n1,
                    float *c, int64_t ldc, int64_t rows, const Prefetch &pf) {
  constexpr int R = int(kPanelRows) / T::kLanes;
  if constexpr (R == 1) {
    if (rows > kPanelRows) {
      f32_gemm_panel_columns<T, 2, RowsOut, Fetch>(a, kPanelRows * K, B, K, n0, n1, c, ldc, rows,
                                                   pf);
      return;
    }
  }
  f32_gemm_panel_columns<T, R, RowsOut, Fetch>(a, kPanelRows * K, B, K, n0, n1, c, ldc, rows, pf);
}

} // namespace kc::uk::KC_UK_ISA
