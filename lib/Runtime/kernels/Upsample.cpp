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

#include <algorithm>

namespace kc::rt {
namespace {

/// Outputs from which planes are shared over the threads: at ~1 ns an
/// output, 16384 take ~16 us against a few to wake the other thread
/// (unet_small's 64x32x32 upsampling had run on one at 65536).
constexpr int64_t kParallelOutputs = 16384;

/// The taps of one dim split into first and second source index and the
/// second one's weight (0 when nearest).
struct AxisTaps {
  std::vector<int64_t> i0, i1;
  std::vector<float> l;
  /// Whether output 2i+1 blends inputs i and i+1 by 1/4 and output 2i
  /// inputs i-1 and i by 3/4 (bilinear, scale 2, align_corners false), or
  /// both copy input i (nearest, scale 2), for every i but the first and
  /// last: the vector loop of resampleRow.
  bool doubles = false;
};

AxisTaps splitTaps(const ResampleAxis &a, int64_t in) {
  AxisTaps t;
  for (size_t o = 0; o < a.idx.size(); o += size_t(a.T)) {
    t.i0.push_back(a.idx[o]);
    t.i1.push_back(a.idx[o + size_t(a.T) - 1]);
    t.l.push_back(a.T == 2 ? a.w[o + 1] : 0.f);
  }
  int64_t out = int64_t(t.i0.size());
  if (out != 2 * in || in < 3)
    return t;
  bool linear = a.T == 2;
  for (int64_t i = 1; i + 1 < in; ++i) {
    size_t e = size_t(2 * i), o = e + 1;
    bool match = linear ? t.i0[e] == i - 1 && t.i1[e] == i && t.l[e] == 0.75f && t.i0[o] == i &&
                              t.i1[o] == i + 1 && t.l[o] == 0.25f
                        : t.i0[e] == i && t.i0[o] == i;
    if (!match)
      return t;
  }
  t.doubles = true;
  return t;
}

class UpsampleKernel final : public OpKernel {
public:
  /// `h`, `w`: the taps of the two dims (resampleAxis), 1 or 2 each.
  UpsampleKernel(int64_t planes, int64_t H, int64_t W, const ResampleAxis &h, const ResampleAxis &w)
      : planes_(planes), H_(H), W_(W), OH_(int64_t(h.idx.size()) / h.T),
        OW_(int64_t(w.idx.size()) / w.T), bilinear_(h.T == 2), h_(splitTaps(h, H)),
        w_(splitTaps(w, W)) {
    rows_.floats = bilinear_ ? 2 * OW_ : 0;
  }

  /// Bilinear: two source rows resampled along W, per thread.
  size_t workspaceBytes() const override { return rows_.bytes(); }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    const int64_t H = H_, W = W_, OH = OH_, OW = OW_;
    const int64_t *h0 = h_.i0.data(), *h1 = h_.i1.data();
    const float *lhs = h_.l.data();
    bool bilinear = bilinear_;
    // Each source row is resampled along W once, into a row of the output
    // (nearest) or of the two-row cache (bilinear), and output rows are
    // copies or vector blends of those: the per-value table walk runs
    // H times a plane, not OH.
    auto plane = [&](int64_t p, float *rows) {
      const float *src = x + p * H * W;
      float *dst = y + p * OH * OW;
      if (!bilinear) {
        for (int64_t oh = 0; oh < OH; ++oh) {
          float *d = dst + oh * OW;
          if (oh > 0 && h0[oh] == h0[oh - 1])
            std::copy(d - OW, d, d);
          else
            resampleRow(src + h0[oh] * W, d);
        }
        return;
      }
      float *cache[2] = {rows, rows + OW};
      int64_t held[2] = {-1, -1};
      auto row = [&](int64_t ih) -> const float * {
        for (int k = 0; k < 2; ++k)
          if (held[k] == ih)
            return cache[k];
        // Rows come in rising order: the older one is never needed again.
        int k = held[0] < held[1] ? 0 : 1;
        held[k] = ih;
        resampleRow(src + ih * W, cache[k]);
        return cache[k];
      };
      for (int64_t oh = 0; oh < OH; ++oh) {
        const float *r0 = row(h0[oh]), *r1 = row(h1[oh]);
        float lh = lhs[oh];
        float *d = dst + oh * OW;
        for (int64_t ow = 0; ow < OW; ++ow)
          d[ow] = r0[ow] * (1 - lh) + r1[ow] * lh;
      }
    };
    parallelForScratch(planes_, planes_ * OH * OW > kParallelOutputs, rows_, ctx.workspace, plane);
  }

private:
  /// One source row `s` resampled along W into the OW values of `d`.
  void resampleRow(const float *s, float *d) const {
    const int64_t W = W_, OW = OW_;
    const int64_t *w0 = w_.i0.data(), *w1 = w_.i1.data();
    const float *lws = w_.l.data();
    auto taps = [&](int64_t from, int64_t to) {
      if (!bilinear_) {
        for (int64_t ow = from; ow < to; ++ow)
          d[ow] = s[w0[ow]];
        return;
      }
      for (int64_t ow = from; ow < to; ++ow) {
        float lw = lws[ow];
        d[ow] = s[w0[ow]] * (1 - lw) + s[w1[ow]] * lw;
      }
    };
    if (!w_.doubles)
      return taps(0, OW);
    taps(0, 2);
    if (bilinear_) {
      for (int64_t i = 1; i + 1 < W; ++i) {
        d[2 * i] = s[i - 1] * 0.25f + s[i] * 0.75f;
        d[2 * i + 1] = s[i] * 0.75f + s[i + 1] * 0.25f;
      }
    } else {
      for (int64_t i = 1; i + 1 < W; ++i)
        d[2 * i] = d[2 * i + 1] = s[i];
    }
    taps(OW - 2, OW);
  }

  int64_t planes_, H_, W_, OH_, OW_;
  bool bilinear_;
  AxisTaps h_, w_;
  ThreadScratch rows_; ///< two resampled source rows per thread, when bilinear
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
