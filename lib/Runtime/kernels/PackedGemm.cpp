//===- PackedGemm.cpp - GEMM with a pre-packed left operand ---------------===//
//
// Shares the products out over the threads and produces B's strips; the
// register blocks are the micro-kernel table's f32_gemm_panel (16×6 with
// AVX2, 32×12 with AVX-512).
//
//===----------------------------------------------------------------------===//
#include "PackedGemm.h"
#include "Parallel.h"
#include "../ukernels/MicroKernels.h"

#include <algorithm>
#include <cstring>
#include <omp.h>

namespace kc::rt {
namespace {

constexpr int kCols = int(kColumnStrip);

/// dst[0..6) = src[0..6): fixed-size copies the compiler makes two vector
/// moves (a copy_n of the 6 became a memcpy call per row).
inline void copySix(float *dst, const float *src) {
  std::memcpy(dst, src, 4 * sizeof(float));
  std::memcpy(dst + 4, src + 4, 2 * sizeof(float));
}

/// Fetching `bytes` over `blocks` blocks of K steps each.
uk::Prefetch spreadOver(const void *from, int64_t bytes, int64_t blocks, int64_t K) {
  int64_t slice = (bytes + blocks - 1) / blocks;
  return {static_cast<const char *>(from), (slice << 16) / K, slice};
}

/// Multiply-adds from which a product is shared over the threads: below,
/// waking the team costs more than it saves (a 16-token linear layer of
/// 64x128 is 131k).
constexpr int64_t kParallelWork = int64_t(1) << 18;

/// A (packed) times N columns of B produced as strips of 6 by `fill`: one
/// team fills the strips and then shares out the panels of A (filled by one
/// thread, B took a sixth of a 14x14 layer's time while the other waited).
/// C is M × N (ldc) or, with RowsOut, N × M.
template <bool RowsOut>
void gemmPackedStrips(const float *packedA, int64_t M, int64_t K, int64_t N, ColumnStripFn fill,
                      float *C, int64_t ldc, float *packed, int maxThreads) {
  // Each strip is K groups of 6 floats (zeros past N), so the kernel reads
  // B as one contiguous stream with leading dimension 6.
  int64_t strips = (N + kCols - 1) / kCols;
  // Row groups of one panel, or two for the AVX-512 kernel.
  int64_t groupRows = kPanelRows * panelsPerStep();
  int64_t groups = (M + groupRows - 1) / groupRows;
  int64_t groupBytes = groupRows * K * int64_t(sizeof(float));
  // A product of one strip of columns does so little work per byte of A
  // that the fetch instructions cost nothing beside it, and its weight is
  // read once a run, from memory in a model larger than the caches
  // (squeeze-and-excitation's 1x1 layers).
  bool fetchAhead = groups * groupBytes >= kFetchAheadBytes || N <= kCols;
  uk::PanelColumns B{packed, kCols, K * kCols};
  const uk::MicroKernels &uks = uk::microKernels();
  // Rows of group gb times the columns of strips [s0, s1).
  auto product = [&](int64_t gb, int64_t s0, int64_t s1, bool fetch) {
    int64_t m0 = gb * groupRows, rows = std::min(groupRows, M - m0);
    int64_t n0 = s0 * kCols, n1 = std::min(N, s1 * kCols);
    float *c = RowsOut ? C + n0 * ldc + m0 : C + m0 * ldc + n0;
    const float *a = packedA + m0 * K;
    // The next group of a weight too large to stay cached is fetched into
    // L2 a slice per block of columns. Left to the hardware, it came from
    // memory while the first block ran, which then waited on it.
    if (fetch)
      uks.gemmPanel[RowsOut][true](
          a, K, B, n0, n1, c, ldc, rows,
          spreadOver(a + groupRows * K, groupBytes, uks.panelColumnBlocks(n1 - n0), K));
    else
      uks.gemmPanel[RowsOut][false](a, K, B, n0, n1, c, ldc, rows, {});
  };
  parallelRegion(M * K * N >= kParallelWork, maxThreads, [&] {
    int threads = omp_get_num_threads(), t = omp_get_thread_num();
    // With more columns than rows, each thread fills the strips it then
    // multiplies by every group: B stays in the thread's own cache, and
    // fill and product need no barrier between them. Shared out by groups,
    // each thread read every strip, half of them from the other core's
    // cache (96x576x196 on 2 threads: 0.112 to 0.089 ms).
    if (threads > 1 && strips >= threads && strips * kCols > groups * groupRows) {
      int64_t s0 = strips * t / threads, s1 = strips * (t + 1) / threads;
      for (int64_t s = s0; s < s1; ++s)
        fill(s * kCols, std::min<int64_t>(kCols, N - s * kCols), packed + s * K * kCols);
      for (int64_t gb = 0; gb < groups; ++gb)
        product(gb, s0, s1, fetchAhead && gb + 1 < groups);
      return;
    }
#pragma omp for schedule(static)
    for (int64_t s = 0; s < strips; ++s)
      fill(s * kCols, std::min<int64_t>(kCols, N - s * kCols), packed + s * K * kCols);
    // Groups shared out whole leave the threads uneven where their number
    // is not a multiple of the threads' (96 outputs are 3 groups of 32 on
    // 2 threads); then each group's strips are split in as many parts.
    int64_t parts = groups % threads ? std::min<int64_t>(threads, strips) : 1;
#pragma omp for schedule(static)
    for (int64_t item = 0; item < groups * parts; ++item) {
      int64_t gb = item / parts, part = item % parts;
      // This thread's next item, with a static schedule, is the next group.
      product(gb, strips * part / parts, strips * (part + 1) / parts,
              fetchAhead && part == parts - 1 && gb + 1 < groups);
    }
  });
}

} // namespace

int64_t panelsPerStep() { return uk::microKernels().panelsPerStep; }

void gemmPanels(const float *packedA, int64_t panel, int64_t M, int64_t K, const float *B,
                int64_t ldb, int64_t N, float *C, int64_t ldc, bool fetchNext) {
  int64_t stepRows = kPanelRows * panelsPerStep();
  int64_t r0 = panel * kPanelRows, rows = std::min(stepRows, M - r0);
  const float *a = packedA + r0 * K;
  uk::PanelColumns columns{B, ldb};
  const uk::MicroKernels &uks = uk::microKernels();
  if (fetchNext) {
    int64_t bytes = stepRows * K * int64_t(sizeof(float));
    uks.gemmPanel[false][true](a, K, columns, 0, N, C + r0 * ldc, ldc, rows,
                               spreadOver(a + stepRows * K, bytes, uks.panelColumnBlocks(N), K));
  } else {
    uks.gemmPanel[false][false](a, K, columns, 0, N, C + r0 * ldc, ldc, rows, {});
  }
}

void packRowBlocks(const float *A, int64_t lda, int64_t M, int64_t K, int64_t blockRows,
                   float *out) {
  int64_t blocks = (M + blockRows - 1) / blockRows;
  // Block by block, writing each block's floats in order.
  parallelFor(blocks, true, [&](int64_t b) {
    float *o = out + b * blockRows * K;
    int64_t rows = std::min(blockRows, M - b * blockRows);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t r = 0; r < blockRows; ++r)
        o[k * blockRows + r] = r < rows ? A[(b * blockRows + r) * lda + k] : 0.f;
  });
}

void packRows(const float *A, int64_t lda, int64_t M, int64_t K, float *out) {
  packRowBlocks(A, lda, M, K, kPanelRows, out);
}

void gemmPackedFewColumns(const float *packedA, int64_t M, int64_t K, int64_t N,
                          ColumnStripFn fill, float *C, int64_t ldc, float *scratch,
                          int maxThreads) {
  gemmPackedStrips<false>(packedA, M, K, N, fill, C, ldc, scratch, maxThreads);
}

void gemmPackedFewColumns(const float *packedA, int64_t M, int64_t K, const float *B, int64_t ldb,
                          int64_t N, float *C, int64_t ldc, float *scratch, const float *rowScale) {
  if (rowScale) {
    auto scaled = [&](int64_t n0, int64_t cols, float *o) {
      const float *b = B + n0;
      for (int64_t k = 0; k < K; ++k) {
        float s = rowScale[k];
        for (int64_t j = 0; j < kCols; ++j)
          o[k * kCols + j] = j < cols ? b[k * ldb + j] * s : 0.f;
      }
    };
    return gemmPackedFewColumns(packedA, M, K, N, scaled, C, ldc, scratch);
  }
  // A strip's row k is 6 consecutive floats of B's row k; only the last
  // strip may be short. (A test per float kept the copy scalar: 3.5 % of
  // mobilenet_v2's samples. A copy_n of the 6 became a memcpy call per
  // row: 4.4 %.)
  auto copy = [&](int64_t n0, int64_t cols, float *o) {
    const float *b = B + n0;
    if (cols == kCols) {
      for (int64_t k = 0; k < K; ++k)
        copySix(o + k * kCols, b + k * ldb);
      return;
    }
    // Column by column after one fill: a copy and a fill per row were two
    // library calls per float of a single column (1x1 planes).
    std::fill(o, o + K * kCols, 0.f);
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t k = 0; k < K; ++k)
        o[k * kCols + j] = b[k * ldb + j];
  };
  gemmPackedFewColumns(packedA, M, K, N, copy, C, ldc, scratch);
}

void gemmPackedRows(const float *packedA, int64_t M, int64_t K, const float *X, int64_t ldx,
                    int64_t rows, float *Y, int64_t ldy, float *scratch) {
  // Rows of X become the columns of strips; columns past the last row are
  // zero.
  auto transpose = [&](int64_t n0, int64_t n, float *o) {
    for (int64_t j = 0; j < kCols; ++j) {
      if (j < n) {
        const float *x = X + (n0 + j) * ldx;
        for (int64_t k = 0; k < K; ++k)
          o[k * kCols + j] = x[k];
      } else {
        for (int64_t k = 0; k < K; ++k)
          o[k * kCols + j] = 0.f;
      }
    }
  };
  gemmPackedStrips<true>(packedA, M, K, rows, transpose, Y, ldy, scratch, 0);
}

} // namespace kc::rt
