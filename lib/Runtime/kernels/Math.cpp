//===- Math.cpp - lgamma, cross, pairwise_distance ------------------------===//
#include "Operands.h"
#include "Parallel.h"

namespace kc::rt {
namespace {

class LgammaKernel final : public OpKernel {
public:
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    int64_t n = in[0]->numel();
    parallelFor((n + 4095) / 4096, n > 32768, [&](int64_t blk) {
      for (int64_t i = blk * 4096, e = std::min(n, i + 4096); i < e; ++i)
        y[i] = std::lgamma(x[i]);
    });
  }
};

llvm::Expected<std::unique_ptr<OpKernel>> makeLgamma(const CallNode &c,
                                                     const KernelBuildContext &) {
  return std::unique_ptr<OpKernel>(new LgammaKernel());
}
KC_REGISTER_KERNEL(lgamma, "torch.lgamma", makeLgamma);

/// The one shape of both operands of an op that does not broadcast them.
llvm::Expected<std::vector<int64_t>> sameShapeOperands(const CallNode &c) {
  auto s = inputShapes(c, 2);
  if (!s)
    return s.takeError();
  if ((*s)[0] != (*s)[1])
    return kernelError(c, "operands of different shapes (broadcasting) are not supported");
  return std::move((*s)[0]);
}

/// torch.cross of same-shape operands along a dim of size 3.
class CrossKernel final : public OpKernel {
public:
  CrossKernel(int64_t outer, int64_t inner) : outer_(outer), inner_(inner) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *a = in[0]->data<float>(), *b = in[1]->data<float>();
    float *y = out[0]->data<float>();
    const int64_t n = inner_;
    for (int64_t o = 0; o < outer_; ++o) {
      const float *a0 = a + o * 3 * n, *a1 = a0 + n, *a2 = a1 + n;
      const float *b0 = b + o * 3 * n, *b1 = b0 + n, *b2 = b1 + n;
      float *y0 = y + o * 3 * n, *y1 = y0 + n, *y2 = y1 + n;
      for (int64_t i = 0; i < n; ++i) {
        y0[i] = a1[i] * b2[i] - a2[i] * b1[i];
        y1[i] = a2[i] * b0[i] - a0[i] * b2[i];
        y2[i] = a0[i] * b1[i] - a1[i] * b0[i];
      }
    }
  }

private:
  int64_t outer_, inner_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeCross(const CallNode &c, const KernelBuildContext &) {
  auto a = sameShapeOperands(c);
  if (!a)
    return a.takeError();
  // Without a dim, PyTorch crosses along the first dim of size 3.
  const AttrValue *dv = c.attrs().find("dim");
  int64_t d = -1;
  if (dv && !dv->isNone())
    d = dv->getInt();
  else if (auto it = llvm::find(*a, 3); it != a->end())
    d = it - a->begin();
  auto l = axisLine(c, *a, d);
  if (!l)
    return l.takeError();
  if (l->len != 3)
    return kernelError(c, "the crossed dim must have size 3");
  return std::unique_ptr<OpKernel>(new CrossKernel(l->outer, l->inner));
}
KC_REGISTER_KERNEL(cross, "torch.cross", makeCross);

/// F.pairwise_distance of same-shape operands: ‖x1 - x2 + eps‖_p over the
/// last dim.
class PairwiseDistanceKernel final : public OpKernel {
public:
  PairwiseDistanceKernel(int64_t rows, int64_t len, double p, double eps)
      : rows_(rows), len_(len), p_(p), eps_(eps) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *a = in[0]->data<float>(), *b = in[1]->data<float>();
    float *y = out[0]->data<float>();
    for (int64_t r = 0; r < rows_; ++r) {
      double acc = 0;
      for (int64_t i = 0; i < len_; ++i) {
        double d = std::fabs(double(float(a[r * len_ + i] - b[r * len_ + i]) + float(eps_)));
        acc = std::isinf(p_) ? std::max(acc, d) : p_ == 0 ? acc + (d != 0) : acc + std::pow(d, p_);
      }
      y[r] = float(std::isinf(p_) || p_ == 0 ? acc : std::pow(acc, 1.0 / p_));
    }
  }

private:
  int64_t rows_, len_;
  double p_, eps_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makePairwiseDistance(const CallNode &c,
                                                               const KernelBuildContext &) {
  auto a = sameShapeOperands(c);
  if (!a)
    return a.takeError();
  if (a->empty())
    return kernelError(c, "expects operands of at least one dim");
  double p = c.attrs().getFloat("p", 2.0);
  if (p < 0)
    return kernelError(c, "p must not be negative");
  return std::unique_ptr<OpKernel>(new PairwiseDistanceKernel(
      numElements(*a) / a->back(), a->back(), p, c.attrs().getFloat("eps", 1e-6)));
}
KC_REGISTER_KERNEL(pairwise_distance, "F.pairwise_distance", makePairwiseDistance);

} // namespace
} // namespace kc::rt
