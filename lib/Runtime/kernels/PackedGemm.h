//===- PackedGemm.h - GEMM with a pre-packed left operand -------*- C++ -*-===//
//
// For products whose left operand is a weight: it is packed once, at load,
// into panels of 16 rows, so a run reads it in the order the register
// kernel consumes it and never repacks it (OpenBLAS packs both operands on
// every call, which dominates small products such as Winograd's 36 GEMMs).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../ukernels/MicroKernels.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstddef>
#include <cstdint>

namespace kc::rt {

using uk::kColumnStrip;
using uk::kPanelRows;

/// Floats a packed M×K operand takes (M rounded up to whole panels).
inline size_t packedSize(int64_t M, int64_t K) {
  return size_t((M + kPanelRows - 1) / kPanelRows * kPanelRows * K);
}

/// Where A[m][k] lives in the packed form: panel m/16 holds K groups of 16
/// consecutive floats, one per row of the panel.
inline size_t packedIndex(int64_t m, int64_t k, int64_t K) {
  return size_t((m / kPanelRows) * kPanelRows * K + k * kPanelRows + m % kPanelRows);
}

/// Packed weights from which their next panel is fetched ahead: past L2's
/// size they come from memory on every run; below, fetching ahead only
/// costs instructions (tiny_transformer 0.069 -> 0.072 ms).
constexpr int64_t kFetchAheadBytes = 512 << 10;

/// Panels the register kernel takes at a time: 2 for the AVX-512 kernel
/// (32 rows), else 1.
int64_t panelsPerStep();

/// C[M×N] = A·B for rows [panel·16, (panel + panelsPerStep())·16) ∩ [0, M)
/// of A, with A packed (packedIndex), B row-major with leading dimension
/// ldb, C row-major with leading dimension ldc (C points at row 0). One
/// thread. `panel` is a multiple of panelsPerStep(). With `fetchNext`, the
/// next step's panels (the caller's next) are fetched into L2 meanwhile:
/// for weights too large to stay cached, which would otherwise arrive from
/// memory as they are read.
void gemmPanels(const float *packedA, int64_t panel, int64_t M, int64_t K, const float *B,
                int64_t ldb, int64_t N, float *C, int64_t ldc, bool fetchNext = false);

/// Packs row-major A (M×K, leading dimension lda) into blocks of
/// `blockRows` rows: block b holds K groups of blockRows floats, one per
/// row; rows past M are zero. Both the panels here and the strips of
/// StripGemm.h are this layout.
void packRowBlocks(const float *A, int64_t lda, int64_t M, int64_t K, int64_t blockRows,
                   float *out);

/// Packs row-major A (M×K, leading dimension lda) into `out`
/// (packedSize(M, K) floats); rows past M are zero.
void packRows(const float *A, int64_t lda, int64_t M, int64_t K, float *out);

/// Writes columns [n0, n0 + cols) of B (cols ≤ kColumnStrip) as a strip:
/// K groups of kColumnStrip floats, zeros past `cols`. Called from several
/// threads at once, for different strips.
using ColumnStripFn = llvm::function_ref<void(int64_t n0, int64_t cols, float *strip)>;

/// Floats of scratch the products below need for N columns (rows of X)
/// and depth K: B as strips of 6 columns.
inline size_t packedColumnsScratch(int64_t K, int64_t N) {
  return size_t((N + kColumnStrip - 1) / kColumnStrip * kColumnStrip * K);
}

/// C[M×N] = A·B with A packed, for few columns and a long K (deep
/// convolution layers): B is produced once as strips of 6 columns by
/// `fill` (a copy, or patches gathered for a convolution) into `scratch`
/// (packedColumnsScratch(K, N) floats), then the panels of A are shared
/// out over at most maxThreads OpenMP threads (0: any), each streaming its
/// panel once while the packed B stays in cache.
void gemmPackedFewColumns(const float *packedA, int64_t M, int64_t K, int64_t N,
                          ColumnStripFn fill, float *C, int64_t ldc, float *scratch,
                          int maxThreads = 0);

/// The same with B row-major (leading dimension ldb), its row k scaled by
/// rowScale[k] as it is copied (when given).
void gemmPackedFewColumns(const float *packedA, int64_t M, int64_t K, const float *B, int64_t ldb,
                          int64_t N, float *C, int64_t ldc, float *scratch,
                          const float *rowScale = nullptr);

/// Y[rows × M] (leading dimension ldy) = X[rows × K] (ldx) · Aᵀ with A
/// (M × K) packed: a linear layer on few rows (a small transformer's
/// tokens), where sgemm would pack the whole weight again on every call.
/// The rows of X are packed as strips of 6 columns and each 16 × 6 block is
/// stored transposed, as 6 runs of 16 outputs. `scratch` holds
/// packedColumnsScratch(K, rows) floats.
void gemmPackedRows(const float *packedA, int64_t M, int64_t K, const float *X, int64_t ldx,
                    int64_t rows, float *Y, int64_t ldy, float *scratch);

/// Rows up to which linear layers and attention projections use
/// gemmPackedRows; longer inputs amortize sgemm's own packing.
constexpr int64_t kPackedRowsMax = 256;

} // namespace kc::rt
