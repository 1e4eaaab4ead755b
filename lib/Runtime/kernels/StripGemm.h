//===- StripGemm.h - GEMM for wide outputs with packed weights -*- C++ -*-===//
//
// Convolutions with many output positions (a 1×1 layer on a 112×112 image:
// C = W·X with N = 12544 columns and K as small as 16) want a kernel that
// vectorizes along N, where both X and the output are contiguous: it writes
// C directly, row segment by row segment, with bias and activation applied
// in registers. The weights are packed once into strips of 6 rows; the
// columns of X are copied (or, for a convolution, its patches gathered) a
// block at a time into a small buffer, which every strip then reads from L1
// (rows of X a power of two apart would otherwise share one cache set).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "KernelUtils.h"
#include "../ukernels/MicroKernels.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstddef>
#include <cstdint>

namespace kc::rt {

using uk::kStripBlockCols;
using uk::kStripBlockLd;
using uk::kStripRows;

/// Floats a strip-packed M×K operand takes (M rounded up to whole strips).
inline size_t stripPackedSize(int64_t M, int64_t K) {
  return size_t((M + kStripRows - 1) / kStripRows * kStripRows * K);
}

/// Packs row-major A (M×K, leading dimension lda) into strips: strip m/6
/// holds K groups of 6 floats, one per row; rows past M are zero. `out`
/// holds stripPackedSize(M, K) floats. A weight may be packed a part at a
/// time, each part but the last a multiple of 6 rows.
void packStrips(const float *A, int64_t lda, int64_t M, int64_t K, float *out);

/// Writes columns [n0, n0 + cols) of B (cols ≤ kStripBlockCols) as K rows
/// of a block with leading dimension kStripBlockLd. Called from several
/// threads at once, each with its own block.
using StripBlockFn = llvm::function_ref<void(int64_t n0, int64_t cols, float *block)>;

/// C[M×N] = act(A·B + bias) with A strip-packed, B produced block by block
/// by `fill` (a copy of the input, or patches gathered for a convolution),
/// C row-major (ldc), bias per row (or null). Splits the work over the
/// OpenMP threads when `parallel` and not already inside a parallel region.
void gemmStrips(const float *packedA, int64_t M, int64_t K, int64_t N, StripBlockFn fill, float *C,
                int64_t ldc, const float *bias, Act act, float slope, bool parallel);

/// The same with B row-major (leading dimension ldb).
void gemmStrips(const float *packedA, int64_t M, int64_t K, const float *B, int64_t ldb, int64_t N,
                float *C, int64_t ldc, const float *bias, Act act, float slope, bool parallel);

} // namespace kc::rt
