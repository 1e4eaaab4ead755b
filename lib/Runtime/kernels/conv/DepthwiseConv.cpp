//===- DepthwiseConv.cpp - Depthwise convolution, a plane at a time -------===//
//
// A direct loop per channel plane, the planes shared over the threads. 3x3
// layers sum their nine taps in registers and write each output once
// (f32_dwconv3x3_*, Depthwise3x3.h), ReLU and ReLU6 applied as a clamp in
// the same loop; other kernels at stride 1 or 2 do the same from a
// zero-padded copy of the plane (f32_dwconv_padded, DepthwiseKxK.h), and
// the rest make a pass per tap over that copy.
//
//===----------------------------------------------------------------------===//
#include "../../ukernels/MicroKernels.h"
#include "../Copy.h"
#include "ConvAlgorithms.h"

#include <cstring>
#include <limits>
#include <omp.h>

namespace kc::rt {
namespace {

class DepthwiseConvKernel final : public ConvKernel {
public:
  DepthwiseConvKernel(const ConvGeometry &g, const ConvChoice &c, ConvWeights w)
      : ConvKernel(g, std::move(w)), choice_(c) {}

  /// Loops that read a padded copy keep one per thread, with a gap after it
  /// for the vector loops' reads past its last row.
  size_t workspaceBytes() const override {
    if (!padded())
      return 0;
    return size_t(threads_) * size_t(planeFloats()) * sizeof(float);
  }

  void runConv(const float *x, float *y, float *ws, const BlockEpilogue &) const override {
    const ConvGeometry &g = g_;
    const float *bias = w_.bias();
    const int64_t HW = g.OH * g.OW;
    const uk::MicroKernels &uks = uk::microKernels();
    const uk::DepthwiseEpilogue e = epilogue(act_, slope_);
    if (choice_.depthwise == DepthwiseLoop::Masked3x3 ||
        choice_.depthwise == DepthwiseLoop::MaskedShort3x3 ||
        choice_.depthwise == DepthwiseLoop::Pad1x3x3) {
      // The masked loop on the vector's lanes, or on 8 for short rows.
      const uk::DepthwiseMaskedFn masked = choice_.depthwise == DepthwiseLoop::MaskedShort3x3
                                               ? uks.depthwiseMaskedShort[g.SW - 1]
                                               : uks.depthwiseMasked[g.SW - 1];
      parallelFor(g.N * g.C, true, [&](int64_t plane) {
        int64_t c = plane % g.C;
        const float *src = x + plane * g.H * g.W, *k = w_.w.data<float>() + c * 9;
        float b = bias ? bias[c] : 0.f;
        if (choice_.depthwise != DepthwiseLoop::Pad1x3x3)
          masked(src, y + plane * HW, g.H, g.W, g.OH, g.OW, g.PH, g.PW, k, b, e);
        else
          uks.depthwisePad1[g.SW - 1](src, y + plane * HW, g.H, g.W, g.OH, g.OW, k, b, e);
      });
      return;
    }
    // Each thread's padded plane: zero, then only the input's window is
    // ever written, so the border stays zero for every plane.
    const int64_t PWt = g.paddedW(), region = planeFloats();
    float *planes = ws;
    std::memset(planes, 0, workspaceBytes());
    parallelFor(
        g.N * g.C, true,
        [&](int64_t plane) {
          int64_t c = plane % g.C;
          float *pad = planes + size_t(omp_get_thread_num()) * region;
          copyRows(pad + g.PH * PWt + g.PW, PWt, x + plane * g.H * g.W, g.W, g.H, g.W);
          float *dst = y + plane * HW;
          const float *k = w_.w.data<float>() + c * g.KH * g.KW;
          float b = bias ? bias[c] : 0.f;
          if (choice_.depthwise == DepthwiseLoop::Padded3x3)
            uks.depthwisePadded[g.SW - 1](pad, PWt, dst, g.OH, g.OW, k, b, e);
          else if (choice_.depthwise == DepthwiseLoop::PaddedKxK)
            uks.depthwiseKxK[g.SW - 1](pad, PWt, dst, g.OH, g.OW, {g.KH, g.KW, g.DH, g.DW}, k, b,
                                       e);
          else
            generic(pad, PWt, dst, k, b);
        },
        threads_);
  }

  const ConvGeometry &geometry() const { return g_; }
  const ConvChoice &choice() const { return choice_; }
  const ConvWeights &weights() const { return w_; }

  /// How the 3x3 loops apply the fused activation: ReLU and ReLU6 (and
  /// none) are the clamp [lo, hi] in the same loop; other activations run
  /// over the row afterwards, the clamp open.
  static uk::DepthwiseEpilogue epilogue(Act act, float slope) {
    constexpr float inf = std::numeric_limits<float>::infinity();
    bool relu = act == Act::Relu || act == Act::Relu6;
    return {relu ? 0.f : -inf,
            act == Act::Relu6 ? 6.f : inf,
            act == Act::None || relu,
            act,
            slope,
            uk::microKernels().biasAct[int(act)][0]};
  }

private:
  bool padded() const {
    return choice_.depthwise == DepthwiseLoop::Padded3x3 ||
           choice_.depthwise == DepthwiseLoop::PaddedKxK ||
           choice_.depthwise == DepthwiseLoop::Generic;
  }
  /// The plane, then the gap the vector loops' reads may reach past it.
  int64_t planeFloats() const {
    return perThreadFloats(g_.paddedH() * g_.paddedW() + 2 * uk::kMaxLanes + (g_.KW - 1) * g_.DW);
  }

  /// Any kernel: a pass per tap over the padded plane.
  void generic(const float *pad, int64_t PWt, float *dst, const float *k, float b) const {
    const ConvGeometry &g = g_;
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      float *row = dst + oh * g.OW;
      for (int64_t ow = 0; ow < g.OW; ++ow)
        row[ow] = b;
      for (int64_t kh = 0; kh < g.KH; ++kh) {
        const float *prow = pad + (oh * g.SH + kh * g.DH) * PWt;
        for (int64_t kw = 0; kw < g.KW; ++kw) {
          float wv = k[kh * g.KW + kw];
          const float *s = prow + kw * g.DW;
          if (g.SW == 1) {
            for (int64_t ow = 0; ow < g.OW; ++ow)
              row[ow] += wv * s[ow];
          } else if (g.SW == 2) {
            for (int64_t ow = 0; ow < g.OW; ++ow)
              row[ow] += wv * s[2 * ow];
          } else {
            for (int64_t ow = 0; ow < g.OW; ++ow)
              row[ow] += wv * s[ow * g.SW];
          }
        }
      }
      if (act_ == Act::Relu6)
        for (int64_t ow = 0; ow < g.OW; ++ow)
          row[ow] = std::min(std::max(row[ow], 0.f), 6.f);
      else if (act_ != Act::None)
        for (int64_t ow = 0; ow < g.OW; ++ow)
          row[ow] = applyAct(act_, row[ow], slope_);
    }
  }

  ConvChoice choice_;
};

} // namespace

std::unique_ptr<OpKernel> makeDepthwiseConv(const ConvGeometry &g, const ConvChoice &c,
                                            ConvWeights w) {
  w.materialize(); // read as it is on every run
  return std::make_unique<DepthwiseConvKernel>(g, c, std::move(w));
}

std::optional<DepthwiseParts> depthwiseParts(const OpKernel &k) {
  auto *dw = dynamic_cast<const DepthwiseConvKernel *>(&k);
  if (!dw)
    return std::nullopt;
  return DepthwiseParts{dw->geometry(), dw->choice(), dw->weights()};
}

uk::DepthwiseEpilogue depthwiseEpilogue(Act act, float slope) {
  return DepthwiseConvKernel::epilogue(act, slope);
}

} // namespace kc::rt
