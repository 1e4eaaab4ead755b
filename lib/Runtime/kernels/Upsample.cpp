//===- Upsample.cpp - nn.Upsample / F.interpolate -------------------------===//
//
// Nearest and bilinear (align_corners true or false) resampling of the last
// two dims, on the source indices and weights of resampleAxis (Resample.cpp,
// PyTorch's rules), with a loop made for two taps.
//
//===----------------------------------------------------------------------===//
#include "CallInfo.h"
#include "Operands.h"
#include "Parallel.h"
#include "Resample.h"

#include "kc/Support/FloatToInt.h"

namespace kc::rt {
namespace {

/// Outputs from which planes are shared over the threads: at ~1 ns an
/// output, 16384 take ~16 us against a few to wake the other thread
/// (unet_small's 64x32x32 upsampling had run on one at 65536).
constexpr int64_t kParallelOutputs = 16384;

class UpsampleKernel final : public OpKernel {
public:
  /// `h`, `w`: the taps of the two dims (resampleAxis), 1 or 2 each.
  UpsampleKernel(int64_t planes, int64_t H, int64_t W, const ResampleAxis &h, const ResampleAxis &w)
      : planes_(planes), H_(H), W_(W), OH_(int64_t(h.idx.size()) / h.T),
        OW_(int64_t(w.idx.size()) / w.T), bilinear_(h.T == 2) {
    blend_.floats = bilinear_ ? W : 0;
    auto split = [](const ResampleAxis &a, std::vector<int64_t> &i0, std::vector<int64_t> &i1,
                    std::vector<float> &l) {
      for (size_t o = 0; o < a.idx.size(); o += size_t(a.T)) {
        i0.push_back(a.idx[o]);
        i1.push_back(a.idx[o + size_t(a.T) - 1]);
        l.push_back(a.T == 2 ? a.w[o + 1] : 0.f);
      }
    };
    split(h, h0_, h1_, lh_);
    split(w, w0_, w1_, lw_);
  }

  /// Bilinear: a blended source row per thread.
  size_t workspaceBytes() const override { return blend_.bytes(); }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    // Locals, not members, in the loops: the compiler then knows the
    // stores to y leave them alone.
    const int64_t H = H_, W = W_, OH = OH_, OW = OW_;
    const int64_t *h0 = h0_.data(), *h1 = h1_.data(), *w0 = w0_.data(), *w1 = w1_.data();
    const float *lhs = lh_.data(), *lws = lw_.data();
    bool bilinear = bilinear_;
    auto plane = [&](int64_t p, float *blend) {
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
        // The two source rows blended first, in vectors; then two taps a
        // value from the blend, where there had been four from the rows.
        float lh = lhs[oh];
        for (int64_t iw = 0; iw < W; ++iw)
          blend[iw] = r0[iw] * (1 - lh) + r1[iw] * lh;
        for (int64_t ow = 0; ow < OW; ++ow) {
          float lw = lws[ow];
          d[ow] = blend[w0[ow]] * (1 - lw) + blend[w1[ow]] * lw;
        }
      }
    };
    parallelForScratch(planes_, planes_ * OH * OW > kParallelOutputs, blend_, ctx.workspace, plane);
  }

private:
  int64_t planes_, H_, W_, OH_, OW_;
  bool bilinear_;
  ThreadScratch blend_; ///< a source row per thread, when bilinear
  std::vector<int64_t> h0_, h1_, w0_, w1_;
  std::vector<float> lh_, lw_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeUpsample2d(const CallNode &c, const CallShapes &io) {
  const std::vector<int64_t> &in = io.in, &out = io.out;
  ResampleMode mode = c.attrs().getString("mode", "nearest") == "bilinear" ? ResampleMode::Linear
                                                                           : ResampleMode::Nearest;
  bool align = c.attrs().getBool("align_corners", false);
  std::vector<double> sf = c.attrs().getFloats("scale_factor");
  if (c.attrs().getBool("recompute_scale_factor", false))
    sf.clear();
  if (sf.size() == 1)
    sf.push_back(sf[0]);
  double sh = sf.empty() ? 0.0 : sf[0], sw = sf.empty() ? 0.0 : sf[1];
  return std::unique_ptr<OpKernel>(new UpsampleKernel(in[0] * in[1], in[2], in[3],
                                                      resampleAxis(mode, in[2], out[2], align, sh),
                                                      resampleAxis(mode, in[3], out[3], align, sw)));
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
