//===- StripGemm.cpp - GEMM for wide outputs with packed weights ----------===//
//
// The register kernel computes a 6×16 block of C: per k, two 8-float loads
// of B, six broadcasts of A, twelve fused multiply-adds into twelve
// accumulators that start at the bias; the activation is applied in
// registers before the one store. Without AVX2 and FMA a plain loop
// computes the same.
//
//===----------------------------------------------------------------------===//
#include "StripGemm.h"
#include "PackedGemm.h"
#include "VecMath.h"

#include <omp.h>
#include <vector>

namespace kc::rt {
namespace {

constexpr int64_t kTileCols = 16;
static_assert(kStripBlockCols % kTileCols == 0 && kStripBlockLd >= kStripBlockCols);

/// C tile = act(A strip (6 rows) × B tile (K rows of 16, ldb apart) +
/// bias); `rows` × `cols` of it written.
template <Act A>
void tile(const float *a, const float *b, int64_t ldb, int64_t K, const float *bias, float slope,
          float *c, int64_t ldc, int64_t rows, int64_t cols) {
  alignas(32) float t[kStripRows][kTileCols];
#ifdef KC_HAVE_VEC8
  bool full = rows == kStripRows && cols == kTileCols;
  // Named accumulators: with arrays GCC spills them to the stack every k.
  __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
  {
    float bv[kStripRows] = {};
    for (int64_t r = 0; r < rows && bias; ++r)
      bv[r] = bias[r];
    c00 = c01 = _mm256_set1_ps(bv[0]);
    c10 = c11 = _mm256_set1_ps(bv[1]);
    c20 = c21 = _mm256_set1_ps(bv[2]);
    c30 = c31 = _mm256_set1_ps(bv[3]);
    c40 = c41 = _mm256_set1_ps(bv[4]);
    c50 = c51 = _mm256_set1_ps(bv[5]);
  }
  for (int64_t k = 0; k < K; ++k) {
    __m256 b0 = _mm256_loadu_ps(b + k * ldb), b1 = _mm256_loadu_ps(b + k * ldb + 8);
    const float *ak = a + k * kStripRows;
    __m256 ar;
#define KC_FMA_ROW(R)                                                                              \
  ar = _mm256_broadcast_ss(ak + R);                                                                \
  c##R##0 = _mm256_fmadd_ps(ar, b0, c##R##0);                                                      \
  c##R##1 = _mm256_fmadd_ps(ar, b1, c##R##1);
    KC_FMA_ROW(0)
    KC_FMA_ROW(1)
    KC_FMA_ROW(2)
    KC_FMA_ROW(3)
    KC_FMA_ROW(4)
    KC_FMA_ROW(5)
#undef KC_FMA_ROW
  }
  const __m256 acc[kStripRows][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                                     {c30, c31}, {c40, c41}, {c50, c51}};
  for (int64_t r = 0; r < kStripRows; ++r) {
    __m256 v0 = act8(A, acc[r][0], slope), v1 = act8(A, acc[r][1], slope);
    if (full) {
      _mm256_storeu_ps(c + r * ldc, v0);
      _mm256_storeu_ps(c + r * ldc + 8, v1);
    } else {
      _mm256_store_ps(t[r], v0);
      _mm256_store_ps(t[r] + 8, v1);
    }
  }
  if (full)
    return;
#else
  for (int64_t r = 0; r < kStripRows; ++r)
    for (int64_t j = 0; j < kTileCols; ++j)
      t[r][j] = bias && r < rows ? bias[r] : 0.f;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t r = 0; r < kStripRows; ++r)
      for (int64_t j = 0; j < kTileCols; ++j)
        t[r][j] += a[k * kStripRows + r] * b[k * ldb + j];
  for (int64_t r = 0; r < kStripRows; ++r)
    for (int64_t j = 0; j < kTileCols; ++j)
      t[r][j] = applyAct(A, t[r][j], slope);
#endif
  for (int64_t r = 0; r < rows; ++r)
    std::copy(t[r], t[r] + cols, c + r * ldc);
}

} // namespace

void packStrips(const float *A, int64_t lda, int64_t M, int64_t K, float *out) {
  packRowBlocks(A, lda, M, K, kStripRows, out);
}

namespace {
template <Act A>
void gemmStripsT(const float *packedA, int64_t M, int64_t K, int64_t N, StripBlockFn fill, float *C,
                 int64_t ldc, const float *bias, float slope, bool parallel) {
  int64_t blocks = (N + kStripBlockCols - 1) / kStripBlockCols;
  int64_t strips = (M + kStripRows - 1) / kStripRows;
  // Work items are blocks of columns; when there are too few of them to
  // keep every thread busy (outputs of 7x7), the strips are split as well,
  // each item then filling its block of B itself.
  int threads = parallel && !omp_in_parallel() ? omp_get_max_threads() : 1;
  int64_t groups =
      blocks >= 2 * threads ? 1 : std::min(strips, (2 * threads + blocks - 1) / blocks);
  int64_t perGroup = (strips + groups - 1) / groups;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    // One block of B per thread, grown once and then reused. Columns past
    // a short block's end hold stale values; their products are computed
    // and never stored.
    thread_local std::vector<float> buffer;
    if (buffer.size() < size_t(K * kStripBlockLd + 16))
      buffer.resize(size_t(K * kStripBlockLd + 16));
    // Rows start on cache lines, so a tile's row of 16 floats is one line.
    float *block = buffer.data() + (16 - reinterpret_cast<uintptr_t>(buffer.data()) / 4 % 16) % 16;
#pragma omp for schedule(static)
    for (int64_t item = 0; item < blocks * groups; ++item) {
      int64_t blk = item / groups, s0 = item % groups * perGroup;
      int64_t n0 = blk * kStripBlockCols, cols = std::min(kStripBlockCols, N - n0);
      fill(n0, cols, block);
      for (int64_t s = s0; s < std::min(strips, s0 + perGroup); ++s) {
        int64_t m0 = s * kStripRows, rows = std::min(kStripRows, M - m0);
        const float *a = packedA + m0 * K;
        for (int64_t t0 = 0; t0 < cols; t0 += kTileCols)
          tile<A>(a, block + t0, kStripBlockLd, K, bias ? bias + m0 : nullptr, slope,
                  C + m0 * ldc + n0 + t0, ldc, rows, std::min(kTileCols, cols - t0));
      }
    }
  }
}
} // namespace

void gemmStrips(const float *packedA, int64_t M, int64_t K, int64_t N, StripBlockFn fill, float *C,
                int64_t ldc, const float *bias, Act act, float slope, bool parallel) {
  switch (act) {
#define KC_CASE(A)                                                                                 \
  case Act::A:                                                                                     \
    return gemmStripsT<Act::A>(packedA, M, K, N, fill, C, ldc, bias, slope, parallel);
    KC_CASE(None)
    KC_CASE(Relu)
    KC_CASE(Relu6)
    KC_CASE(Silu)
    KC_CASE(Sigmoid)
    KC_CASE(Hardswish)
    KC_CASE(LeakyRelu)
#undef KC_CASE
  }
}

void gemmStrips(const float *packedA, int64_t M, int64_t K, const float *B, int64_t ldb, int64_t N,
                float *C, int64_t ldc, const float *bias, Act act, float slope, bool parallel) {
  auto copy = [&](int64_t n0, int64_t cols, float *block) {
    for (int64_t k = 0; k < K; ++k)
      std::memcpy(block + k * kStripBlockLd, B + k * ldb + n0, sizeof(float) * size_t(cols));
  };
  gemmStrips(packedA, M, K, N, copy, C, ldc, bias, act, slope, parallel);
}

} // namespace kc::rt
