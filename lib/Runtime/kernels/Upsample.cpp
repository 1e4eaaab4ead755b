//===- Upsample.cpp - nn.Upsample / F.interpolate -------------------------===//
//
// Nearest and bilinear (align_corners true or false) resampling of the last
// two dims, with PyTorch's source-coordinate rules: a given scale_factor is
// used as is (1/scale), otherwise in/out.
//
//===----------------------------------------------------------------------===//
#include "CallInfo.h"
#include "Operands.h"
#include "Parallel.h"
#include "Resample.h"

#include "kc/Support/FloatToInt.h"

namespace kc::rt {
namespace {

class UpsampleKernel final : public OpKernel {
public:
  UpsampleKernel(int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW, bool bilinear,
                 bool alignCorners, double rh, double rw)
      : planes_(planes), H_(H), W_(W), OH_(OH), OW_(OW), bilinear_(bilinear), align_(alignCorners) {
    // Precompute per-output-row/column source indices and weights.
    auto axis = [&](int64_t in, int64_t out, double ratio, std::vector<int64_t> &i0,
                    std::vector<int64_t> &i1, std::vector<float> &l) {
      for (int64_t o = 0; o < out; ++o) {
        if (!bilinear_) {
          int64_t s = clampedIndex(std::floor(o * ratio), 0, in - 1);
          i0.push_back(s), i1.push_back(s), l.push_back(0.f);
          continue;
        }
        double src = align_ ? (out > 1 ? o * double(in - 1) / double(out - 1) : 0.0)
                            : std::max((o + 0.5) * ratio - 0.5, 0.0);
        int64_t a = clampedIndex(src, 0, in - 1);
        int64_t b = std::min<int64_t>(a + 1, in - 1);
        i0.push_back(a), i1.push_back(b), l.push_back(float(src - a));
      }
    };
    axis(H, OH, rh, h0_, h1_, lh_);
    axis(W, OW, rw, w0_, w1_, lw_);
  }

  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    // Locals, not members, in the loops: the compiler then knows the
    // stores to y leave them alone.
    const int64_t H = H_, W = W_, OH = OH_, OW = OW_;
    const int64_t *h0 = h0_.data(), *h1 = h1_.data(), *w0 = w0_.data(), *w1 = w1_.data();
    const float *lhs = lh_.data(), *lws = lw_.data();
    bool bilinear = bilinear_;
    parallelFor(planes_, planes_ * OH * OW > 65536, [&](int64_t p) {
      const float *src = x + p * H * W;
      float *dst = y + p * OH * OW;
      for (int64_t oh = 0; oh < OH; ++oh) {
        const float *r0 = src + h0[oh] * W, *r1 = src + h1[oh] * W;
        float *d = dst + oh * OW;
        if (!bilinear) {
          for (int64_t ow = 0; ow < OW; ++ow)
            d[ow] = r0[w0[ow]];
          continue;
        }
        float lh = lhs[oh];
        for (int64_t ow = 0; ow < OW; ++ow) {
          float lw = lws[ow];
          float top = r0[w0[ow]] * (1 - lw) + r0[w1[ow]] * lw;
          float bot = r1[w0[ow]] * (1 - lw) + r1[w1[ow]] * lw;
          d[ow] = top * (1 - lh) + bot * lh;
        }
      }
    });
  }

private:
  int64_t planes_, H_, W_, OH_, OW_;
  bool bilinear_, align_;
  std::vector<int64_t> h0_, h1_, w0_, w1_;
  std::vector<float> lh_, lw_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeUpsample2d(const CallNode &c, const CallShapes &io) {
  const std::vector<int64_t> *in = &io.in, *out = &io.out;
  std::string mode = c.attrs().getString("mode", "nearest");
  bool align = c.attrs().getBool("align_corners", false);
  int64_t H = (*in)[2], W = (*in)[3], OH = (*out)[2], OW = (*out)[3];
  double rh = double(H) / OH, rw = double(W) / OW;
  std::vector<double> sf = c.attrs().getFloats("scale_factor");
  if (!sf.empty() && !c.attrs().getBool("recompute_scale_factor", false)) {
    if (sf.size() == 1)
      sf.push_back(sf[0]);
    rh = 1.0 / sf[0], rw = 1.0 / sf[1];
  }
  return std::unique_ptr<OpKernel>(
      new UpsampleKernel((*in)[0] * (*in)[1], H, W, OH, OW, mode == "bilinear", align, rh, rw));
}

/// 4-d nearest and bilinear run here; every other mode and rank on the
/// general kernel (Resample.cpp).
llvm::Expected<std::unique_ptr<OpKernel>> makeUpsample(const CallNode &c, const CallShapes &io) {
  if (auto e = refuseAntialias(c))
    return e;
  std::string mode = c.attrs().getString("mode", "nearest");
  if (io.in.size() != 4 || io.out.size() != 4 || (mode != "nearest" && mode != "bilinear"))
    return makeResample(c, io);
  return makeUpsample2d(c, io);
}

} // namespace

KC_REGISTER_KERNEL(upsample, "nn.Upsample", withShapes<makeUpsample>);

} // namespace kc::rt
