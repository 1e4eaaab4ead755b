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

#include "Epilogue.h"
#include "../ukernels/MicroKernels.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstddef>
#include <cstdint>
#include <vector>

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

/// How gemmStrips shares a product out: items are (group of strips, block
/// of columns) pairs, group-major, and thread t takes items [first[t],
/// first[t + 1]).
struct StripSchedule {
  int64_t perGroup = 0; ///< strips per group
  llvm::SmallVector<int64_t, 17> first;
};

/// The schedules of an M × N product on 1 to maxThreads threads, worked out
/// once when a kernel is built (per call it took 0.3 % of yolo_small's
/// time).
class StripSchedules {
public:
  /// What filling a block of B costs, in thirds of one strip's products
  /// over it, at 1 thread: a copy of X's rows about a third
  /// (kCopiedBlock); a convolution's patches gathered about three strips
  /// (kGatheredBlock: 3x3 stride 2 over 64 channels 2.8, 1x7 over 128
  /// 3.2, from the gather's and the kernel's shares of the time).
  static constexpr int64_t kCopiedBlock = 1, kGatheredBlock = 9;

  StripSchedules() = default;
  StripSchedules(int64_t M, int64_t N, int maxThreads, int64_t fillCost = kCopiedBlock);
  int maxThreads() const { return int(byThreads_.size()); }
  const StripSchedule &forThreads(int t) const { return byThreads_[size_t(t - 1)]; }

private:
  std::vector<StripSchedule> byThreads_;
};

/// One thread's block of B for depth K, in floats: whole 4 KiB pages and a
/// 16 KiB gap before the next thread's. Blocks one right after the other
/// made the strip kernel slower at 2 threads (docs/performance.md has the
/// figures). Other scratch keeps cache-line slices: page-aligned ones in
/// every kernel cost the panel kernel's layers at 1 thread.
inline int64_t stripBlockFloats(int64_t K) { return (K * kStripBlockLd + 1023) / 1024 * 1024 + 4096; }

/// Floats of scratch gemmStrips needs on `threads` threads for depth K: a
/// block of B per thread.
inline size_t stripScratchFloats(int64_t K, int threads) {
  return size_t(threads) * size_t(stripBlockFloats(K));
}

/// Called with rows [m0, m0 + rows) × columns [n0, n0 + cols) of C once
/// they are stored, on the thread that stored them.
using StripStoredFn = llvm::function_ref<void(int64_t m0, int64_t rows, int64_t n0, int64_t cols)>;

/// C[M×N] = act(A·B + bias + D) with A strip-packed, B produced block by
/// block by `fill` (a copy of the input, or patches gathered for a
/// convolution), C row-major (ldc), bias per row (or null), D laid out as
/// C (a residual added in registers before the activation) or null. With `schedules` (of this M
/// and N) the work is shared over at most schedules->maxThreads() OpenMP
/// threads unless a region runs already; without, it runs on the calling
/// thread. `scratch` (64-byte aligned) holds stripScratchFloats(K, threads).
/// `stored`, if given, sees each block of C as it is done.
void gemmStrips(const float *packedA, int64_t M, int64_t K, int64_t N, StripBlockFn fill, float *C,
                int64_t ldc, const float *bias, Act act, float slope,
                const StripSchedules *schedules, float *scratch, StripStoredFn stored = {},
                const float *D = nullptr);

/// The same with B row-major (leading dimension ldb), its row k scaled by
/// rowScale[k] as it is copied (when given).
void gemmStrips(const float *packedA, int64_t M, int64_t K, const float *B, int64_t ldb, int64_t N,
                float *C, int64_t ldc, const float *bias, Act act, float slope,
                const StripSchedules *schedules, float *scratch, StripStoredFn stored = {},
                const float *rowScale = nullptr, const float *D = nullptr);

} // namespace kc::rt
