//===- BlasConv.cpp - Convolution as im2col + OpenBLAS --------------------===//
//
// Layers with fewer than 8 output channels per group (where the strip
// kernel's strips of 6 rows would be mostly padding). With several threads
// the output is cut into blocks of rows, one per task: patches gathered
// into the thread's slice of the workspace, one single-threaded GEMM, then
// bias and activation while the block is in cache. Otherwise one GEMM over
// the whole im2col matrix, split across the threads. 1×1 layers read their
// input as B.
//
//===----------------------------------------------------------------------===//
#include "../Parallel.h"
#include "ConvAlgorithms.h"
#include "Patches.h"

#include <cblas.h>
#include <omp.h>

namespace kc::rt {
namespace {

class BlasConvKernel final : public ConvKernel {
public:
  BlasConvKernel(const ConvGeometry &g, const ConvChoice &c, ConvWeights w)
      : ConvKernel(g, std::move(w)), choice_(c) {
    blocks_ = (g.OH + c.blockRows - 1) / c.blockRows;
    takesExpression_ = true;
  }

  size_t workspaceBytes() const override {
    if (g_.pointwise())
      return 0;
    size_t whole = size_t(g_.K() * g_.outputs());
    size_t perThread = size_t(g_.K() * choice_.blockRows * g_.OW) * size_t(threads_);
    return std::max(whole, perThread) * sizeof(float);
  }

  void runConv(const float *x, float *y, float *ws, const BlockEpilogue &ep) const override {
    const ConvGeometry &g = g_;
    const int64_t HW = g.outputs(), Cg = g.Cg(), OCg = g.OCg(), K = g.K();
    const int threads = std::min(omp_get_max_threads(), threads_);
    forEachGroup(x, nullptr, y,
                 [&](const float *xg, const float *, float *yg, const float *bg, int64_t grp) {
                   const float *wg = w_.w.data<float>() + grp * OCg * K;
                   if (threads > 1 && blocks_ >= choice_.minBlocksPerThread * threads) {
                     blockedGemm(xg, yg, wg, bg, ws, threads, ep);
                     return;
                   }
                   const float *B = xg;
                   if (!g.pointwise()) {
                     im2col(xg, ws, Cg, g, 0, g.OH, true);
                     B = ws;
                   }
                   sgemm(false, false, OCg, HW, K, 1.f, wg, K, B, HW, 0.f, yg, HW);
                   ep(yg, OCg, HW, HW, bg);
                 });
  }

private:
  void blockedGemm(const float *xg, float *yg, const float *wg, const float *bias, float *ws,
                   int threads, const BlockEpilogue &ep) const {
    const ConvGeometry &g = g_;
    const int64_t HW = g.outputs(), K = g.K(), OCg = g.OCg(), blockRows = choice_.blockRows;
#pragma omp parallel num_threads(threads)
    {
      OwnTeam own;
#pragma omp for schedule(static)
      for (int64_t blk = 0; blk < blocks_; ++blk) {
        int64_t oh0 = blk * blockRows, oh1 = std::min(g.OH, oh0 + blockRows);
        int64_t c0 = oh0 * g.OW, cols = (oh1 - oh0) * g.OW;
        const float *B = xg + c0;
        int64_t ldb = HW;
        if (!g.pointwise()) {
          float *col = ws + size_t(omp_get_thread_num()) * K * blockRows * g.OW;
          im2col(xg, col, g.Cg(), g, oh0, oh1, false);
          B = col, ldb = cols;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(OCg), int(cols), int(K), 1.f, wg,
                    int(K), B, int(ldb), 0.f, yg + c0, int(HW));
        ep(yg + c0, OCg, cols, HW, bias);
      }
    }
  }

  ConvChoice choice_;
  int64_t blocks_;
};

} // namespace

std::unique_ptr<OpKernel> makeBlasConv(const ConvGeometry &g, const ConvChoice &c, ConvWeights w) {
  w.materialize(); // read as it is on every run
  return std::make_unique<BlasConvKernel>(g, c, std::move(w));
}

} // namespace kc::rt
