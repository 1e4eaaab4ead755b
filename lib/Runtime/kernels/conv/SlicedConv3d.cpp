//===- SlicedConv3d.cpp - A 3-d convolution as 2-d ones per output slice ---===//
//
// With dilation 1 along depth, output slice od of a 3-d convolution reads
// the kD input slices od*sD - pD ... od*sD - pD + kD - 1: with the input
// laid out depth-major ([D][C][H][W], zero slices for the depth padding)
// those are kD*C consecutive planes, so the slice is one 2-d convolution
// of kD*C input channels with the weight W'[oc][kd*C + c] = W[oc][c][kd].
// That convolution runs on whatever algorithm chooseConv picks for it
// (Winograd, the strip or panel kernels), instead of im2col over the
// whole volume and sgemm (NdConv.cpp), and an activation after it fuses.
//
//===----------------------------------------------------------------------===//
#include "ConvAlgorithms.h"
#include "../Parallel.h"

#include <cstring>

namespace kc::rt {
namespace {

class SlicedConv3dKernel final : public OpKernel {
public:
  SlicedConv3dKernel(const SlicedConv3d &s, std::unique_ptr<OpKernel> plane)
      : s_(s), plane_(std::move(plane)) {}

  size_t workspaceBytes() const override {
    return (depthMajorFloats() + sliceFloats()) * sizeof(float) + plane_->workspaceBytes();
  }
  bool fuseActivation(const Activation &a) override { return plane_->fuseActivation(a); }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const SlicedConv3d &s = s_;
    const int64_t HW = s.H * s.W, OHW = s.OH * s.OW;
    float *depthMajor = static_cast<float *>(ctx.workspace);
    float *slice = depthMajor + depthMajorFloats();
    ExecContext inner;
    inner.workspace = slice + sliceFloats();
    inner.workspaceBytes = plane_->workspaceBytes();
    for (int64_t n = 0; n < s.N; ++n) {
      const float *x = in[0]->data<float>() + n * s.C * s.D * HW;
      float *y = out[0]->data<float>() + n * s.OC * s.OD * OHW;
      // [C][D][H][W] -> [Dp][C][H][W], the padding slices zero.
      std::memset(depthMajor, 0, size_t(s.PD * s.C * HW) * sizeof(float));
      std::memset(depthMajor + (s.PD + s.D) * s.C * HW, 0, size_t(s.PD * s.C * HW) * sizeof(float));
      parallelFor(s.C * s.D, s.C * s.D * HW > 65536, [&](int64_t cd) {
        int64_t c = cd / s.D, d = cd % s.D;
        std::memcpy(depthMajor + ((s.PD + d) * s.C + c) * HW, x + cd * HW,
                    size_t(HW) * sizeof(float));
      });
      for (int64_t od = 0; od < s.OD; ++od) {
        Tensor src = Tensor::view(DType::F32, {1, s.KD * s.C, s.H, s.W},
                                  depthMajor + od * s.SD * s.C * HW, nullptr);
        Tensor dst = Tensor::view(DType::F32, {1, s.OC, s.OH, s.OW}, slice, nullptr);
        const Tensor *ins[] = {&src};
        Tensor *outs[] = {&dst};
        plane_->run(ins, outs, inner);
        for (int64_t oc = 0; oc < s.OC; ++oc)
          std::memcpy(y + (oc * s.OD + od) * OHW, slice + oc * OHW, size_t(OHW) * sizeof(float));
      }
    }
  }

private:
  int64_t depthMajorFloats() const { return (s_.D + 2 * s_.PD) * s_.C * s_.H * s_.W; }
  int64_t sliceFloats() const { return s_.OC * s_.OH * s_.OW; }

  SlicedConv3d s_;
  std::unique_ptr<OpKernel> plane_;
};

} // namespace

std::unique_ptr<OpKernel> makeSlicedConv3d(const SlicedConv3d &s, const Tensor &weight,
                                           Tensor bias) {
  // W'[oc][kd*C + c][kh][kw] = W[oc][c][kd][kh][kw].
  const int64_t taps = s.KH * s.KW;
  Tensor w = Tensor::empty(DType::F32, {s.OC, s.KD * s.C, s.KH, s.KW});
  const float *src = weight.data<float>();
  float *dst = w.data<float>();
  for (int64_t oc = 0; oc < s.OC; ++oc)
    for (int64_t c = 0; c < s.C; ++c)
      for (int64_t kd = 0; kd < s.KD; ++kd)
        std::memcpy(dst + ((oc * s.KD + kd) * s.C + c) * taps,
                    src + ((oc * s.C + c) * s.KD + kd) * taps, size_t(taps) * sizeof(float));
  ConvGeometry g{1,    s.KD * s.C, s.H,  s.W,  s.OC, s.OH, s.OW, s.KH,
                 s.KW, s.SH,       s.SW, s.PH, s.PW, s.DH, s.DW, 1};
  ConvWeights cw;
  cw.w = std::move(w);
  cw.b = std::move(bias);
  std::unique_ptr<OpKernel> plane = makePlanarKernel(g, std::move(cw));
  return std::make_unique<SlicedConv3dKernel>(s, std::move(plane));
}

} // namespace kc::rt
