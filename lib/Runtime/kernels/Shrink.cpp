//===- Shrink.cpp - Thresholding activations and runtime PReLU ------------===//
//
// Hardshrink, Softshrink and Threshold as branch-free selects over
// contiguous floats (the loops vectorize); F.prelu, whose slopes are an
// operand read at run time.
//
//===----------------------------------------------------------------------===//
#include "Operands.h"
#include "Parallel.h"

namespace kc::rt {
namespace {

enum class Shrink { Hard, Soft, Threshold };

template <Shrink K> class ShrinkKernel final : public OpKernel {
public:
  ShrinkKernel(float a, float b) : a_(a), b_(b) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    const float a = a_, b = b_;
    int64_t n = in[0]->numel();
    parallelFor((n + 4095) / 4096, n > 65536, [&](int64_t blk) {
      int64_t end = std::min(n, (blk + 1) * 4096);
      for (int64_t i = blk * 4096; i < end; ++i) {
        float v = x[i];
        if constexpr (K == Shrink::Hard)
          y[i] = (v >= -a && v <= a) ? 0.f : v; // NaN passes, as in PyTorch
        else if constexpr (K == Shrink::Soft)
          y[i] = v > a ? v - a : v < -a ? v + a : 0.f;
        else
          y[i] = v <= a ? b : v; // NaN passes, as in PyTorch
      }
    });
  }

private:
  float a_, b_;
};

template <Shrink K>
llvm::Expected<std::unique_ptr<OpKernel>> makeShrink(const CallNode &c,
                                                     const KernelBuildContext &) {
  float a = float(K == Shrink::Threshold ? c.attrs().getFloat("threshold", 0.0)
                                         : c.attrs().getFloat("lambd", 0.5));
  float b = float(c.attrs().getFloat("value", 0.0));
  if (K != Shrink::Threshold && !(a >= 0))
    return kernelError(c, "lambd must not be negative");
  return std::unique_ptr<OpKernel>(new ShrinkKernel<K>(a, b));
}
KC_REGISTER_KERNEL(hardshrink, "nn.Hardshrink", makeShrink<Shrink::Hard>);
KC_REGISTER_KERNEL(softshrink, "nn.Softshrink", makeShrink<Shrink::Soft>);
KC_REGISTER_KERNEL(threshold, "nn.Threshold", makeShrink<Shrink::Threshold>);

/// F.prelu: one slope, or one per channel (dim 1), from operand 1.
class RuntimePReluKernel final : public OpKernel {
public:
  RuntimePReluKernel(int64_t outer, int64_t channels, int64_t inner)
      : outer_(outer), channels_(channels), inner_(inner) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>(), *w = in[1]->data<float>();
    float *y = out[0]->data<float>();
    bool shared = in[1]->numel() == 1;
    int64_t inner = inner_;
    parallelFor(outer_ * channels_, outer_ * channels_ * inner > 65536, [&](int64_t oc) {
      float a = shared ? w[0] : w[oc % channels_];
      const float *xs = x + oc * inner;
      float *ys = y + oc * inner;
      for (int64_t i = 0; i < inner; ++i)
        ys[i] = xs[i] > 0 ? xs[i] : a * xs[i];
    });
  }

private:
  int64_t outer_, channels_, inner_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeRuntimePRelu(const CallNode &c,
                                                           const KernelBuildContext &) {
  auto s = inputShape(c, 0);
  if (!s)
    return s.takeError();
  auto w = inputShape(c, 1);
  if (!w)
    return w.takeError();
  int64_t C = s->size() >= 2 ? (*s)[1] : 1, nw = numElements(*w);
  if (w->size() > 1 || (nw != 1 && nw != C))
    return kernelError(c, "weight " + shapeToString(*w) + " is neither one slope nor one per " +
                              "channel of " + shapeToString(*s));
  int64_t outer = s->size() >= 2 ? (*s)[0] : 1;
  if (s->size() < 2)
    C = 1;
  return std::unique_ptr<OpKernel>(
      new RuntimePReluKernel(outer, C, numElements(*s) / std::max<int64_t>(1, outer * C)));
}
KC_REGISTER_KERNEL(fprelu, "F.prelu", makeRuntimePRelu);

} // namespace
} // namespace kc::rt
