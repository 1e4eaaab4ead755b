//===- Upsample.cpp - nn.Upsample / F.interpolate -------------------------===//
//
// Nearest and bilinear (align_corners true or false) resampling of the last
// two dims, with PyTorch's source-coordinate rules: a given scale_factor is
// used as is (1/scale), otherwise in/out.
//
//===----------------------------------------------------------------------===//
#include "KernelUtils.h"

namespace kc::rt {
namespace {

class UpsampleKernel final : public OpKernel {
public:
  UpsampleKernel(int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW, bool bilinear,
                 bool alignCorners, double rh, double rw)
      : planes_(planes), H_(H), W_(W), OH_(OH), OW_(OW), bilinear_(bilinear),
        align_(alignCorners) {
    // Precompute per-output-row/column source indices and weights.
    auto axis = [&](int64_t in, int64_t out, double ratio, std::vector<int64_t> &i0,
                    std::vector<int64_t> &i1, std::vector<float> &l) {
      for (int64_t o = 0; o < out; ++o) {
        if (!bilinear_) {
          int64_t s = std::min<int64_t>(int64_t(std::floor(o * ratio)), in - 1);
          i0.push_back(s), i1.push_back(s), l.push_back(0.f);
          continue;
        }
        double src = align_ ? (out > 1 ? o * double(in - 1) / double(out - 1) : 0.0)
                            : std::max((o + 0.5) * ratio - 0.5, 0.0);
        int64_t a = std::min<int64_t>(int64_t(src), in - 1);
        int64_t b = std::min<int64_t>(a + 1, in - 1);
        i0.push_back(a), i1.push_back(b), l.push_back(float(src - a));
      }
    };
    axis(H, OH, rh, h0_, h1_, lh_);
    axis(W, OW, rw, w0_, w1_, lw_);
  }

  void run(llvm::ArrayRef<const Tensor *> in, llvm::ArrayRef<Tensor *> out,
           ExecContext &) override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
#pragma omp parallel for if (planes_ * OH_ * OW_ > 65536)
    for (int64_t p = 0; p < planes_; ++p) {
      const float *src = x + p * H_ * W_;
      float *dst = y + p * OH_ * OW_;
      for (int64_t oh = 0; oh < OH_; ++oh) {
        const float *r0 = src + h0_[oh] * W_, *r1 = src + h1_[oh] * W_;
        float *d = dst + oh * OW_;
        if (!bilinear_) {
          for (int64_t ow = 0; ow < OW_; ++ow)
            d[ow] = r0[w0_[ow]];
          continue;
        }
        float lh = lh_[oh];
        for (int64_t ow = 0; ow < OW_; ++ow) {
          float lw = lw_[ow];
          float top = r0[w0_[ow]] * (1 - lw) + r0[w1_[ow]] * lw;
          float bot = r1[w0_[ow]] * (1 - lw) + r1[w1_[ow]] * lw;
          d[ow] = top * (1 - lh) + bot * lh;
        }
      }
    }
  }

private:
  int64_t planes_, H_, W_, OH_, OW_;
  bool bilinear_, align_;
  std::vector<int64_t> h0_, h1_, w0_, w1_;
  std::vector<float> lh_, lw_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeUpsample(const CallNode &c,
                                                       const KernelBuildContext &) {
  auto in = inputShape(c, 0);
  if (!in)
    return in.takeError();
  auto out = outputShape(c);
  if (!out)
    return out.takeError();
  if (in->size() != 4 || out->size() != 4)
    return kernelError(c, "only 4-d (N, C, H, W) resampling is supported, got " +
                              shapeToString(*in));
  std::string mode = c.attrs().getString("mode", "nearest");
  llvm::StringRef op = c.opDef() ? llvm::StringRef(c.opDef()->name()) : "";
  if (op == "nn.UpsamplingBilinear2d")
    mode = "bilinear";
  if (mode != "nearest" && mode != "bilinear")
    return kernelError(c, "mode '" + mode + "' is not supported (nearest, bilinear)");
  bool align = c.attrs().getBool("align_corners", false) || op == "nn.UpsamplingBilinear2d";
  int64_t H = (*in)[2], W = (*in)[3], OH = (*out)[2], OW = (*out)[3];
  double rh = double(H) / OH, rw = double(W) / OW;
  std::vector<double> sf = c.attrs().getFloats("scale_factor");
  if (!sf.empty() && !c.attrs().getBool("recompute_scale_factor", false)) {
    if (sf.size() == 1)
      sf.push_back(sf[0]);
    rh = 1.0 / sf[0], rw = 1.0 / sf[1];
  }
  return std::unique_ptr<OpKernel>(new UpsampleKernel((*in)[0] * (*in)[1], H, W, OH, OW,
                                                      mode == "bilinear", align, rh, rw));
}

} // namespace

KC_REGISTER_KERNEL(upsample, "nn.Upsample", makeUpsample);

} // namespace kc::rt
