//===- StripConv.cpp - Convolution on the strip kernel --------------------===//
//
// C = W·X on the strip kernel (StripGemm.h), weights packed once into
// strips of 6 output channels on the first run: a 1×1 layer's input is read
// as it lies, other layers' patches are gathered a block of output
// positions at a time straight into the kernel's block (no im2col matrix),
// and each output is written once with bias and activation applied in
// registers. Stride-2 layers first split each input row by column parity
// (splitColumns), so the patches are gathered by row copies.
//
//===----------------------------------------------------------------------===//
#include "../PreparedWeight.h"
#include "../StripGemm.h"
#include "ConvAlgorithms.h"
#include "Patches.h"

#include <omp.h>

namespace kc::rt {
namespace {

class StripConvKernel final : public ConvKernel {
public:
  StripConvKernel(const ConvGeometry &g, const ConvChoice &c, ConvWeights w)
      : ConvKernel(g, std::move(w)), choice_(c),
        schedules_(g.OCg(), g.outputs(), threads_,
                   g.pointwise() ? StripSchedules::kCopiedBlock : StripSchedules::kGatheredBlock),
        packed_(w_.source(), groupsLayout(kStripLayout, g_), w_.mapped) {
    takesExpression_ = true;
    takesInputScale_ = g.pointwise();
  }

  /// A block of B per thread, then the input split by column parity.
  size_t workspaceBytes() const override {
    return (stripScratchFloats(g_.K(), threads_) + splitFloats()) * sizeof(float);
  }

  void runConv(const float *x, float *y, float *blocks, const BlockEpilogue &ep) const override {
    runScaledConv(x, nullptr, y, blocks, ep);
  }

  void runScaledConv(const float *x, const float *scale, float *y, float *blocks,
                     const BlockEpilogue &whole) const override {
    const ConvGeometry &g = g_;
    // A residual is added in the kernel's registers, in y's layout.
    const float *residual = whole.addend();
    const BlockEpilogue ep = residual ? whole.withoutAddend() : whole;
    const Tensor &packed =
        packed_.get([&](const Tensor &w) { return packConvWeights(w, w_.mapped, g, true); });
    const int64_t HW = g.outputs(), Cg = g.Cg(), OCg = g.OCg(), K = g.K();
    float *split = blocks + stripScratchFloats(K, threads_);
    const bool parallel = std::min(omp_get_max_threads(), threads_) > 1;
    forEachGroup(x, scale, y,
                 [&](const float *xg, const float *sg, float *yg, const float *bg, int64_t grp) {
                   const float *A = packed.data<float>() + grp * stripPackedSize(OCg, K);
                   const float *dg = residual ? residual + (yg - y) : nullptr;
                   // The expression's blocks as the strips of each block of columns are
                   // stored, while they are in cache.
                   auto stored = [&](int64_t m0, int64_t rows, int64_t n0, int64_t cols) {
                     ep.afterStore(yg + m0 * HW + n0, rows, cols, HW);
                   };
                   StripStoredFn after = ep.expr ? StripStoredFn(stored) : StripStoredFn();
                   if (g.pointwise()) {
                     gemmStrips(A, OCg, K, xg, HW, HW, yg, HW, bg, ep.storeAct(), slope_,
                                &schedules_, blocks, after, sg, dg);
                     return;
                   }
                   const float *src = xg;
                   if (choice_.splitColumns) {
                     splitColumns(xg, split, Cg * g.H, g.W, parallel);
                     src = split;
                   }
                   auto patches = [&](int64_t n0, int64_t cols, float *block) {
                     gatherPatches(src, block, kStripBlockLd, 0, Cg, g, n0, cols,
                                   choice_.splitColumns);
                   };
                   gemmStrips(A, OCg, K, HW, patches, yg, HW, bg, ep.storeAct(), slope_,
                              &schedules_, blocks, after, dg);
                 });
  }

  /// A 1×1 layer takes the depthwise layer after it when chooseBands says
  /// so: the two then run in bands of rows (BandedConv.cpp).
  std::unique_ptr<OpKernel> absorb(OpKernel &next) override {
    auto dw = scaled_ ? std::nullopt : depthwiseParts(next);
    if (!dw)
      return nullptr;
    auto plan = chooseBands(g_, dw->g, dw->choice, threads_);
    if (!plan)
      return nullptr;
    ConvWeights w = w_;
    w.pending = packed_.takeSource();
    return makeBandedConv(g_, std::move(w), Activation{act_, slope_}, std::move(*dw), *plan,
                          threads_);
  }

private:
  size_t splitFloats() const { return choice_.splitColumns ? size_t(g_.Cg() * g_.H * g_.W) : 0; }

  ConvChoice choice_;
  StripSchedules schedules_;
  PreparedWeight packed_; ///< the weight in strips, one block per group
};

} // namespace

std::unique_ptr<OpKernel> makeStripConv(const ConvGeometry &g, const ConvChoice &c, ConvWeights w) {
  return std::make_unique<StripConvKernel>(g, c, std::move(w));
}

} // namespace kc::rt
