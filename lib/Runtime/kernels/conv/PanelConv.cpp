//===- PanelConv.cpp - Deep convolution layers on the panel kernel --------===//
//
// Few outputs and a long K (resnet18's 7x7x512 layers, mobilenet_v2's last
// 1×1 layers): the panel kernel (PackedGemm.h) over weights packed on the
// first run, not at load, which it would slow by ~20 ms on resnet18; B
// packed in strips of 6 columns, a convolution's patches gathered straight
// into them. Bias and activation run over each output row afterwards.
//
//===----------------------------------------------------------------------===//
#include "../PackedGemm.h"
#include "../PreparedWeight.h"
#include "ConvAlgorithms.h"
#include "Patches.h"

#include <omp.h>

namespace kc::rt {
namespace {

class PanelConvKernel final : public ConvKernel {
public:
  PanelConvKernel(const ConvGeometry &g, ConvWeights w) : ConvKernel(g, std::move(w)) {
    takesExpression_ = true;
    takesInputScale_ = g.pointwise();
  }

  /// B's strips, then each thread's offsets for gathering patches.
  size_t workspaceBytes() const override {
    return (stripsFloats() + size_t(threads_) * offsetsFloats()) * sizeof(float);
  }

  void runConv(const float *x, float *y, float *strips, const BlockEpilogue &ep) const override {
    runScaledConv(x, nullptr, y, strips, ep);
  }

  void runScaledConv(const float *x, const float *scale, float *y, float *strips,
                     const BlockEpilogue &ep) const override {
    const ConvGeometry &g = g_;
    const Tensor &packed =
        packed_.get([&](const Tensor &w) { return packConvWeights(w, w_.mapped, g, false); });
    const int64_t HW = g.outputs(), Cg = g.Cg(), OCg = g.OCg(), K = g.K();
    float *offsets = strips + stripsFloats();
    forEachGroup(x, scale, y,
                 [&](const float *xg, const float *sg, float *yg, const float *bg, int64_t grp) {
                   const float *A = packed.data<float>() + grp * packedSize(OCg, K);
                   if (g.pointwise()) {
                     gemmPackedFewColumns(A, OCg, K, xg, HW, HW, yg, HW, strips, sg);
                   } else {
                     auto strip = [&](int64_t n0, int64_t cols, float *o) {
                       float *mine = offsets + omp_get_thread_num() * offsetsFloats();
                       gatherPatchStrip(xg, Cg, g, n0, cols, o, mine);
                     };
                     gemmPackedFewColumns(A, OCg, K, HW, strip, yg, HW, strips, threads_);
                   }
                   ep(yg, OCg, HW, HW, bg);
                 });
  }

private:
  size_t stripsFloats() const {
    return size_t(perThreadFloats(int64_t(packedColumnsScratch(g_.K(), g_.outputs()))));
  }
  int64_t offsetsFloats() const {
    return g_.pointwise() ? 0 : perThreadFloats(patchStripScratch(g_));
  }

  PreparedWeight packed_{w_.source(), groupsLayout(kPanelLayout, g_),
                         w_.mapped}; ///< the weight in panels, one block per group
};

} // namespace

std::unique_ptr<OpKernel> makePanelConv(const ConvGeometry &g, ConvWeights w) {
  return std::make_unique<PanelConvKernel>(g, std::move(w));
}

} // namespace kc::rt
