//===- StripGemm.cpp - GEMM for wide outputs with packed weights ----------===//
//
// The register kernel computes a 6×16 block of C: per k, two 8-float loads
// of B, six broadcasts of A, twelve fused multiply-adds into twelve
// accumulators that start at the bias; the activation is applied in
// registers before the one store. On cores with AVX-512 (Isa.h) the block
// is 6×32, two 16-float loads of B per k. Without AVX2 and FMA a plain loop
// computes the same.
//
//===----------------------------------------------------------------------===//
#include "StripGemm.h"
#include "Isa.h"
#include "PackedGemm.h"
#include "VecMath.h"
#include "VecMath512.h"

#include "llvm/ADT/SmallVector.h"

#include <map>
#include <omp.h>
#include <tuple>
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

#ifdef KC_HAVE_AVX512_KERNELS
/// Columns of a tile of the AVX-512 kernel.
constexpr int64_t kWideTileCols = 32;
static_assert(kStripBlockCols % kWideTileCols == 0);

/// tile() with AVX-512: a 6×32 tile, per k two 16-float vectors of B and
/// six broadcasts of A into twelve accumulators; short tiles store through
/// lane masks.
template <Act A>
KC_AVX512 void tile512(const float *a, const float *b, int64_t ldb, int64_t K, const float *bias,
                       float slope, float *c, int64_t ldc, int64_t rows, int64_t cols) {
  __m512 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
  {
    float bv[kStripRows] = {};
    for (int64_t r = 0; r < rows && bias; ++r)
      bv[r] = bias[r];
    c00 = c01 = _mm512_set1_ps(bv[0]);
    c10 = c11 = _mm512_set1_ps(bv[1]);
    c20 = c21 = _mm512_set1_ps(bv[2]);
    c30 = c31 = _mm512_set1_ps(bv[3]);
    c40 = c41 = _mm512_set1_ps(bv[4]);
    c50 = c51 = _mm512_set1_ps(bv[5]);
  }
  for (int64_t k = 0; k < K; ++k) {
    __m512 b0 = _mm512_loadu_ps(b + k * ldb), b1 = _mm512_loadu_ps(b + k * ldb + 16);
    const float *ak = a + k * kStripRows;
    __m512 ar;
#define KC_FMA_ROW(R)                                                                              \
  ar = _mm512_set1_ps(ak[R]);                                                                      \
  c##R##0 = _mm512_fmadd_ps(ar, b0, c##R##0);                                                      \
  c##R##1 = _mm512_fmadd_ps(ar, b1, c##R##1);
    KC_FMA_ROW(0)
    KC_FMA_ROW(1)
    KC_FMA_ROW(2)
    KC_FMA_ROW(3)
    KC_FMA_ROW(4)
    KC_FMA_ROW(5)
#undef KC_FMA_ROW
  }
  const __m512 acc[kStripRows][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                                     {c30, c31}, {c40, c41}, {c50, c51}};
  __mmask16 lo = firstLanes(cols), hi = firstLanes(cols - 16);
  for (int64_t r = 0; r < rows; ++r) {
    _mm512_mask_storeu_ps(c + r * ldc, lo, act16(A, acc[r][0], slope));
    _mm512_mask_storeu_ps(c + r * ldc + 16, hi, act16(A, acc[r][1], slope));
  }
}
#endif

/// Output rows [m0, m0 + rows) (one strip, A at `a`) of columns [0, cols)
/// of a block of B, tile by tile.
template <Act A>
void stripTimesBlock(const float *a, const float *block, int64_t K, const float *bias, float slope,
                     float *c, int64_t ldc, int64_t rows, int64_t cols) {
#ifdef KC_HAVE_AVX512_KERNELS
  if (useAvx512()) {
    for (int64_t t0 = 0; t0 < cols; t0 += kWideTileCols)
      tile512<A>(a, block + t0, kStripBlockLd, K, bias, slope, c + t0, ldc, rows,
                 std::min(kWideTileCols, cols - t0));
    return;
  }
#endif
  for (int64_t t0 = 0; t0 < cols; t0 += kTileCols)
    tile<A>(a, block + t0, kStripBlockLd, K, bias, slope, c + t0, ldc, rows,
            std::min(kTileCols, cols - t0));
}

} // namespace

void packStrips(const float *A, int64_t lda, int64_t M, int64_t K, float *out) {
  packRowBlocks(A, lda, M, K, kStripRows, out);
}

namespace {
/// How gemmStripsT shares its work out: items are (group of strips, block
/// of columns) pairs, group-major, and thread t takes items [first[t],
/// first[t + 1]).
struct StripSchedule {
  int64_t perGroup = 0; ///< strips per group
  llvm::SmallVector<int64_t, 17> first;
};

/// Picks the number of strip groups, and each thread's items, whose busiest
/// thread has the least to do. A 14x14 output is four blocks of columns
/// (64, 64, 64 and 4): as whole blocks over 2 threads, one thread gets 128
/// columns and the other 68. Splitting the strips too evens that out, at
/// the price of each thread filling more blocks of B; a fill costs about a
/// third of one strip's products over the block, which the costs count.
StripSchedule scheduleStrips(int64_t M, int64_t N, int threads) {
  int64_t blocks = (N + kStripBlockCols - 1) / kStripBlockCols;
  int64_t strips = (M + kStripRows - 1) / kStripRows;
  auto tiles = [&](int64_t blk) {
    return (std::min(kStripBlockCols, N - blk * kStripBlockCols) + kTileCols - 1) / kTileCols;
  };
  StripSchedule best;
  int64_t bestLoad = INT64_MAX;
  llvm::SmallVector<int64_t, 17> first;
  // Past about 8 items per thread, whole blocks balance well enough.
  int64_t most = std::min<int64_t>(strips, (8 * threads + blocks - 1) / blocks);
  for (int64_t tried = 1; tried <= most; ++tried) {
    int64_t perGroup = (strips + tried - 1) / tried;
    int64_t groups = (strips + perGroup - 1) / perGroup; // none empty
    auto cost = [&](int64_t item) {
      int64_t grp = item / blocks, blk = item % blocks;
      int64_t s = std::min(strips, (grp + 1) * perGroup) - grp * perGroup;
      return tiles(blk) * (3 * s + 1);
    };
    int64_t items = groups * blocks, total = 0;
    for (int64_t i = 0; i < items; ++i)
      total += cost(i);
    // Contiguous ranges, each ending where the running cost comes nearest
    // to the thread's share of the total.
    first.assign(1, 0);
    int64_t done = 0, load = 0, i = 0;
    for (int t = 1; t <= threads; ++t) {
      int64_t target = total * t / threads, start = done;
      while (i < items && (t == threads || done + cost(i) / 2 < target))
        done += cost(i++);
      first.push_back(i);
      load = std::max(load, done - start);
    }
    if (load < bestLoad) {
      bestLoad = load;
      best.perGroup = perGroup, best.first = first;
    }
  }
  return best;
}

/// scheduleStrips(M, N, threads), computed once per shape and thread
/// count (a model has a few dozen) and then looked up: recomputed on every
/// call it took 0.3 % of yolo_small's time. Entries are never removed, so
/// references stay valid.
const StripSchedule &cachedSchedule(int64_t M, int64_t N, int threads) {
  thread_local std::map<std::tuple<int64_t, int64_t, int>, StripSchedule> plans;
  auto key = std::make_tuple(M, N, threads);
  auto it = plans.find(key);
  if (it == plans.end())
    it = plans.emplace(key, scheduleStrips(M, N, threads)).first;
  return it->second;
}

template <Act A>
void gemmStripsT(const float *packedA, int64_t M, int64_t K, int64_t N, StripBlockFn fill, float *C,
                 int64_t ldc, const float *bias, float slope, bool parallel) {
  int64_t blocks = (N + kStripBlockCols - 1) / kStripBlockCols;
  int64_t strips = (M + kStripRows - 1) / kStripRows;
  int threads = parallel && !omp_in_parallel() ? omp_get_max_threads() : 1;
  const StripSchedule &plan = cachedSchedule(M, N, threads);
  auto work = [&, K, N, M, blocks, strips, threads, ldc, slope] {
    // One block of B per thread, grown once and then reused. Columns past
    // a short block's end hold stale values; their products are computed
    // and never stored.
    thread_local std::vector<float> buffer;
    if (buffer.size() < size_t(K * kStripBlockLd + 16))
      buffer.resize(size_t(K * kStripBlockLd + 16));
    // Rows start on cache lines, so a tile's row of 16 floats is one line.
    float *block = buffer.data() + (16 - reinterpret_cast<uintptr_t>(buffer.data()) / 4 % 16) % 16;
    // A team smaller than asked for takes the missing threads' shares too.
    // Serial, this thread does all (it may be one of an outer team's).
    int self = threads > 1 ? omp_get_thread_num() : 0;
    int team = threads > 1 ? omp_get_num_threads() : 1;
    for (int t = self; t < threads; t += team)
      for (int64_t item = plan.first[t]; item < plan.first[t + 1]; ++item) {
        int64_t s0 = item / blocks * plan.perGroup, blk = item % blocks;
        int64_t n0 = blk * kStripBlockCols, cols = std::min(kStripBlockCols, N - n0);
        fill(n0, cols, block);
        for (int64_t s = s0; s < std::min(strips, s0 + plan.perGroup); ++s) {
          int64_t m0 = s * kStripRows, rows = std::min(kStripRows, M - m0);
          stripTimesBlock<A>(packedA + m0 * K, block, K, bias ? bias + m0 : nullptr, slope,
                             C + m0 * ldc + n0, ldc, rows, cols);
        }
      }
  };
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    work();
  } else {
    work();
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
  // Rows of at most 64 floats, copied by inline vector moves: through
  // memcpy, the calls cost 8 % of mobilenet_v2's time.
  auto copy = [&](int64_t n0, int64_t cols, float *block) {
    copyRows(block, kStripBlockLd, B + n0, ldb, K, cols);
  };
  gemmStrips(packedA, M, K, N, copy, C, ldc, bias, act, slope, parallel);
}

} // namespace kc::rt
