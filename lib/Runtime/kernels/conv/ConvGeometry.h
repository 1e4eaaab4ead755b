//===- ConvGeometry.h - What every convolution algorithm reads --*- C++ -*-===//
#pragma once

#include "../Blas.h"
#include "../CallInfo.h"
#include "../Epilogue.h"
#include "../PreparedWeight.h"

#include <algorithm>
#include <utility>

namespace kc::rt {

/// A convolution's shapes and attributes; 1-d convolutions are 2-d ones of
/// height 1.
struct ConvGeometry {
  int64_t N, C, H, W, OC, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, G;

  int64_t Cg() const { return C / G; }         ///< input channels per group
  int64_t OCg() const { return OC / G; }       ///< output channels per group
  int64_t K() const { return Cg() * KH * KW; } ///< depth of each output's sum
  int64_t outputs() const { return OH * OW; }  ///< positions per output plane
  /// 1×1, stride 1, no padding: the input already is the GEMM's B.
  bool pointwise() const { return KH == 1 && KW == 1 && SH == 1 && SW == 1 && PH == 0 && PW == 0; }
  bool depthwise() const { return G == C && OC == C && G > 1; }
  /// The rows and columns of the input padded before by PH, PW and after by
  /// as much as the last output window reaches: PH, PW, or one more for
  /// padding="same" with an even span (PyTorch puts the odd unit after).
  int64_t paddedH() const { return std::max(H + 2 * PH, (OH - 1) * SH + (KH - 1) * DH + 1); }
  int64_t paddedW() const { return std::max(W + 2 * PW, (OW - 1) * SW + (KW - 1) * DW + 1); }
  /// 3×3, dilation 1, the same stride 1 or 2 both ways.
  bool is3x3() const {
    return KH == 3 && KW == 3 && DH == 1 && DW == 1 && SH == SW && (SW == 1 || SW == 2);
  }
};

/// Reads the attributes common to Conv and ConvTranspose.
llvm::Expected<ConvGeometry> convGeometry(const CallNode &c, bool transposed);

/// A convolution's weight (OC × C/G × KH × KW, or C × OC/G × KH × KW
/// transposed), its bias (or empty), and the mapped .bin bytes the weight
/// may view (or null), released once the weight is packed. A weight whose
/// bytes are not aligned is not copied yet (`w` empty, `pending` set): a
/// kernel that prepares it takes source(), one that reads it as it is calls
/// materialize() first.
struct ConvWeights {
  Tensor w, b;
  TensorDataPtr mapped;
  WeightSource pending;
  const float *bias() const { return b.defined() && b.numel() ? b.data<float>() : nullptr; }
  WeightSource source() { return w.defined() ? WeightSource(std::move(w)) : std::move(pending); }
  void materialize() {
    if (!w.defined())
      w = pending.take();
  }
};

/// A convolution kernel: its geometry, weights and the threads its
/// workspace is sized for; run() hands runConv the input, the output, the
/// workspace and the epilogue (runScaledConv also the input's scale, for
/// kernels that take one).
class ConvKernel : public FusableKernel {
public:
  ConvKernel(const ConvGeometry &g, ConvWeights w);
  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const final {
    float *y = out[0]->data<float>();
    float *ws = static_cast<float *>(ctx.workspace);
    if (scaled_)
      runScaledConv(in[0]->data<float>(), in[1]->data<float>(), y, ws, epilogue(y, in));
    else
      runConv(in[0]->data<float>(), y, ws, epilogue(y, in));
  }

  bool fuseInputScale(bool perImage) override {
    if (!takesInputScale_ || scaled_ || expr_)
      return false;
    scaled_ = true;
    scalePerImage_ = perImage;
    return true;
  }

protected:
  virtual void runConv(const float *x, float *y, float *ws, const BlockEpilogue &ep) const = 0;
  /// The convolution of x scaled by `scale` per input channel (per image
  /// if scalePerImage_), for kernels that set takesInputScale_.
  virtual void runScaledConv(const float *x, const float *scale, float *y, float *ws,
                             const BlockEpilogue &ep) const {}

  /// Calls f(xg, sg, yg, bg, grp) for each image and group: the group's
  /// input planes, their scales (null without), output planes and bias
  /// (null without one).
  template <class F> void forEachGroup(const float *x, const float *scale, float *y, F &&f) const {
    const ConvGeometry &g = g_;
    const float *bias = w_.bias();
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t grp = 0; grp < g.G; ++grp)
        f(x + (n * g.C + grp * g.Cg()) * g.H * g.W,
          scale ? scale + (scalePerImage_ ? n * g.C : 0) + grp * g.Cg() : nullptr,
          y + (n * g.OC + grp * g.OCg()) * g.outputs(), bias ? bias + grp * g.OCg() : nullptr, grp);
  }

  ConvGeometry g_;
  ConvWeights w_;
  int threads_;
  bool takesInputScale_ = false; ///< set by kernels that implement runScaledConv
  bool scaled_ = false, scalePerImage_ = false;
};

/// Weight and bias of call `c`, the weight read in place where it can be;
/// an error unless the weight has `expectedWeights` values.
llvm::Expected<ConvWeights> convWeights(const CallNode &c, int64_t expectedWeights,
                                        bool transposed);

/// Weight w packed for the strip kernel (strips of 6 rows) or the panel
/// kernel (panels of 16), one block per group, a few rows at a time with
/// their pages of the mapped .bin (`mapped`, if w views it) paged in before
/// and released after, so the weights are never resident twice over.
Tensor packConvWeights(const Tensor &w, const TensorDataPtr &mapped, const ConvGeometry &g,
                       bool strips);

/// The WeightCache names of a weight packed by packConvWeights.
inline constexpr const char *kPanelLayout = "conv-panels", *kStripLayout = "conv-strips";

/// The name of a weight layout of `g`'s convolution for the WeightCache:
/// packings depend on the groups as well as on the weight.
inline std::string groupsLayout(const char *layout, const ConvGeometry &g) {
  return std::string(layout) + ", " + std::to_string(g.G) + " groups";
}

/// The indices i in [0, count) with 0 <= i*stride + off < bound, as a range
/// [lo, hi) (lo == hi when there are none): where a strided walk along a
/// row of `bound` values stays inside it, so loops over it need no checks.
std::pair<int64_t, int64_t> insideRange(int64_t off, int64_t stride, int64_t count, int64_t bound);

} // namespace kc::rt
