//===- Conv.cpp - Convolution kernels -------------------------------------===//
//
// nn.Conv1d/Conv2d as GEMM over OpenBLAS: a 1×1 stride-1 convolution is a
// plain GEMM of the weights with the input (no im2col), other convolutions
// gather patches with im2col into the workspace first; depthwise
// convolutions run a direct loop. Bias and a fused activation are applied in
// one pass over the result. Weights are copied once, at load.
//
//===----------------------------------------------------------------------===//
#include "KernelUtils.h"
#include "Winograd.h"

#include <cstdlib>

#include <cblas.h>
#include <cstring>
#include <omp.h>

namespace kc::rt {
namespace {

struct ConvGeometry {
  int64_t N, C, H, W, OC, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, G;
};

/// Reads the attributes common to Conv and ConvTranspose, viewing 1-d
/// convolutions as 2-d ones of height 1.
llvm::Expected<ConvGeometry> geometry(const CallNode &c, bool transposed) {
  auto in = inputShape(c, 0);
  if (!in)
    return in.takeError();
  auto out = outputShape(c);
  if (!out)
    return out.takeError();
  std::vector<int64_t> i = *in, o = *out;
  size_t spatial = i.size() - 2;
  if ((i.size() != 3 && i.size() != 4) || o.size() != i.size())
    return kernelError(c, "expects a 3-d or 4-d input, got " + shapeToString(i));
  auto k = intsN(c, "kernel_size", spatial, {});
  auto s = intsN(c, "stride", spatial, std::vector<int64_t>(spatial, 1));
  auto d = intsN(c, "dilation", spatial, std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> p(spatial, 0);
  if (const AttrValue *pv = c.attrs().find("padding"); pv && pv->isString()) {
    if (pv->getString() == "same")
      for (size_t a = 0; a < spatial; ++a)
        p[a] = d[a] * (k[a] - 1) / 2;
    else if (pv->getString() != "valid")
      return kernelError(c, "unknown padding '" + pv->getString() + "'");
  } else {
    p = intsN(c, "padding", spatial, std::vector<int64_t>(spatial, 0));
  }
  if (c.attrs().getString("padding_mode", "zeros") != "zeros")
    return kernelError(c, "padding_mode '" + c.attrs().getString("padding_mode", "") +
                              "' is not supported (only zeros)");
  if (k.size() != spatial || s.size() != spatial || d.size() != spatial || p.size() != spatial)
    return kernelError(c, "malformed kernel_size/stride/dilation/padding");
  if (spatial == 1) { // (N,C,L) as (N,C,1,L)
    i.insert(i.begin() + 2, 1), o.insert(o.begin() + 2, 1);
    k.insert(k.begin(), 1), s.insert(s.begin(), 1), d.insert(d.begin(), 1), p.insert(p.begin(), 0);
  }
  ConvGeometry g{i[0], i[1], i[2], i[3], o[1], o[2], o[3], k[0], k[1], s[0], s[1],
                 p[0], p[1], d[0], d[1], c.attrs().getInt("groups", 1)};
  if (g.G <= 0 || g.C % g.G || g.OC % g.G)
    return kernelError(c, "groups=" + llvm::Twine(g.G) + " does not divide the channels");
  (void)transposed;
  return g;
}

/// Gathers the patches of one group's input into `col`
/// ([Cg*KH*KW] rows × [OH*OW] columns).
void im2col(const float *in, float *col, int64_t Cg, const ConvGeometry &g) {
  int64_t HW = g.OH * g.OW;
#pragma omp parallel for collapse(2) if (Cg * g.KH * g.KW * HW > 32768)
  for (int64_t c = 0; c < Cg; ++c)
    for (int64_t kh = 0; kh < g.KH; ++kh) {
      const float *src = in + c * g.H * g.W;
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        float *dst = col + ((c * g.KH + kh) * g.KW + kw) * HW;
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          int64_t ih = oh * g.SH - g.PH + kh * g.DH;
          float *row = dst + oh * g.OW;
          if (ih < 0 || ih >= g.H) {
            std::memset(row, 0, sizeof(float) * g.OW);
            continue;
          }
          const float *srow = src + ih * g.W;
          int64_t off = kw * g.DW - g.PW;
          if (g.SW == 1) {
            // Valid ow: 0 <= ow + off < W.
            int64_t lo = std::max<int64_t>(0, -off), hi = std::min<int64_t>(g.OW, g.W - off);
            for (int64_t ow = 0; ow < std::min(lo, g.OW); ++ow)
              row[ow] = 0;
            if (hi > lo)
              std::memcpy(row + lo, srow + lo + off, sizeof(float) * (hi - lo));
            for (int64_t ow = std::max(hi, lo); ow < g.OW; ++ow)
              row[ow] = 0;
          } else {
            for (int64_t ow = 0; ow < g.OW; ++ow) {
              int64_t iw = ow * g.SW + off;
              row[ow] = (iw >= 0 && iw < g.W) ? srow[iw] : 0.f;
            }
          }
        }
      }
    }
}

class Conv2dKernel final : public FusableKernel {
public:
  Conv2dKernel(ConvGeometry g, Tensor w, Tensor b) : g_(g), w_(std::move(w)), b_(std::move(b)) {
    Cg_ = g.C / g.G;
    OCg_ = g.OC / g.G;
    K_ = Cg_ * g.KH * g.KW;
    pointwise_ = g.KH == 1 && g.KW == 1 && g.SH == 1 && g.SW == 1 && g.PH == 0 && g.PW == 0;
    depthwise_ = g.G == g.C && g.OC == g.C && g.G > 1;
  }

  size_t workspaceBytes() const override {
    return pointwise_ || depthwise_ ? 0 : size_t(K_ * g_.OH * g_.OW) * sizeof(float);
  }

  void run(llvm::ArrayRef<const Tensor *> in, llvm::ArrayRef<Tensor *> out,
           ExecContext &ctx) override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    const float *bias = b_.defined() && b_.numel() ? b_.data<float>() : nullptr;
    int64_t HW = g_.OH * g_.OW;
    if (depthwise_)
      return depthwise(x, y, bias);
    for (int64_t n = 0; n < g_.N; ++n)
      for (int64_t grp = 0; grp < g_.G; ++grp) {
        const float *xg = x + (n * g_.C + grp * Cg_) * g_.H * g_.W;
        float *yg = y + (n * g_.OC + grp * OCg_) * HW;
        const float *B = xg;
        if (!pointwise_) {
          float *col = static_cast<float *>(ctx.workspace);
          im2col(xg, col, Cg_, g_);
          B = col;
        }
        sgemm(false, false, int(OCg_), int(HW), int(K_), 1.f,
                    w_.data<float>() + grp * OCg_ * K_, int(K_), B, int(HW), 0.f, yg, int(HW));
        biasActivation(yg, OCg_, HW, bias ? bias + grp * OCg_ : nullptr, act_, slope_);
      }
  }

private:
  /// Direct depthwise convolution: each channel plane is copied once into a
  /// zero-padded scratch plane so the inner loops run without bounds checks;
  /// stride 1 rows are contiguous multiply-adds the compiler vectorizes.
  void depthwise(const float *x, float *y, const float *bias) {
    const ConvGeometry &g = g_;
    int64_t HW = g.OH * g.OW;
    int64_t PHt = g.H + 2 * g.PH, PWt = g.W + 2 * g.PW;
    int threads = omp_get_max_threads();
    if (padded_.size() < size_t(threads * PHt * PWt))
      padded_.assign(size_t(threads * PHt * PWt), 0.f); // first run only
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t c = 0; c < g.C; ++c) {
        float *pad = padded_.data() + size_t(omp_get_thread_num()) * PHt * PWt;
        const float *src = x + (n * g.C + c) * g.H * g.W;
        for (int64_t h = 0; h < g.H; ++h)
          std::memcpy(pad + (h + g.PH) * PWt + g.PW, src + h * g.W, sizeof(float) * g.W);
        float *dst = y + (n * g.C + c) * HW;
        const float *k = w_.data<float>() + c * g.KH * g.KW;
        float b = bias ? bias[c] : 0.f;
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
  }

  ConvGeometry g_;
  Tensor w_, b_;
  int64_t Cg_, OCg_, K_;
  bool pointwise_, depthwise_;
  std::vector<float> padded_; ///< per-thread padded planes (depthwise)
};

llvm::Expected<std::unique_ptr<OpKernel>> makeConv(const CallNode &c, const KernelBuildContext &) {
  auto g = geometry(c, false);
  if (!g)
    return g.takeError();
  auto w = weightTensor(c, "weight", true);
  if (!w)
    return w.takeError();
  auto b = weightTensor(c, "bias", false);
  if (!b)
    return b.takeError();
  if (w->numel() != g->OC * (g->C / g->G) * g->KH * g->KW)
    return kernelError(c, "weight shape " + shapeToString(w->shape()) +
                              " does not match the convolution");
  // Winograd pays off once there are enough channels to amortize the
  // transforms; KC_CONV_ALGO=im2col turns it off (for measurements).
  const char *algo = std::getenv("KC_CONV_ALGO");
  bool winograd = !(algo && std::string(algo) == "im2col") && g->KH == 3 && g->KW == 3 &&
                  g->SH == 1 && g->SW == 1 && g->DH == 1 && g->DW == 1 && g->G == 1 &&
                  g->C >= 32 && g->OC >= 16 && g->OH * g->OW >= 64;
  if (winograd)
    return makeWinograd43(g->N, g->C, g->H, g->W, g->OC, g->OH, g->OW, g->PH, g->PW, *w,
                          std::move(*b));
  return std::unique_ptr<OpKernel>(new Conv2dKernel(*g, std::move(*w), std::move(*b)));
}

/// nn.ConvTranspose1d/2d: a GEMM with the transposed weights gives each
/// input pixel's contribution to a KH×KW window; col2im scatters them.
class ConvTranspose2dKernel final : public FusableKernel {
public:
  ConvTranspose2dKernel(ConvGeometry g, Tensor w, Tensor b)
      : g_(g), w_(std::move(w)), b_(std::move(b)) {
    Cg_ = g.C / g.G;
    OCg_ = g.OC / g.G;
    rows_ = OCg_ * g.KH * g.KW;
  }
  size_t workspaceBytes() const override {
    return size_t(rows_ * g_.H * g_.W) * sizeof(float);
  }
  void run(llvm::ArrayRef<const Tensor *> in, llvm::ArrayRef<Tensor *> out,
           ExecContext &ctx) override {
    const ConvGeometry &g = g_;
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    int64_t HWin = g.H * g.W, HW = g.OH * g.OW;
    float *col = static_cast<float *>(ctx.workspace);
    std::memset(y, 0, out[0]->nbytes());
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t grp = 0; grp < g.G; ++grp) {
        const float *xg = x + (n * g.C + grp * Cg_) * HWin;
        float *yg = y + (n * g.OC + grp * OCg_) * HW;
        sgemm(true, false, int(rows_), int(HWin), int(Cg_), 1.f,
                    w_.data<float>() + grp * Cg_ * rows_, int(rows_), xg, int(HWin), 0.f, col,
                    int(HWin));
#pragma omp parallel for
        for (int64_t oc = 0; oc < OCg_; ++oc)
          for (int64_t kh = 0; kh < g.KH; ++kh)
            for (int64_t kw = 0; kw < g.KW; ++kw) {
              const float *src = col + ((oc * g.KH + kh) * g.KW + kw) * HWin;
              float *dst = yg + oc * HW;
              for (int64_t ih = 0; ih < g.H; ++ih) {
                int64_t oh = ih * g.SH - g.PH + kh * g.DH;
                if (oh < 0 || oh >= g.OH)
                  continue;
                for (int64_t iw = 0; iw < g.W; ++iw) {
                  int64_t ow = iw * g.SW - g.PW + kw * g.DW;
                  if (ow >= 0 && ow < g.OW)
                    dst[oh * g.OW + ow] += src[ih * g.W + iw];
                }
              }
            }
        const float *bias = b_.defined() && b_.numel() ? b_.data<float>() + grp * OCg_ : nullptr;
        biasActivation(yg, OCg_, HW, bias, act_, slope_);
      }
  }

private:
  ConvGeometry g_;
  Tensor w_, b_;
  int64_t Cg_, OCg_, rows_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeConvTranspose(const CallNode &c,
                                                            const KernelBuildContext &) {
  auto g = geometry(c, true);
  if (!g)
    return g.takeError();
  auto w = weightTensor(c, "weight", true);
  if (!w)
    return w.takeError();
  auto b = weightTensor(c, "bias", false);
  if (!b)
    return b.takeError();
  if (w->numel() != g->C * (g->OC / g->G) * g->KH * g->KW)
    return kernelError(c, "weight shape " + shapeToString(w->shape()) +
                              " does not match the transposed convolution");
  return std::unique_ptr<OpKernel>(new ConvTranspose2dKernel(*g, std::move(*w), std::move(*b)));
}

} // namespace

KC_REGISTER_KERNEL(conv1d, "nn.Conv1d", makeConv);
KC_REGISTER_KERNEL(conv2d, "nn.Conv2d", makeConv);
KC_REGISTER_KERNEL(convt1d, "nn.ConvTranspose1d", makeConvTranspose);
KC_REGISTER_KERNEL(convt2d, "nn.ConvTranspose2d", makeConvTranspose);

} // namespace kc::rt
