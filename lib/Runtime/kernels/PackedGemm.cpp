//===- PackedGemm.cpp - GEMM with a pre-packed left operand ---------------===//
//
// The register kernel computes a 16×6 block of C: two 8-float vectors of A
// per k, six broadcasts of B, twelve fused multiply-adds, twelve
// accumulators in registers (the classic Haswell blocking, which x86-64-v3
// guarantees). On cores with AVX-512 (Isa.h) a 32×12 block: two 16-float
// vectors of A, twelve broadcasts, 24 accumulators. Without AVX2 and FMA a
// plain loop computes the same.
//
//===----------------------------------------------------------------------===//
#include "PackedGemm.h"
#include "Isa.h"
#include "Parallel.h"

#include <algorithm>
#include <omp.h>
#include <vector>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace kc::rt {
namespace {

constexpr int kCols = int(kColumnStrip);

/// dst[0..6) = src[0..6), by two vector moves (SSE2 is in every x86-64).
inline void copySix(float *dst, const float *src) {
#if defined(__SSE2__)
  _mm_storeu_ps(dst, _mm_loadu_ps(src));
  // The unaligned 64-bit forms (_mm_load_sd would read a double in place).
  _mm_storel_epi64(reinterpret_cast<__m128i *>(dst + 4),
                   _mm_loadl_epi64(reinterpret_cast<const __m128i *>(src + 4)));
#else
  for (int i = 0; i < kCols; ++i)
    dst[i] = src[i];
#endif
}

/// Bytes to fetch into L2 while blocks run: from `from`, spread evenly over
/// a block's K steps (step k touches from + (k * step >> 16)); each next
/// block of a panel starts `advance` bytes further.
struct Prefetch {
  const char *from = nullptr;
  int64_t step = 0, advance = 0;
};

/// Fetching `bytes` over `blocks` blocks of K steps each.
Prefetch spreadOver(const void *from, int64_t bytes, int64_t blocks, int64_t K) {
  int64_t slice = (bytes + blocks - 1) / blocks;
  return {static_cast<const char *>(from), (slice << 16) / K, slice};
}

/// C block = A panel (rows 16) × B[:, 0:NR], `rows` of the 16 written;
/// with RowsOut it is written transposed, column j of the block as row j
/// of C (16 consecutive floats).
template <int NR, bool RowsOut = false, bool Fetch = false>
void block(const float *a, const float *b, int64_t ldb, int64_t K, float *c, int64_t ldc,
           int64_t rows, const Prefetch &pf) {
  alignas(32) float t[NR][kPanelRows];
#if defined(__AVX2__) && defined(__FMA__)
  // Named accumulators: with arrays GCC spills them to the stack every k.
  const __m256 z = _mm256_setzero_ps();
  __m256 l0 = z, h0 = z, l1 = z, h1 = z, l2 = z, h2 = z, l3 = z, h3 = z, l4 = z, h4 = z, l5 = z,
         h5 = z;
  for (int64_t k = 0; k < K; ++k) {
    if constexpr (Fetch)
      _mm_prefetch(pf.from + ((k * pf.step) >> 16), _MM_HINT_T1);
    __m256 a0 = _mm256_loadu_ps(a + k * kPanelRows), a1 = _mm256_loadu_ps(a + k * kPanelRows + 8);
    const float *bk = b + k * ldb;
    __m256 bj;
#define KC_FMA_COLUMN(J)                                                                           \
  if constexpr (NR > J) {                                                                          \
    bj = _mm256_broadcast_ss(bk + J);                                                              \
    l##J = _mm256_fmadd_ps(a0, bj, l##J);                                                          \
    h##J = _mm256_fmadd_ps(a1, bj, h##J);                                                          \
  }
    KC_FMA_COLUMN(0)
    KC_FMA_COLUMN(1)
    KC_FMA_COLUMN(2)
    KC_FMA_COLUMN(3)
    KC_FMA_COLUMN(4)
    KC_FMA_COLUMN(5)
#undef KC_FMA_COLUMN
  }
  const __m256 lo[kCols] = {l0, l1, l2, l3, l4, l5}, hi[kCols] = {h0, h1, h2, h3, h4, h5};
  for (int j = 0; j < NR; ++j) {
    _mm256_store_ps(t[j], lo[j]);
    _mm256_store_ps(t[j] + 8, hi[j]);
  }
#else
  for (int j = 0; j < NR; ++j)
    std::fill(t[j], t[j] + kPanelRows, 0.f);
  for (int64_t k = 0; k < K; ++k)
    for (int j = 0; j < NR; ++j)
      for (int r = 0; r < kPanelRows; ++r)
        t[j][r] += a[k * kPanelRows + r] * b[k * ldb + j];
#endif
  if constexpr (RowsOut) {
    for (int j = 0; j < NR; ++j)
      std::copy(t[j], t[j] + rows, c + j * ldc);
  } else {
    for (int64_t r = 0; r < rows; ++r)
      for (int j = 0; j < NR; ++j)
        c[r * ldc + j] = t[j][r];
  }
}

/// The A panel at `a` (`rows` of its 16 rows) times B's N columns (row-major,
/// leading dimension ldb), 6 columns at a time and then the rest; C points
/// at the panel's first output, laid out as block() writes it.
template <bool RowsOut, bool Fetch = false>
void panelColumns(const float *a, const float *B, int64_t ldb, int64_t K, int64_t N, float *c,
                  int64_t ldc, int64_t rows, const Prefetch &pf = {}) {
  auto at = [&](int64_t n) { return RowsOut ? c + n * ldc : c + n; };
  Prefetch f = pf;
  int64_t n = 0;
  for (; n + kCols <= N; n += kCols, f.from += f.advance)
    block<kCols, RowsOut, Fetch>(a, B + n, ldb, K, at(n), ldc, rows, f);
  switch (N - n) {
  case 5: block<5, RowsOut, Fetch>(a, B + n, ldb, K, at(n), ldc, rows, f); break;
  case 4: block<4, RowsOut, Fetch>(a, B + n, ldb, K, at(n), ldc, rows, f); break;
  case 3: block<3, RowsOut, Fetch>(a, B + n, ldb, K, at(n), ldc, rows, f); break;
  case 2: block<2, RowsOut, Fetch>(a, B + n, ldb, K, at(n), ldc, rows, f); break;
  case 1: block<1, RowsOut, Fetch>(a, B + n, ldb, K, at(n), ldc, rows, f); break;
  default: break;
  }
}

/// Where B's columns are: row-major (column n at base + n, rows ldb apart),
/// or as strips of 6 columns (stripStride floats apart, each K rows of 6).
struct Columns {
  const float *base;
  int64_t ldb, stripStride = 0;
  const float *at(int64_t n) const {
    return stripStride ? base + n / kCols * stripStride + n % kCols : base + n;
  }
};

#ifdef KC_HAVE_AVX512_KERNELS
/// block() with AVX-512: P panels (P = 1 or 2, `panelStride` floats apart)
/// × NR columns (NR ≤ 12; columns 6 to 11 read from b2), a 16-float vector
/// per panel and column. Per k, two vectors of A and twelve broadcasts of
/// B feed 24 fused multiply-adds. With six columns, as the AVX2 block has,
/// a long K streams A from L2 twice as often per multiply-add, and that
/// set the pace (one thread, 512x4608x49: 2.32 to 1.77 ms).
template <int NR, int P, bool RowsOut, bool Fetch>
KC_AVX512 void block512(const float *a, int64_t panelStride, const float *b, const float *b2,
                        int64_t ldb, int64_t K, float *c, int64_t ldc, int64_t rows,
                        const Prefetch &pf) {
  static_assert(NR >= 1 && NR <= 2 * kCols);
  alignas(64) float t[NR][2 * kPanelRows];
  const __m512 z = _mm512_setzero_ps();
  __m512 x0 = z, y0 = z, x1 = z, y1 = z, x2 = z, y2 = z, x3 = z, y3 = z, x4 = z, y4 = z, x5 = z,
         y5 = z, x6 = z, y6 = z, x7 = z, y7 = z, x8 = z, y8 = z, x9 = z, y9 = z, x10 = z, y10 = z,
         x11 = z, y11 = z;
  const float *a1 = a + panelStride;
  for (int64_t k = 0; k < K; ++k) {
    if constexpr (Fetch)
      _mm_prefetch(pf.from + ((k * pf.step) >> 16), _MM_HINT_T1);
    __m512 a0v = _mm512_loadu_ps(a + k * kPanelRows);
    __m512 a1v = z;
    if constexpr (P == 2)
      a1v = _mm512_loadu_ps(a1 + k * kPanelRows);
    const float *bk = b + k * ldb, *b2k = b2 + k * ldb;
    __m512 bj;
#define KC_FMA_COLUMN(J, SRC)                                                                      \
  if constexpr (NR > J) {                                                                          \
    bj = _mm512_set1_ps(SRC);                                                                      \
    x##J = _mm512_fmadd_ps(a0v, bj, x##J);                                                         \
    if constexpr (P == 2)                                                                          \
      y##J = _mm512_fmadd_ps(a1v, bj, y##J);                                                       \
  }
    KC_FMA_COLUMN(0, bk[0])
    KC_FMA_COLUMN(1, bk[1])
    KC_FMA_COLUMN(2, bk[2])
    KC_FMA_COLUMN(3, bk[3])
    KC_FMA_COLUMN(4, bk[4])
    KC_FMA_COLUMN(5, bk[5])
    KC_FMA_COLUMN(6, b2k[0])
    KC_FMA_COLUMN(7, b2k[1])
    KC_FMA_COLUMN(8, b2k[2])
    KC_FMA_COLUMN(9, b2k[3])
    KC_FMA_COLUMN(10, b2k[4])
    KC_FMA_COLUMN(11, b2k[5])
#undef KC_FMA_COLUMN
  }
  const __m512 xs[2 * kCols] = {x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11};
  const __m512 ys[2 * kCols] = {y0, y1, y2, y3, y4, y5, y6, y7, y8, y9, y10, y11};
  for (int j = 0; j < NR; ++j) {
    _mm512_store_ps(t[j], xs[j]);
    if constexpr (P == 2)
      _mm512_store_ps(t[j] + kPanelRows, ys[j]);
  }
  if constexpr (RowsOut) {
    for (int j = 0; j < NR; ++j)
      std::copy(t[j], t[j] + rows, c + j * ldc);
  } else {
    for (int64_t r = 0; r < rows; ++r)
      for (int j = 0; j < NR; ++j)
        c[r * ldc + j] = t[j][r];
  }
}

/// How the AVX-512 kernel cuts `cols` columns into blocks: `wide` blocks of
/// 12, then one of 6 if `six`, then the rest (at most 11) as one block.
/// A block streams the panels' K rows whatever its width, so a last block
/// of 1 to 5 columns cost about as much as one of 6 (a 7×7 plane's 49
/// columns: 4 blocks of 12 and 1); the last block of 12 and such a tail are
/// taken as 6 and 7 to 11 instead.
struct WideCut {
  int64_t wide;
  bool six;
};
WideCut cutWide(int64_t cols) {
  int64_t wide = cols / (2 * kCols), tail = cols % (2 * kCols);
  bool six = wide > 0 && tail > 0 && tail < kCols;
  return {wide - six, six};
}

/// panelColumns() with AVX-512, for P panels (`rows` rows in all) at `a`
/// and columns [n0, n1) of B, cut by cutWide; c is column n0's first
/// output. Blocks start on strips of 6.
template <int P, bool RowsOut, bool Fetch>
KC_AVX512 void panelColumns512(const float *a, int64_t panelStride, const Columns &B, int64_t K,
                               int64_t n0, int64_t n1, float *c, int64_t ldc, int64_t rows,
                               const Prefetch &pf) {
  Prefetch f = pf;
  WideCut cut = cutWide(n1 - n0);
  int64_t n = n0;
#define KC_BLOCK(NR)                                                                               \
  block512<NR, P, RowsOut, Fetch>(a, panelStride, B.at(n), B.at(n + kCols), B.ldb, K,             \
                                  RowsOut ? c + (n - n0) * ldc : c + (n - n0), ldc, rows, f)
  for (int64_t i = 0; i < cut.wide; ++i, n += 2 * kCols, f.from += f.advance)
    KC_BLOCK(2 * kCols);
  if (cut.six) {
    KC_BLOCK(kCols);
    n += kCols, f.from += f.advance;
  }
  switch (n1 - n) {
  case 11: KC_BLOCK(11); break;
  case 10: KC_BLOCK(10); break;
  case 9: KC_BLOCK(9); break;
  case 8: KC_BLOCK(8); break;
  case 7: KC_BLOCK(7); break;
  case 6: KC_BLOCK(6); break;
  case 5: KC_BLOCK(5); break;
  case 4: KC_BLOCK(4); break;
  case 3: KC_BLOCK(3); break;
  case 2: KC_BLOCK(2); break;
  case 1: KC_BLOCK(1); break;
  default: break;
  }
#undef KC_BLOCK
}
#endif

/// Blocks of columns the kernel takes for `cols` columns, over which
/// panelColumns512 or panelColumns spreads the fetch-ahead.
int64_t columnBlocks(int64_t cols) {
  if (!useAvx512())
    return (cols + kCols - 1) / kCols;
  WideCut cut = cutWide(cols);
  return cut.wide + cut.six + (cols > cut.wide * 2 * kCols + cut.six * kCols);
}

/// Rows [m0, m0 + rows) of A (rows ≤ 16 · panelsPerStep(), starting on a
/// panel) times columns [n0, n1) of B, into C at `c` (column n0's first
/// output) as block() lays them out; with `pf`, fetching ahead.
template <bool RowsOut, bool Fetch = false>
void rowsColumns(const float *a, int64_t K, const Columns &B, int64_t n0, int64_t n1, float *c,
                 int64_t ldc, int64_t rows, const Prefetch &pf = {}) {
#ifdef KC_HAVE_AVX512_KERNELS
  if (useAvx512()) {
    if (rows > kPanelRows)
      panelColumns512<2, RowsOut, Fetch>(a, kPanelRows * K, B, K, n0, n1, c, ldc, rows, pf);
    else
      panelColumns512<1, RowsOut, Fetch>(a, kPanelRows * K, B, K, n0, n1, c, ldc, rows, pf);
    return;
  }
#endif
  if (!B.stripStride) {
    panelColumns<RowsOut, Fetch>(a, B.at(n0), B.ldb, K, n1 - n0, c, ldc, rows, pf);
    return;
  }
  // Strip by strip (n0 starts one).
  Prefetch f = pf;
  for (int64_t n = n0; n < n1; n += kCols, f.from += f.advance)
    panelColumns<RowsOut, Fetch>(a, B.at(n), kCols, K, std::min<int64_t>(kCols, n1 - n),
                                 RowsOut ? c + (n - n0) * ldc : c + (n - n0), ldc, rows, f);
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
                      float *C, int64_t ldc) {
  // Each strip is K groups of 6 floats (zeros past N), so the kernel reads
  // B as one contiguous stream with leading dimension 6.
  int64_t strips = (N + kCols - 1) / kCols;
  thread_local std::vector<float> buffer; // grows once, then reused
  if (buffer.size() < size_t(strips * K * kCols))
    buffer.resize(size_t(strips * K * kCols));
  float *packed = buffer.data();
  // Row groups of one panel, or two for the AVX-512 kernel.
  int64_t groupRows = kPanelRows * panelsPerStep();
  int64_t groups = (M + groupRows - 1) / groupRows;
  int64_t groupBytes = groupRows * K * int64_t(sizeof(float));
  bool fetchAhead = groups * groupBytes >= kFetchAheadBytes;
  Columns B{packed, kCols, K * kCols};
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
      rowsColumns<RowsOut, true>(
          a, K, B, n0, n1, c, ldc, rows,
          spreadOver(a + groupRows * K, groupBytes, columnBlocks(n1 - n0), K));
    else
      rowsColumns<RowsOut>(a, K, B, n0, n1, c, ldc, rows);
  };
  parallelRegion(M * K * N >= kParallelWork, [&] {
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

int64_t panelsPerStep() { return useAvx512() ? 2 : 1; }

void gemmPanels(const float *packedA, int64_t panel, int64_t M, int64_t K, const float *B,
                int64_t ldb, int64_t N, float *C, int64_t ldc, bool fetchNext) {
  int64_t stepRows = kPanelRows * panelsPerStep();
  int64_t r0 = panel * kPanelRows, rows = std::min(stepRows, M - r0);
  const float *a = packedA + r0 * K;
  Columns columns{B, ldb};
  if (fetchNext) {
    int64_t bytes = stepRows * K * int64_t(sizeof(float));
    rowsColumns<false, true>(a, K, columns, 0, N, C + r0 * ldc, ldc, rows,
                             spreadOver(a + stepRows * K, bytes, columnBlocks(N), K));
  } else {
    rowsColumns<false>(a, K, columns, 0, N, C + r0 * ldc, ldc, rows);
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
                          ColumnStripFn fill, float *C, int64_t ldc) {
  gemmPackedStrips<false>(packedA, M, K, N, fill, C, ldc);
}

void gemmPackedFewColumns(const float *packedA, int64_t M, int64_t K, const float *B, int64_t ldb,
                          int64_t N, float *C, int64_t ldc) {
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
    for (int64_t k = 0; k < K; ++k) {
      std::copy_n(b + k * ldb, cols, o + k * kCols);
      std::fill(o + k * kCols + cols, o + (k + 1) * kCols, 0.f);
    }
  };
  gemmPackedFewColumns(packedA, M, K, N, copy, C, ldc);
}

void gemmPackedRows(const float *packedA, int64_t M, int64_t K, const float *X, int64_t ldx,
                    int64_t rows, float *Y, int64_t ldy) {
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
  gemmPackedStrips<true>(packedA, M, K, rows, transpose, Y, ldy);
}

} // namespace kc::rt
