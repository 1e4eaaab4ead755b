//===- StripGemm.cpp - GEMM for wide outputs with packed weights ----------===//
//
// Shares (strip group, block of columns) items out over the threads and
// fills each thread's block of B; the register tiles are the micro-kernel
// table's f32_gemm_strip (6×16 with AVX2, 6×32 with AVX-512), which start
// from the bias and apply the activation in registers before the one store.
//
//===----------------------------------------------------------------------===//
#include "StripGemm.h"
#include "Copy.h"
#include "PackedGemm.h"
#include "Parallel.h"

#include "llvm/ADT/SmallVector.h"

#include <omp.h>

namespace kc::rt {
namespace {
/// Columns a schedule counts a tile as: the narrowest tile any table has.
constexpr int64_t kTileCols = 16;
static_assert(kStripBlockCols % kTileCols == 0 && kStripBlockLd >= kStripBlockCols);
} // namespace

void packStrips(const float *A, int64_t lda, int64_t M, int64_t K, float *out) {
  packRowBlocks(A, lda, M, K, kStripRows, out);
}

namespace {

/// Picks the number of strip groups, and each thread's items, whose busiest
/// thread has the least to do. A 14x14 output is four blocks of columns
/// (64, 64, 64 and 4): as whole blocks over 2 threads, one thread gets 128
/// columns and the other 68. Splitting the strips too evens that out, at
/// the price of each thread filling more blocks of B, which the costs
/// count (`fillCost`, in thirds of a strip: StripSchedules).
StripSchedule scheduleStrips(int64_t M, int64_t N, int threads, int64_t fillCost) {
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
      return tiles(blk) * (3 * s + fillCost);
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

} // namespace

StripSchedules::StripSchedules(int64_t M, int64_t N, int maxThreads, int64_t fillCost) {
  for (int t = 1; t <= maxThreads; ++t)
    byThreads_.push_back(scheduleStrips(M, N, t, fillCost));
}

void gemmStrips(const float *packedA, int64_t M, int64_t K, int64_t N, StripBlockFn fill, float *C,
                int64_t ldc, const float *bias, Act act, float slope,
                const StripSchedules *schedules, float *scratch, StripStoredFn stored,
                const float *D) {
  const uk::GemmStripFn kernel = uk::microKernels().gemmStrip[int(act)];
  const int64_t blocks = (N + kStripBlockCols - 1) / kStripBlockCols;
  const int64_t strips = (M + kStripRows - 1) / kStripRows;
  const int threads = schedules ? teamSize(true, schedules->maxThreads()) : 1;
  const int64_t blockFloats = stripBlockFloats(K);
  // Items [first, last) of thread `self`, strip groups of perGroup strips:
  // on one thread all of them, each block of B filled once.
  auto work = [&, K, N, M, blocks, strips, ldc, slope](int self, int64_t perGroup, int64_t first,
                                                       int64_t last) {
    // This thread's block of B; rows start on cache lines, so a tile's row
    // of 16 floats is one line. Columns past a short block's end hold
    // stale values; their products are computed and never stored.
    float *block = scratch + self * blockFloats;
    for (int64_t item = first; item < last; ++item) {
      int64_t s0 = item / blocks * perGroup, blk = item % blocks;
      int64_t n0 = blk * kStripBlockCols, cols = std::min(kStripBlockCols, N - n0);
      fill(n0, cols, block);
      int64_t s1 = std::min(strips, s0 + perGroup);
      for (int64_t s = s0; s < s1; ++s) {
        int64_t m0 = s * kStripRows, rows = std::min(kStripRows, M - m0);
        kernel(packedA + m0 * K, block, kStripBlockLd, K, bias ? bias + m0 : nullptr, slope,
               C + m0 * ldc + n0, ldc, rows, cols, D ? D + m0 * ldc + n0 : nullptr);
      }
      if (stored)
        stored(s0 * kStripRows, std::min(M, s1 * kStripRows) - s0 * kStripRows, n0, cols);
    }
  };
  if (threads <= 1) {
    work(0, strips, 0, blocks);
    return;
  }
  const StripSchedule &plan = schedules->forThreads(threads);
#pragma omp parallel num_threads(threads)
  {
    OwnTeam own;
    // A team smaller than asked for takes the missing threads' shares too.
    int self = omp_get_thread_num(), team = omp_get_num_threads();
    for (int t = self; t < threads; t += team)
      work(self, plan.perGroup, plan.first[t], plan.first[t + 1]);
  }
}

void gemmStrips(const float *packedA, int64_t M, int64_t K, const float *B, int64_t ldb, int64_t N,
                float *C, int64_t ldc, const float *bias, Act act, float slope,
                const StripSchedules *schedules, float *scratch, StripStoredFn stored,
                const float *rowScale, const float *D) {
  if (rowScale) {
    auto scaled = [&](int64_t n0, int64_t cols, float *block) {
      for (int64_t k = 0; k < K; ++k) {
        const float *b = B + k * ldb + n0;
        float *o = block + k * kStripBlockLd, s = rowScale[k];
        for (int64_t j = 0; j < cols; ++j)
          o[j] = b[j] * s;
      }
    };
    return gemmStrips(packedA, M, K, N, scaled, C, ldc, bias, act, slope, schedules, scratch,
                      stored, D);
  }
  // Rows of at most 64 floats, copied by inline vector moves: through
  // memcpy, the calls cost 8 % of mobilenet_v2's time.
  auto copy = [&](int64_t n0, int64_t cols, float *block) {
    copyRows(block, kStripBlockLd, B + n0, ldb, K, cols);
  };
  gemmStrips(packedA, M, K, N, copy, C, ldc, bias, act, slope, schedules, scratch, stored, D);
}

} // namespace kc::rt
