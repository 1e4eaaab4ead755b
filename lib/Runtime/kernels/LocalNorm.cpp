//===- LocalNorm.cpp - GLU, F.normalize, local response normalization -----===//
//
// Ops that combine each value with others along one dim. The tensor is
// viewed as (outer, len, inner) around that dim, and the loops run along
// `inner`, which is contiguous, so that they vectorize.
//
//===----------------------------------------------------------------------===//
#include "Epilogue.h"
#include "Operands.h"
#include "Parallel.h"

namespace kc::rt {
namespace {

/// GLU: out = a * sigmoid(b), a and b the two halves of the dim.
class GluKernel final : public OpKernel {
public:
  explicit GluKernel(AxisLine v) : v_(v) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    int64_t half = v_.len / 2 * v_.inner;
    parallelFor(v_.outer, v_.outer * half > 32768, [&](int64_t o) {
      const float *a = x + o * 2 * half, *b = a + half;
      float *d = y + o * half;
      for (int64_t i = 0; i < half; ++i)
        d[i] = a[i] / (1.f + expApprox(-b[i]));
    });
  }

private:
  AxisLine v_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeGlu(const CallNode &c, const CallShapes &io) {
  auto v = axisLine(c, io.in, c.attrs().getInt("dim", -1));
  if (!v)
    return v.takeError();
  if (v->len % 2)
    return kernelError(c, "the halved dim has an odd size, " + llvm::Twine(v->len));
  return std::unique_ptr<OpKernel>(new GluKernel(*v));
}
KC_REGISTER_KERNEL(glu, "nn.GLU", withShapes<makeGlu>);

/// F.normalize: x / max(‖x‖_p, eps) along the dim.
class NormalizeKernel final : public OpKernel {
public:
  NormalizeKernel(AxisLine v, double p, float eps) : v_(v), p_(p), eps_(eps) {
    scratch_.floats = 2 * v.inner; // one double norm per inner position
  }
  size_t workspaceBytes() const override { return scratch_.bytes(); }
  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    const int64_t len = v_.len, inner = v_.inner;
    const double p = p_;
    bool worthIt = v_.outer * len * inner > 32768;
    parallelForScratch(v_.outer, worthIt, scratch_, ctx.workspace, [&](int64_t o, float *s) {
      double *acc = reinterpret_cast<double *>(s);
      std::fill(acc, acc + inner, 0.0);
      const float *xs = x + o * len * inner;
      float *ys = y + o * len * inner;
      for (int64_t j = 0; j < len; ++j) {
        const float *r = xs + j * inner;
        if (p == 2)
          for (int64_t i = 0; i < inner; ++i)
            acc[i] += double(r[i]) * r[i];
        else if (p == 1)
          for (int64_t i = 0; i < inner; ++i)
            acc[i] += std::fabs(double(r[i]));
        else if (std::isinf(p))
          for (int64_t i = 0; i < inner; ++i)
            acc[i] = std::max(acc[i], std::fabs(double(r[i])));
        else
          for (int64_t i = 0; i < inner; ++i)
            acc[i] += std::pow(std::fabs(double(r[i])), p);
      }
      for (int64_t i = 0; i < inner; ++i) {
        double n = p == 2                    ? std::sqrt(acc[i])
                   : p == 1 || std::isinf(p) ? acc[i]
                                             : std::pow(acc[i], 1.0 / p);
        acc[i] = 1.0 / std::max(n, double(eps_));
      }
      for (int64_t j = 0; j < len; ++j)
        for (int64_t i = 0; i < inner; ++i)
          ys[j * inner + i] = float(xs[j * inner + i] * acc[i]);
    });
  }

private:
  AxisLine v_;
  double p_;
  float eps_;
  ThreadScratch scratch_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeNormalize(const CallNode &c, const CallShapes &io) {
  auto v = axisLine(c, io.in, c.attrs().getInt("dim", 1));
  if (!v)
    return v.takeError();
  double p = c.attrs().getFloat("p", 2.0);
  if (!(p > 0))
    return kernelError(c, "p must be positive, got " + std::to_string(p));
  return std::unique_ptr<OpKernel>(
      new NormalizeKernel(*v, p, float(c.attrs().getFloat("eps", 1e-12))));
}
KC_REGISTER_KERNEL(normalize, "F.normalize", withShapes<makeNormalize>);

/// Local response normalization over channels (dim 1):
/// x / (k + alpha/size · Σ x²)^beta, the sum over channels
/// [c - size/2, c + (size-1)/2] (absent ones count as zero).
class LrnKernel final : public OpKernel {
public:
  LrnKernel(AxisLine v, int64_t size, float alpha, float beta, float k)
      : v_(v), size_(size), alpha_(alpha), beta_(beta), k_(k) {
    scratch_.floats = v.inner; // the window's sum of squares per inner position
  }
  size_t workspaceBytes() const override { return scratch_.bytes(); }
  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    const int64_t C = v_.len, inner = v_.inner;
    bool worthIt = v_.outer * C * inner * size_ > 32768;
    parallelForScratch(v_.outer * C, worthIt, scratch_, ctx.workspace, [&](int64_t oc, float *acc) {
      int64_t o = oc / C, ch = oc % C;
      int64_t lo = std::max<int64_t>(0, ch - size_ / 2);
      int64_t hi = std::min<int64_t>(C - 1, ch + (size_ - 1) / 2);
      std::fill(acc, acc + inner, 0.f);
      for (int64_t j = lo; j <= hi; ++j) {
        const float *r = x + (o * C + j) * inner;
        for (int64_t i = 0; i < inner; ++i)
          acc[i] += r[i] * r[i];
      }
      const float *xs = x + oc * inner;
      float *ys = y + oc * inner;
      float scale = alpha_ / float(size_);
      for (int64_t i = 0; i < inner; ++i)
        ys[i] = xs[i] / std::pow(acc[i] * scale + k_, beta_);
    });
  }

private:
  AxisLine v_;
  int64_t size_;
  float alpha_, beta_, k_;
  ThreadScratch scratch_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeLrn(const CallNode &c, const CallShapes &io) {
  if (io.in.size() < 3)
    return kernelError(c, "expects (N, C, ...), got " + shapeToString(io.in));
  auto v = axisLine(c, io.in, 1);
  if (!v)
    return v.takeError();
  int64_t size = c.attrs().getInt("size", 0);
  if (size <= 0)
    return kernelError(c, "size must be positive, got " + llvm::Twine(size));
  return std::unique_ptr<OpKernel>(new LrnKernel(*v, size, float(c.attrs().getFloat("alpha", 1e-4)),
                                                 float(c.attrs().getFloat("beta", 0.75)),
                                                 float(c.attrs().getFloat("k", 1.0))));
}
KC_REGISTER_KERNEL(lrn, "nn.LocalResponseNorm", withShapes<makeLrn>);

} // namespace
} // namespace kc::rt
