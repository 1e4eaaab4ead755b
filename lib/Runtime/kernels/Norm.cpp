//===- Norm.cpp - Batch, layer, group and instance normalization ----------===//
#include "KernelUtils.h"
#include "MeanVariance.h"
#include "VecMath.h"

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
           ExecContext &) override {
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
  auto mean = weightTensor(c, "running_mean", true);
  if (!mean)
    return mean.takeError();
  auto var = weightTensor(c, "running_var", true);
  if (!var)
    return var.takeError();
  auto w = weightTensor(c, "weight", false);
  if (!w)
    return w.takeError();
  auto b = weightTensor(c, "bias", false);
  if (!b)
    return b.takeError();
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

/// Mean and variance of n floats, summed in double: 8 floats per step
/// into 8 double accumulators, where one running sum waits on each add in
/// turn (tiny_transformer's LayerNorms over rows of 64 took 10 % of it).
std::pair<double, double> meanVariance(const float *x, int64_t n) {
  double sum = 0, sq = 0;
  int64_t i = 0;
#ifdef KC_HAVE_VEC8
  __m256d s0 = _mm256_setzero_pd(), s1 = s0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  }
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, _mm256_add_pd(s0, s1));
  sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
#endif
  for (; i < n; ++i)
    sum += x[i];
  double mean = sum / double(n);
  i = 0;
#ifdef KC_HAVE_VEC8
  const __m256d m = _mm256_set1_pd(mean);
  s0 = _mm256_setzero_pd(), s1 = s0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), m);
    __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), m);
    s0 = _mm256_fmadd_pd(d0, d0, s0);
    s1 = _mm256_fmadd_pd(d1, d1, s1);
  }
  _mm256_store_pd(lanes, _mm256_add_pd(s0, s1));
  sq = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
#endif
  for (; i < n; ++i)
    sq += (x[i] - mean) * (x[i] - mean);
  return {mean, sq / double(n)};
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
           ExecContext &) override {
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
  auto w = weightTensor(c, "weight", false);
  if (!w)
    return w.takeError();
  auto b = weightTensor(c, "bias", false);
  if (!b)
    return b.takeError();
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
  auto w = weightTensor(c, "weight", false);
  if (!w)
    return w.takeError();
  auto b = weightTensor(c, "bias", false);
  if (!b)
    return b.takeError();
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
  auto w = weightTensor(c, "weight", false);
  if (!w)
    return w.takeError();
  auto b = weightTensor(c, "bias", false);
  if (!b)
    return b.takeError();
  int64_t C = (*s)[1], inner = numElements(*s) / ((*s)[0] * C);
  return std::unique_ptr<OpKernel>(new RowNormKernel((*s)[0] * C, inner,
                                                     float(c.attrs().getFloat("eps", 1e-5)),
                                                     std::move(*w), std::move(*b), true, C, inner));
}
KC_REGISTER_KERNEL(instnorm2d, "nn.InstanceNorm2d", makeInstanceNorm);

} // namespace
} // namespace kc::rt
