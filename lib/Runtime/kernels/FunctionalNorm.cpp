//===- FunctionalNorm.cpp - F.batch/layer/group/instance_norm -------------===//
//
// The functional normalizations, whose statistics, weight and bias are
// operands read at each run (FunctionalOps.cpp). Absent ones (pnnx writes
// weight=None) mean 1 and 0. F.instance_norm normalizes with the input's
// own statistics, as PyTorch does unless use_input_stats=False, which
// pnnx does not write: running_mean and running_var do not change the
// output.
//
//===----------------------------------------------------------------------===//
#include "MeanVariance.h"
#include "Operands.h"
#include "Parallel.h"

namespace kc::rt {
namespace {

/// The operand positions of the optional weight and bias (-1: absent).
struct Affine {
  int weight = -1, bias = -1;
};

Affine affineOperands(const CallNode &c) {
  return {namedOperand(c, "weight"), namedOperand(c, "bias")};
}

/// Checks that the optional operand at `i` has `n` elements.
llvm::Error checkLength(const CallNode &c, int i, int64_t n, llvm::StringRef what) {
  if (i < 0)
    return llvm::Error::success();
  auto s = inputShape(c, size_t(i));
  if (!s)
    return s.takeError();
  if (numElements(*s) != n)
    return kernelError(c, what + " " + shapeToString(*s) + " does not have " + llvm::Twine(n) +
                              " elements");
  return llvm::Error::success();
}

/// F.batch_norm: (x - mean[c]) / sqrt(var[c] + eps) * w[c] + b[c].
class BatchNormKernel final : public OpKernel {
public:
  BatchNormKernel(int64_t n, int64_t c, int64_t inner, float eps, int mean, int var, Affine a)
      : n_(n), c_(c), inner_(inner), eps_(eps), mean_(mean), var_(var), a_(a) {}
  void run(llvm::ArrayRef<const Tensor *> in, llvm::ArrayRef<Tensor *> out,
           ExecContext &) const override {
    const float *x = in[0]->data<float>(), *m = in[mean_]->data<float>(),
                *v = in[var_]->data<float>();
    const float *w = a_.weight >= 0 ? in[a_.weight]->data<float>() : nullptr;
    const float *b = a_.bias >= 0 ? in[a_.bias]->data<float>() : nullptr;
    float *y = out[0]->data<float>();
    const int64_t C = c_, inner = inner_;
    parallelFor(n_ * C, n_ * C * inner > 65536, [&](int64_t plane) {
      int64_t ch = plane % C;
      float scale = float((w ? w[ch] : 1.0) / std::sqrt(double(v[ch]) + eps_));
      float shift = (b ? b[ch] : 0.f) - m[ch] * scale;
      const float *xs = x + plane * inner;
      float *ys = y + plane * inner;
      for (int64_t i = 0; i < inner; ++i)
        ys[i] = xs[i] * scale + shift;
    });
  }

private:
  int64_t n_, c_, inner_;
  float eps_;
  int mean_, var_;
  Affine a_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeBatchNorm(const CallNode &c,
                                                        const KernelBuildContext &) {
  auto s = inputShape(c, 0);
  if (!s)
    return s.takeError();
  if (s->size() < 2)
    return kernelError(c, "expects (N, C, ...), got " + shapeToString(*s));
  int mean = namedOperand(c, "running_mean"), var = namedOperand(c, "running_var");
  if (mean < 0 || var < 0)
    return kernelError(c, "needs running_mean and running_var operands (training mode is not "
                          "supported)");
  Affine a = affineOperands(c);
  int64_t C = (*s)[1];
  for (auto [i, what] : {std::pair<int, const char *>{mean, "running_mean"},
                         {var, "running_var"},
                         {a.weight, "weight"},
                         {a.bias, "bias"}})
    if (auto e = checkLength(c, i, C, what))
      return e;
  int64_t inner = numElements(*s) / std::max<int64_t>(1, (*s)[0] * C);
  return std::unique_ptr<OpKernel>(
      new BatchNormKernel((*s)[0], C, inner, float(c.attrs().getFloat("eps", 1e-5)), mean, var, a));
}
KC_REGISTER_KERNEL(fbatchnorm, "F.batch_norm", makeBatchNorm);

/// Normalizes `rows` runs of `len` values by their own mean and variance,
/// then applies the optional affine: per position of the row (layer
/// norm), or per channel of `inner` values (group and instance norm).
class RowNormKernel final : public OpKernel {
public:
  RowNormKernel(int64_t rows, int64_t len, float eps, Affine a, bool perChannel, int64_t channels,
                int64_t inner)
      : rows_(rows), len_(len), eps_(eps), a_(a), perChannel_(perChannel), channels_(channels),
        inner_(inner) {}
  void run(llvm::ArrayRef<const Tensor *> in, llvm::ArrayRef<Tensor *> out,
           ExecContext &) const override {
    const float *x = in[0]->data<float>();
    const float *w = a_.weight >= 0 ? in[a_.weight]->data<float>() : nullptr;
    const float *b = a_.bias >= 0 ? in[a_.bias]->data<float>() : nullptr;
    float *y = out[0]->data<float>();
    const int64_t len = len_, inner = inner_;
    parallelFor(rows_, rows_ * len > 65536, [&](int64_t r) {
      const float *xs = x + r * len;
      float *ys = y + r * len;
      auto [mean, var] = meanVariance(xs, len);
      const float inv = float(1.0 / std::sqrt(var + eps_)), m = float(mean);
      for (int64_t i = 0; i < len; ++i)
        ys[i] = (xs[i] - m) * inv;
      if (!perChannel_) {
        if (w)
          for (int64_t i = 0; i < len; ++i)
            ys[i] *= w[i];
        if (b)
          for (int64_t i = 0; i < len; ++i)
            ys[i] += b[i];
        return;
      }
      if (!w && !b)
        return;
      int64_t first = (r * len / inner) % channels_;
      for (int64_t i0 = 0; i0 < len; i0 += inner) {
        int64_t ch = first + i0 / inner;
        float s = w ? w[ch] : 1.f, t = b ? b[ch] : 0.f;
        for (int64_t i = i0; i < i0 + inner; ++i)
          ys[i] = ys[i] * s + t;
      }
    });
  }

private:
  int64_t rows_, len_;
  float eps_;
  Affine a_;
  bool perChannel_;
  int64_t channels_, inner_;
};

llvm::Error checkAffine(const CallNode &c, Affine a, int64_t n) {
  for (auto [i, what] : {std::pair<int, const char *>{a.weight, "weight"}, {a.bias, "bias"}}) {
    if (auto e = checkLength(c, i, n, what))
      return e;
  }
  return llvm::Error::success();
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
  Affine a = affineOperands(c);
  int64_t len = numElements(ns);
  if (auto e = checkAffine(c, a, len))
    return e;
  return std::unique_ptr<OpKernel>(new RowNormKernel(
      numElements(*s) / len, len, float(c.attrs().getFloat("eps", 1e-5)), a, false, 1, 1));
}
KC_REGISTER_KERNEL(flayernorm, "F.layer_norm", makeLayerNorm);

/// F.group_norm, and F.instance_norm as group norm with a group per channel.
template <bool Instance>
llvm::Expected<std::unique_ptr<OpKernel>> makeGroupNorm(const CallNode &c,
                                                        const KernelBuildContext &) {
  auto s = inputShape(c, 0);
  if (!s)
    return s.takeError();
  if (s->size() < (Instance ? 3u : 2u))
    return kernelError(c, "expects (N, C, ...), got " + shapeToString(*s));
  int64_t C = (*s)[1];
  int64_t G = Instance ? C : c.attrs().getInt("num_groups", 1);
  if (G <= 0 || C % G)
    return kernelError(c, "num_groups=" + llvm::Twine(G) + " does not divide the channels of " +
                              shapeToString(*s));
  Affine a = affineOperands(c);
  if (auto e = checkAffine(c, a, C))
    return e;
  int64_t inner = numElements(*s) / ((*s)[0] * C);
  return std::unique_ptr<OpKernel>(new RowNormKernel(
      (*s)[0] * G, C / G * inner, float(c.attrs().getFloat("eps", 1e-5)), a, true, C, inner));
}
KC_REGISTER_KERNEL(fgroupnorm, "F.group_norm", makeGroupNorm<false>);
KC_REGISTER_KERNEL(finstnorm, "F.instance_norm", makeGroupNorm<true>);

} // namespace
} // namespace kc::rt
