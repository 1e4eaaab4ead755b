//===- BandedConv.cpp - A 1×1 layer and the depthwise layer it feeds ------===//
//
// When the 1×1 layer's output outgrows L2 (chooseBands), the two run in
// bands of the depthwise layer's output rows, the bands shared over the
// threads: each thread computes the expanded rows a band reads (the rows
// shared by two bands twice) into its buffer with the strip kernel, then
// the band's depthwise outputs from them with the masked 3x3 loop, instead
// of the whole expanded tensor going out to memory and back.
//
//===----------------------------------------------------------------------===//
#include "../../ukernels/MicroKernels.h"
#include "../PreparedWeight.h"
#include "../StripGemm.h"
#include "ConvAlgorithms.h"

#include <omp.h>

namespace kc::rt {
namespace {

class BandedConvKernel final : public ConvKernel {
public:
  BandedConvKernel(const ConvGeometry &pointwise, ConvWeights w, Activation act, DepthwiseParts dw,
                   const BandPlan &plan, int threads)
      : ConvKernel(pointwise, std::move(w)), p_(g_), pointwiseAct_(act), dw_(std::move(dw)),
        plan_(plan) {
    threads_ = threads;
  }

  /// Each thread's band of expanded rows and its block of B.
  size_t workspaceBytes() const override {
    return size_t(threads_) * size_t(perThread()) * sizeof(float);
  }

  void runConv(const float *x, float *y, float *ws, const BlockEpilogue &) const override {
    const Tensor &packed =
        packed_.get([&](const Tensor &w) { return packConvWeights(w, w_.mapped, p_, true); });
    const ConvGeometry &d = dw_.g;
    const float *bias = w_.bias(), *dwBias = dw_.w.bias();
    const int64_t M = p_.OC, K = p_.K(), HW = p_.outputs(), OHW = d.outputs(), S = d.SH;
    const int64_t bands = (d.OH + plan_.rows - 1) / plan_.rows;
    const uk::MicroKernels &uks = uk::microKernels();
    const uk::DepthwiseClamp e = depthwiseClamp(act_);
    const bool activate = !depthwiseClampIsWhole(act_);
    const float zero = 0.f;
    // At most the threads the workspace holds buffers for.
    const int team = teamSize(true, threads_);
    for (int64_t n = 0; n < p_.N; ++n) {
      const float *xn = x + n * p_.C * HW;
      float *yn = y + n * M * OHW;
      auto runBand = [&](int64_t b) {
        float *band = ws + (team > 1 ? omp_get_thread_num() : 0) * perThread();
        float *block = band + perThreadFloats(plan_.floats);
        int64_t oh0 = b * plan_.rows, oh1 = std::min(d.OH, oh0 + plan_.rows);
        int64_t ih0 = std::max<int64_t>(0, oh0 * S - d.PH);
        int64_t ih1 = std::min(d.H, (oh1 - 1) * S - d.PH + 3);
        int64_t rows = std::max<int64_t>(0, ih1 - ih0), cols = rows * d.W;
        if (rows > 0)
          gemmStrips(packed.data<float>(), M, K, xn + ih0 * d.W, HW, cols, band, cols, bias,
                     pointwiseAct_.kind, pointwiseAct_.slope, nullptr, block);
        // Band row 0 is input row ih0: the padding above, seen from the
        // band, is what lies above ih0 of the first output row's window.
        int64_t ph = ih0 - oh0 * S + d.PH;
        for (int64_t c = 0; c < M; ++c) {
          float *out = yn + c * OHW + oh0 * d.OW;
          uks.depthwiseMasked[S - 1](band + c * cols, out, rows, d.W, oh1 - oh0, d.OW, ph, d.PW,
                                     dw_.w.w.data<float>() + c * 9, dwBias ? dwBias[c] : 0.f, e);
          if (activate)
            uks.biasAct[int(act_)][0](out, (oh1 - oh0) * d.OW, &zero, slope_);
        }
      };
      parallelFor(bands, true, runBand, threads_);
    }
  }

private:
  int64_t perThread() const {
    return perThreadFloats(plan_.floats) + int64_t(stripScratchFloats(p_.K(), 1));
  }

  const ConvGeometry &p_;   ///< the 1×1 layer
  Activation pointwiseAct_; ///< fused into the 1×1 layer (act_ is the pair's output's)
  DepthwiseParts dw_;
  BandPlan plan_;
  PreparedWeight packed_{w_.source(), groupsLayout(kStripLayout, p_),
                         w_.mapped}; ///< the 1×1 layer's weight in strips
};

} // namespace

std::unique_ptr<OpKernel> makeBandedConv(const ConvGeometry &pointwise, ConvWeights w,
                                         Activation act, DepthwiseParts dw, const BandPlan &plan,
                                         int threads) {
  return std::make_unique<BandedConvKernel>(pointwise, std::move(w), act, std::move(dw), plan,
                                            threads);
}

} // namespace kc::rt
