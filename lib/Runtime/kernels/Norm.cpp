//===- Norm.cpp - Batch, layer, group and instance normalization ----------===//
#include "../ukernels/MicroKernels.h"
#include "CallInfo.h"
#include "MeanVariance.h"
#include "Parallel.h"

namespace kc::rt {
namespace {

/// y = x * scale[c] + shift[c] over (N, C, inner): inference-mode batch
/// norm, and instance norm with running statistics.
class ChannelAffineKernel final : public OpKernel {
public:
  ChannelAffineKernel(int64_t n, int64_t c, int64_t inner, std::vector<float> scale,
                      std::vector<float> shift)
      : n_(n), c_(c), inner_(inner), scale_(std::move(scale)), shift_(std::move(shift)) {}
  void run(llvm::ArrayRef<const Tensor *> in, llvm::ArrayRef<Tensor *> out,
           ExecContext &) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    parallelFor(n_ * c_, n_ * c_ * inner_ > 65536, [&](int64_t plane) {
      const float *xs = x + plane * inner_;
      float *ys = y + plane * inner_;
      float s = scale_[plane % c_], b = shift_[plane % c_];
      for (int64_t i = 0; i < inner_; ++i)
        ys[i] = xs[i] * s + b;
    });
  }

private:
  int64_t n_, c_, inner_;
  std::vector<float> scale_, shift_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeBatchNorm(const CallNode &c,
                                                        const KernelBuildContext &) {
  auto s = inputShape(c, 0);
  if (!s)
    return s.takeError();
  if (s->size() < 2)
    return kernelError(c, "expects (N, C, ...), got " + shapeToString(*s));
  int64_t C = (*s)[1];
  Tensor meanT, varT, wT, bT;
  if (llvm::Error e = takeWeights(c, {{"running_mean", &meanT, true},
                                      {"running_var", &varT, true},
                                      {"weight", &wT},
                                      {"bias", &bT}}))
    return std::move(e);
  Tensor *mean = &meanT, *var = &varT, *w = &wT, *b = &bT;
  if (mean->numel() != C || var->numel() != C || (w->defined() && w->numel() && w->numel() != C) ||
      (b->defined() && b->numel() && b->numel() != C))
    return kernelError(c, "statistics do not have " + llvm::Twine(C) + " channels");
  double eps = c.attrs().getFloat("eps", 1e-5);
  std::vector<float> scale(C), shift(C);
  // An absent weight or bias (affine=False) is an undefined Tensor, whose
  // numel() is 1 (the empty shape): test the data pointer.
  const float *wp = w->data<float>(), *bp = b->data<float>();
  for (int64_t i = 0; i < C; ++i) {
    float g = wp ? wp[i] : 1.f;
    float bb = bp ? bp[i] : 0.f;
    scale[i] = float(g / std::sqrt(double(var->data<float>()[i]) + eps));
    shift[i] = bb - mean->data<float>()[i] * scale[i];
  }
  int64_t inner = numElements(*s) / ((*s)[0] * C);
  return std::unique_ptr<OpKernel>(
      new ChannelAffineKernel((*s)[0], C, inner, std::move(scale), std::move(shift)));
}
KC_REGISTER_KERNEL(bn1d, "nn.BatchNorm1d", makeBatchNorm);
KC_REGISTER_KERNEL(bn2d, "nn.BatchNorm2d", makeBatchNorm);
KC_REGISTER_KERNEL(bn3d, "nn.BatchNorm3d", makeBatchNorm);

} // namespace

/// Mean and variance of n floats, summed in double (f32_mean_variance).
std::pair<double, double> meanVariance(const float *x, int64_t n) {
  double mean, var;
  uk::microKernels().meanVariance(x, n, &mean, &var);
  return {mean, var};
}

namespace {

/// Normalizes groups of `len` consecutive values (a row of LayerNorm, a
/// group of GroupNorm, a channel plane of InstanceNorm), then applies an
/// affine transform whose parameters repeat every `affineLen` values of a
/// row (LayerNorm) or are per channel of `inner` values (Group/Instance).
class RowNormKernel final : public OpKernel {
public:
  RowNormKernel(int64_t rows, int64_t len, float eps, Tensor w, Tensor b, bool perChannel,
                int64_t channels, int64_t inner)
      : rows_(rows), len_(len), eps_(eps), w_(std::move(w)), b_(std::move(b)),
        perChannel_(perChannel), channels_(channels), inner_(inner) {}
  void run(llvm::ArrayRef<const Tensor *> in, llvm::ArrayRef<Tensor *> out,
           ExecContext &) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    const float *w = w_.numel() ? w_.data<float>() : nullptr;
    const float *b = b_.numel() ? b_.data<float>() : nullptr;
    parallelFor(rows_, rows_ * len_ > 65536, [&](int64_t r) {
      const float *xs = x + r * len_;
      float *ys = y + r * len_;
      auto [mean, var] = meanVariance(xs, len_);
      float inv = float(1.0 / std::sqrt(var + eps_));
      float m = float(mean);
      if (!perChannel_) {
        // One loop per case, so that each vectorizes.
        if (w && b)
          for (int64_t i = 0; i < len_; ++i)
            ys[i] = (xs[i] - m) * inv * w[i] + b[i];
        else if (w)
          for (int64_t i = 0; i < len_; ++i)
            ys[i] = (xs[i] - m) * inv * w[i];
        else if (b)
          for (int64_t i = 0; i < len_; ++i)
            ys[i] = (xs[i] - m) * inv + b[i];
        else
          for (int64_t i = 0; i < len_; ++i)
            ys[i] = (xs[i] - m) * inv;
        return;
      }
      // Row r covers channels starting at (r*len / inner) mod channels.
      int64_t first = (r * len_ / inner_) % channels_;
      for (int64_t i = 0; i < len_; ++i) {
        int64_t ch = first + i / inner_;
        float v = (xs[i] - m) * inv;
        ys[i] = v * (w ? w[ch] : 1.f) + (b ? b[ch] : 0.f);
      }
    });
  }

private:
  int64_t rows_, len_;
  float eps_;
  Tensor w_, b_;
  bool perChannel_;
  int64_t channels_, inner_;
};

/// The optional affine weight and bias of a normalization.
llvm::Expected<std::pair<Tensor, Tensor>> affineWeights(const CallNode &c) {
  std::pair<Tensor, Tensor> wb;
  if (llvm::Error e = takeWeights(c, {{"weight", &wb.first}, {"bias", &wb.second}}))
    return std::move(e);
  return wb;
}

llvm::Expected<std::unique_ptr<OpKernel>> makeLayerNorm(const CallNode &c,
                                                        const KernelBuildContext &) {
  auto s = inputShape(c, 0);
  if (!s)
    return s.takeError();
  std::vector<int64_t> ns = c.attrs().getInts("normalized_shape");
  if (ns.empty() || ns.size() > s->size() ||
      !std::equal(ns.begin(), ns.end(), s->end() - ns.size()))
    return kernelError(c, "normalized_shape " + shapeToString(ns) + " does not end " +
                              shapeToString(*s));
  auto wb = affineWeights(c);
  if (!wb)
    return wb.takeError();
  Tensor *w = &wb->first, *b = &wb->second;
  int64_t len = numElements(ns);
  return std::unique_ptr<OpKernel>(new RowNormKernel(numElements(*s) / len, len,
                                                     float(c.attrs().getFloat("eps", 1e-5)),
                                                     std::move(*w), std::move(*b), false, 1, 1));
}
KC_REGISTER_KERNEL(layernorm, "nn.LayerNorm", makeLayerNorm);

llvm::Expected<std::unique_ptr<OpKernel>> makeGroupNorm(const CallNode &c,
                                                        const KernelBuildContext &) {
  auto s = inputShape(c, 0);
  if (!s)
    return s.takeError();
  int64_t G = c.attrs().getInt("num_groups", 1);
  if (s->size() < 2 || G <= 0 || (*s)[1] % G)
    return kernelError(c, "num_groups=" + llvm::Twine(G) + " does not divide the channels of " +
                              shapeToString(*s));
  auto wb = affineWeights(c);
  if (!wb)
    return wb.takeError();
  Tensor *w = &wb->first, *b = &wb->second;
  int64_t C = (*s)[1], inner = numElements(*s) / ((*s)[0] * C);
  int64_t len = C / G * inner;
  return std::unique_ptr<OpKernel>(new RowNormKernel((*s)[0] * G, len,
                                                     float(c.attrs().getFloat("eps", 1e-5)),
                                                     std::move(*w), std::move(*b), true, C, inner));
}
KC_REGISTER_KERNEL(groupnorm, "nn.GroupNorm", makeGroupNorm);

llvm::Expected<std::unique_ptr<OpKernel>> makeInstanceNorm(const CallNode &c,
                                                           const KernelBuildContext &ctx) {
  auto s = inputShape(c, 0);
  if (!s)
    return s.takeError();
  bool unbatched = s->size() == 3; // (C, H, W)
  if (unbatched)
    s->insert(s->begin(), 1);
  if (s->size() != 4)
    return kernelError(c, "expects (N, C, H, W) or (C, H, W), got " + shapeToString(*s));
  // With running statistics PyTorch normalizes like batch norm in eval mode.
  if (c.attrs().getBool("track_running_stats", false) && c.weight("running_mean")) {
    if (unbatched)
      return kernelError(c, "an unbatched input with running statistics is not supported");
    return makeBatchNorm(c, ctx);
  }
  auto wb = affineWeights(c);
  if (!wb)
    return wb.takeError();
  Tensor *w = &wb->first, *b = &wb->second;
  int64_t C = (*s)[1], inner = numElements(*s) / ((*s)[0] * C);
  return std::unique_ptr<OpKernel>(new RowNormKernel((*s)[0] * C, inner,
                                                     float(c.attrs().getFloat("eps", 1e-5)),
                                                     std::move(*w), std::move(*b), true, C, inner));
}
KC_REGISTER_KERNEL(instnorm2d, "nn.InstanceNorm2d", makeInstanceNorm);

} // namespace
} // namespace kc::rt
