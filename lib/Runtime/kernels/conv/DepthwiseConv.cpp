//===- DepthwiseConv.cpp - Depthwise convolution, planes or channel blocks ===//
//
// Small planes and kernels other than 3x3 run a vector of channels at a
// time (f32_dwconv_packed, DepthwisePacked.h): each block of channels is
// transposed into a padded copy where one position's channels make a
// vector, so every tap is a whole-vector multiply-add whatever the plane's
// width. The rest run a direct loop per channel plane, the planes shared
// over the threads: 3x3 layers sum their nine taps in registers and write
// each output once (f32_dwconv3x3_*, Depthwise3x3.h), and so do 5x5
// layers with padding 2 on wide rows (f32_dwconv5x5_slide); other kernels
// at stride 1 or 2 do the same from a zero-padded copy of the plane
// (f32_dwconv_padded, DepthwiseKxK.h), and the rest make a pass per tap
// over that copy. ReLU and ReLU6 are applied as a clamp in the same loops.
// Activations other than a clamp run over a task's planes together once
// they are stored: applied plane by plane, a 7x7 plane's 49 outputs were
// three vectors and a masked tail, and SiLU cost twice as much per output.
//
//===----------------------------------------------------------------------===//
#include "../../ukernels/MicroKernels.h"
#include "../Copy.h"
#include "ConvAlgorithms.h"

#include <cstring>
#include <limits>
#include <omp.h>
#include <vector>

namespace kc::rt {
namespace {

class DepthwiseConvKernel final : public ConvKernel {
public:
  DepthwiseConvKernel(const ConvGeometry &g, const ConvChoice &c, ConvWeights w)
      : ConvKernel(g, std::move(w)), choice_(c) {
    if (c.depthwise == DepthwiseLoop::Packed)
      packChannels();
  }

  /// Loops that read a padded copy keep one per thread, with a gap after it
  /// for the vector loops' reads past its last row; the packed loop its
  /// block's padded copy and outputs.
  size_t workspaceBytes() const override {
    if (choice_.depthwise == DepthwiseLoop::Packed)
      return size_t(threads_) * size_t(packedFloats()) * sizeof(float);
    if (!padded())
      return 0;
    return size_t(threads_) * size_t(planeFloats()) * sizeof(float);
  }

  void runConv(const float *x, float *y, float *ws, const BlockEpilogue &) const override {
    const ConvGeometry &g = g_;
    const float *bias = w_.bias();
    const int64_t HW = g.OH * g.OW;
    const uk::MicroKernels &uks = uk::microKernels();
    const uk::DepthwiseClamp e = clampOf(act_);
    if (choice_.depthwise == DepthwiseLoop::Masked3x3 ||
        choice_.depthwise == DepthwiseLoop::MaskedShort3x3 ||
        choice_.depthwise == DepthwiseLoop::Pad1x3x3) {
      // The masked loop on the vector's lanes, or on 8 for short rows.
      const uk::DepthwiseMaskedFn masked = choice_.depthwise == DepthwiseLoop::MaskedShort3x3
                                               ? uks.depthwiseMaskedShort[g.SW - 1]
                                               : uks.depthwiseMasked[g.SW - 1];
      const uk::DepthwisePad1Fn pad1 = uks.depthwisePad1[g.SW - 1];
      const bool inPlace = choice_.depthwise != DepthwiseLoop::Pad1x3x3;
      runTasks(y, 0, [&](int64_t plane) {
        int64_t c = plane % g.C;
        const float *src = x + plane * g.H * g.W, *k = w_.w.data<float>() + c * 9;
        float b = bias ? bias[c] : 0.f;
        if (inPlace)
          masked(src, y + plane * HW, g.H, g.W, g.OH, g.OW, g.PH, g.PW, k, b, e);
        else
          pad1(src, y + plane * HW, g.H, g.W, g.OH, g.OW, k, b, e);
      });
      return;
    }
    if (choice_.depthwise == DepthwiseLoop::Packed)
      return runPacked(x, y, ws);
    if (choice_.depthwise == DepthwiseLoop::Slide5x5) {
      const uk::DepthwiseSlide5Fn slide = uks.depthwiseSlide5[g.SW - 1];
      runTasks(y, 0, [&](int64_t plane) {
        int64_t c = plane % g.C;
        slide(x + plane * g.H * g.W, y + plane * HW, g.H, g.W, g.OH, g.OW, g.PH,
              w_.w.data<float>() + c * 25, bias ? bias[c] : 0.f, e);
      });
      return;
    }
    // Each thread's padded plane: zero, then only the input's window is
    // ever written, so the border stays zero for every plane.
    const int64_t PWt = g.paddedW(), region = planeFloats();
    float *planes = ws;
    std::memset(planes, 0, workspaceBytes());
    runTasks(y, threads_, [&](int64_t plane) {
      int64_t c = plane % g.C;
      float *pad = planes + size_t(omp_get_thread_num()) * region;
      copyRows(pad + g.PH * PWt + g.PW, PWt, x + plane * g.H * g.W, g.W, g.H, g.W);
      float *dst = y + plane * HW;
      const float *k = w_.w.data<float>() + c * g.KH * g.KW;
      float b = bias ? bias[c] : 0.f;
      if (choice_.depthwise == DepthwiseLoop::Padded3x3)
        uks.depthwisePadded[g.SW - 1](pad, PWt, dst, g.OH, g.OW, k, b, e);
      else if (choice_.depthwise == DepthwiseLoop::PaddedKxK)
        uks.depthwiseKxK[g.SW - 1](pad, PWt, dst, g.OH, g.OW, {g.KH, g.KW, g.DH, g.DW}, k, b, e);
      else
        generic(pad, PWt, dst, k, b);
    });
  }

  const ConvGeometry &geometry() const { return g_; }
  const ConvChoice &choice() const { return choice_; }
  const ConvWeights &weights() const { return w_; }

  /// The clamp the loops apply: ReLU and ReLU6 as [0, inf) and [0, 6],
  /// open for other activations (and none).
  static uk::DepthwiseClamp clampOf(Act act) {
    constexpr float inf = std::numeric_limits<float>::infinity();
    bool relu = act == Act::Relu || act == Act::Relu6;
    return {relu ? 0.f : -inf, act == Act::Relu6 ? 6.f : inf};
  }

private:
  /// Outputs an activation loop runs over at least, where the task has
  /// that many: 8 KB, in the first-level cache the loops just wrote.
  static constexpr int64_t kActivateRun = 2048;

  /// Whether the loops' clamp is the whole activation (the generic loop
  /// applies none).
  bool clampsOnly() const {
    return act_ == Act::None ||
           (choice_.depthwise != DepthwiseLoop::Generic && depthwiseClampIsWhole(act_));
  }
  /// plane(p) for every plane p, shared over at most maxThreads threads
  /// (0: any), each task's outputs then through the activation the loops'
  /// clamp leaves out. A task takes enough planes for one long activation
  /// loop, while leaving every thread several.
  template <class PlaneFn> void runTasks(float *y, int maxThreads, PlaneFn &&plane) const {
    const int64_t HW = g_.OH * g_.OW, planes = g_.N * g_.C;
    if (clampsOnly())
      return parallelFor(planes, true, plane, maxThreads);
    int64_t per = std::max<int64_t>(
        1, std::min(kActivateRun / std::max<int64_t>(1, HW), planes / (4 * int64_t(threads_))));
    const uk::BiasActFn act = uk::microKernels().biasAct[int(act_)][0];
    const float zero = 0.f;
    parallelFor((planes + per - 1) / per, true,
                [&](int64_t task) {
                  int64_t p0 = task * per, p1 = std::min(planes, p0 + per);
                  for (int64_t p = p0; p < p1; ++p)
                    plane(p);
                  act(y + p0 * HW, (p1 - p0) * HW, &zero, slope_);
                },
                maxThreads);
  }

  /// The channel-packed loop: blocks of `lanes` channels of one image,
  /// shared over the threads, each through its thread's padded copy.
  void runPacked(const float *x, float *y, float *ws) const {
    const ConvGeometry &g = g_;
    const int64_t L = uk::microKernels().lanes, blocks = (g.C + L - 1) / L;
    const int64_t HW = g.H * g.W, OHW = g.OH * g.OW;
    const uk::DepthwisePackedFn packed = uk::microKernels().depthwisePacked[g.SW - 1];
    const uk::DepthwisePackedShape s{g.H,  g.W,  g.OH, g.OW, g.KH, g.KW,       g.SH,
                                     g.SW, g.DH, g.DW, g.PH, g.PW, g.paddedW()};
    const uk::DepthwiseClamp e = clampOf(act_);
    const uk::BiasActFn act = clampsOnly() ? nullptr : uk::microKernels().biasAct[int(act_)][0];
    const float zero = 0.f;
    const int64_t region = packedFloats(), outAt = padFloats();
    parallelFor(
        g.N * blocks, true,
        [&](int64_t task) {
          int64_t n = task / blocks, c0 = task % blocks * L, count = std::min(L, g.C - c0);
          float *pad = ws + size_t(omp_get_thread_num()) * region;
          float *dst = y + (n * g.C + c0) * OHW;
          packed(x + (n * g.C + c0) * HW, count, dst, s, packedWeights_.data() + c0 * g.KH * g.KW,
                 packedBias_.data() + c0, e, pad, pad + outAt);
          if (act)
            act(dst, count * OHW, &zero, slope_);
        },
        threads_);
  }

  /// Weights by blocks of `lanes` channels, a tap's channels together, and
  /// the biases, zeros past the last channel.
  void packChannels() {
    const ConvGeometry &g = g_;
    const int64_t L = uk::microKernels().lanes, taps = g.KH * g.KW;
    const int64_t channels = (g.C + L - 1) / L * L;
    const float *w = w_.w.data<float>(), *bias = w_.bias();
    packedWeights_.assign(size_t(channels * taps), 0.f);
    packedBias_.assign(size_t(channels), 0.f);
    for (int64_t c = 0; c < g.C; ++c) {
      for (int64_t t = 0; t < taps; ++t)
        packedWeights_[size_t((c / L * taps + t) * L + c % L)] = w[c * taps + t];
      packedBias_[size_t(c)] = bias ? bias[c] : 0.f;
    }
  }
  /// One block's padded copy; with its outputs.
  int64_t padFloats() const {
    return perThreadFloats(g_.paddedH() * g_.paddedW() * uk::microKernels().lanes);
  }
  int64_t packedFloats() const {
    return padFloats() + perThreadFloats(g_.OH * g_.OW * uk::microKernels().lanes);
  }

  bool padded() const {
    return choice_.depthwise == DepthwiseLoop::Padded3x3 ||
           choice_.depthwise == DepthwiseLoop::PaddedKxK ||
           choice_.depthwise == DepthwiseLoop::Generic;
  }
  /// The plane, then the gap the vector loops' reads may reach past it.
  int64_t planeFloats() const {
    return perThreadFloats(g_.paddedH() * g_.paddedW() + 2 * uk::kMaxLanes + (g_.KW - 1) * g_.DW);
  }

  /// Any kernel: a pass per tap over the padded plane, no activation.
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
    }
  }

  ConvChoice choice_;
  std::vector<float> packedWeights_, packedBias_; ///< Packed
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

uk::DepthwiseClamp depthwiseClamp(Act act) { return DepthwiseConvKernel::clampOf(act); }

bool depthwiseClampIsWhole(Act act) {
  return act == Act::None || act == Act::Relu || act == Act::Relu6;
}

} // namespace kc::rt
