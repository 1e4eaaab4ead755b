//===- StripGemm.cpp - GEMM for wide outputs with packed weights ----------===//
//
// The register kernel computes a 6×16 block of C: per k, two 8-float loads
// of B, six broadcasts of A, twelve fused multiply-adds into twelve
// accumulators that start at the bias. Without AVX2 and FMA a plain loop
// computes the same.
//
//===----------------------------------------------------------------------===//
#include "StripGemm.h"

#include <limits>
#include <omp.h>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace kc::rt {
namespace {

constexpr int64_t kTileCols = 16;
/// Columns of B copied per block: 4 tiles, so each strip of A read from
/// cache serves 64 columns.
constexpr int64_t kBlockCols = 4 * kTileCols;

/// ReLU and ReLU6 are a clamp to [lo, hi], done in registers; other
/// activations run over the tile after it is stored.
bool isClamp(Act act) { return act == Act::None || act == Act::Relu || act == Act::Relu6; }

/// C tile = A strip (6 rows) × B tile (K rows of 16, contiguous) + bias,
/// clamped to [lo, hi]; `rows` × `cols` of it written.
void tile(const float *a, const float *b, int64_t K, const float *bias, float lo, float hi,
          float *c, int64_t ldc, int64_t rows, int64_t cols) {
  alignas(32) float t[kStripRows][kTileCols];
  bool full = rows == kStripRows && cols == kTileCols;
#if defined(__AVX2__) && defined(__FMA__)
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
    __m256 b0 = _mm256_loadu_ps(b + k * kTileCols), b1 = _mm256_loadu_ps(b + k * kTileCols + 8);
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
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const __m256 acc[kStripRows][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                                     {c30, c31}, {c40, c41}, {c50, c51}};
  for (int64_t r = 0; r < kStripRows; ++r) {
    __m256 v0 = _mm256_min_ps(_mm256_max_ps(acc[r][0], vlo), vhi);
    __m256 v1 = _mm256_min_ps(_mm256_max_ps(acc[r][1], vlo), vhi);
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
        t[r][j] += a[k * kStripRows + r] * b[k * kTileCols + j];
  for (int64_t r = 0; r < kStripRows; ++r)
    for (int64_t j = 0; j < kTileCols; ++j)
      t[r][j] = std::min(std::max(t[r][j], lo), hi);
#endif
  for (int64_t r = 0; r < rows; ++r)
    std::copy(t[r], t[r] + cols, c + r * ldc);
}

/// Copies columns [n0, n0 + cols) of B into tiles of K×16 (zeros past
/// `cols`).
void packColumns(const float *B, int64_t ldb, int64_t K, int64_t n0, int64_t cols, float *out) {
  for (int64_t t0 = 0; t0 < cols; t0 += kTileCols) {
    int64_t w = std::min(kTileCols, cols - t0);
    float *o = out + t0 * K;
    const float *src = B + n0 + t0;
    if (w == kTileCols) {
      for (int64_t k = 0; k < K; ++k)
        std::memcpy(o + k * kTileCols, src + k * ldb, sizeof(float) * kTileCols);
    } else {
      for (int64_t k = 0; k < K; ++k) {
        std::memcpy(o + k * kTileCols, src + k * ldb, sizeof(float) * size_t(w));
        std::fill(o + k * kTileCols + w, o + (k + 1) * kTileCols, 0.f);
      }
    }
  }
}

} // namespace

void packStrips(const float *A, int64_t lda, int64_t M, int64_t K, float *out) {
  int64_t strips = (M + kStripRows - 1) / kStripRows;
  for (int64_t s = 0; s < strips; ++s) {
    float *o = out + s * kStripRows * K;
    int64_t rows = std::min(kStripRows, M - s * kStripRows);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t r = 0; r < kStripRows; ++r)
        o[k * kStripRows + r] = r < rows ? A[(s * kStripRows + r) * lda + k] : 0.f;
  }
}

void gemmStrips(const float *packedA, int64_t M, int64_t K, const float *B, int64_t ldb, int64_t N,
                float *C, int64_t ldc, const float *bias, Act act, float slope, bool parallel) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  bool clamp = isClamp(act);
  float lo = act == Act::None || !clamp ? -inf : 0.f, hi = act == Act::Relu6 ? 6.f : inf;
  int64_t blocks = (N + kBlockCols - 1) / kBlockCols;
  int64_t strips = (M + kStripRows - 1) / kStripRows;
  // Work items are blocks of columns; when there are too few of them to
  // keep every thread busy (outputs of 7x7), the strips are split as well,
  // each item then packing its block of B itself.
  int threads = parallel && !omp_in_parallel() ? omp_get_max_threads() : 1;
  int64_t groups = blocks >= 2 * threads ? 1 : std::min(strips, (2 * threads + blocks - 1) / blocks);
  int64_t perGroup = (strips + groups - 1) / groups;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    // One block of B per thread, grown once and then reused.
    thread_local std::vector<float> buffer;
    if (buffer.size() < size_t(K * kBlockCols))
      buffer.resize(size_t(K * kBlockCols));
    float *packed = buffer.data();
#pragma omp for schedule(static)
    for (int64_t item = 0; item < blocks * groups; ++item) {
      int64_t blk = item / groups, s0 = item % groups * perGroup;
      int64_t n0 = blk * kBlockCols, cols = std::min(kBlockCols, N - n0);
      packColumns(B, ldb, K, n0, cols, packed);
      for (int64_t s = s0; s < std::min(strips, s0 + perGroup); ++s) {
        int64_t m0 = s * kStripRows, rows = std::min(kStripRows, M - m0);
        const float *a = packedA + m0 * K;
        for (int64_t t0 = 0; t0 < cols; t0 += kTileCols) {
          int64_t w = std::min(kTileCols, cols - t0);
          float *c = C + m0 * ldc + n0 + t0;
          tile(a, packed + t0 * K, K, bias ? bias + m0 : nullptr, lo, hi, c, ldc, rows, w);
          if (!clamp)
            for (int64_t r = 0; r < rows; ++r)
              biasActivationRow(c + r * ldc, w, 0.f, act, slope);
        }
      }
    }
  }
}

} // namespace kc::rt
