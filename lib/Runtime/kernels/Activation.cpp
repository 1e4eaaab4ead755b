//===- Activation.cpp - Elementwise activations and softmax ---------------===//
#include "CallInfo.h"
#include "Epilogue.h"
#include "SoftmaxRow.h"
#include "kc/Runtime/Schedule.h"

namespace kc::rt {
namespace {

using UnaryFn = float (*)(float, const float *params);

/// One elementwise activation; `params` holds its attributes. The function
/// is a template argument so it inlines and the loop vectorizes (a
/// standalone nn.ReLU on 56x56x64: 0.42 ms through a function pointer).
template <UnaryFn F> class UnaryKernel final : public OpKernel {
public:
  explicit UnaryKernel(std::vector<float> params) : p_(std::move(params)) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    int64_t n = in[0]->numel();
    const float *p = p_.data();
    // Blocks of elements, each a plain loop the compiler vectorizes.
    constexpr int64_t kBlock = 4096;
    parallelFor((n + kBlock - 1) / kBlock, n > 65536, [&](int64_t b) {
      const int64_t lo = b * kBlock, hi = std::min(n, lo + kBlock);
      for (int64_t i = lo; i < hi; ++i)
        y[i] = F(x[i], p);
    });
  }

private:
  std::vector<float> p_;
};

template <UnaryFn F, int NumParams = 0>
llvm::Expected<std::unique_ptr<OpKernel>> unary(const CallNode &c, std::vector<float> params) {
  auto in = inputShape(c, 0);
  if (!in)
    return in.takeError();
  return std::unique_ptr<OpKernel>(new UnaryKernel<F>(std::move(params)));
}

float relu(float x, const float *) { return x < 0 ? 0.f : x; } // NaN stays NaN
float relu6(float x, const float *) { return std::min(std::max(x, 0.f), 6.f); }
float sigmoid(float x, const float *) { return 1.f / (1.f + expApprox(-x)); }
float tanhf_(float x, const float *) { return uk::tanhApprox(x); }
float silu(float x, const float *) { return x / (1.f + expApprox(-x)); }
float hardswish(float x, const float *) { return x * std::min(std::max(x + 3.f, 0.f), 6.f) / 6.f; }
float hardsigmoid(float x, const float *) { return std::min(std::max(x + 3.f, 0.f), 6.f) / 6.f; }
// The micro-kernels' scalar forms (ScalarMath.h), which fused epilogues apply too.
float geluErf(float x, const float *) { return uk::geluErf(x); }
float geluTanh(float x, const float *) { return uk::geluTanh(x); }
float leaky(float x, const float *p) { return x > 0 ? x : x * p[0]; }
float elu(float x, const float *p) { return x > 0 ? x : p[0] * std::expm1(x); }
float celu(float x, const float *p) { return x > 0 ? x : p[0] * std::expm1(x / p[0]); }
float selu(float x, const float *) {
  return 1.0507009873554804934193349852946f *
         (x > 0 ? x : 1.6732632423543772848170429916717f * std::expm1(x));
}
float hardtanh(float x, const float *p) { return std::min(std::max(x, p[0]), p[1]); }
float softplus(float x, const float *p) {
  return x * p[0] > p[1] ? x : std::log1p(std::exp(x * p[0])) / p[0];
}
float mish(float x, const float *) { return x * std::tanh(std::log1p(std::exp(x))); }
float softsign(float x, const float *) { return x / (1.f + std::fabs(x)); }
float logsigmoid(float x, const float *) {
  return x < 0 ? x - std::log1p(std::exp(x)) : -std::log1p(std::exp(-x));
}
float tanhshrink(float x, const float *) { return x - std::tanh(x); }

/// The float attributes `names` (with their defaults) of call c.
std::vector<float> params(const CallNode &c,
                          std::initializer_list<std::pair<const char *, double>> names) {
  std::vector<float> r;
  for (auto [name, dflt] : names)
    r.push_back(float(c.attrs().getFloat(name, dflt)));
  return r;
}

/// Registers activation FN for op OP; its parameters, if any, are float
/// attributes {name, default}.
#define KC_UNARY_KERNEL(ID, OP, FN, ...)                                                           \
  llvm::Expected<std::unique_ptr<OpKernel>> make_##ID(const CallNode &c,                           \
                                                      const KernelBuildContext &) {                \
    return unary<FN>(c, params(c, {__VA_ARGS__}));                                                 \
  }                                                                                                \
  KC_REGISTER_KERNEL(ID, OP, make_##ID)

KC_UNARY_KERNEL(relu, "nn.ReLU", relu);
KC_UNARY_KERNEL(relu6, "nn.ReLU6", relu6);
KC_UNARY_KERNEL(sigmoid, "nn.Sigmoid", sigmoid);
KC_UNARY_KERNEL(tanh, "nn.Tanh", tanhf_);
KC_UNARY_KERNEL(silu, "nn.SiLU", silu);
KC_UNARY_KERNEL(hardswish, "nn.Hardswish", hardswish);
KC_UNARY_KERNEL(hardsigmoid, "nn.Hardsigmoid", hardsigmoid);
KC_UNARY_KERNEL(selu, "nn.SELU", selu);
KC_UNARY_KERNEL(mish, "nn.Mish", mish);
KC_UNARY_KERNEL(softsign, "nn.Softsign", softsign);
KC_UNARY_KERNEL(logsigmoid, "nn.LogSigmoid", logsigmoid);
KC_UNARY_KERNEL(tanhshrink, "nn.Tanhshrink", tanhshrink);

/// The form fusableActivation reads from `approximate`, the one place that
/// knows its values.
llvm::Expected<std::unique_ptr<OpKernel>> makeGelu(const CallNode &c, const KernelBuildContext &) {
  std::optional<Activation> a = fusableActivation(c);
  if (!a)
    return kernelError(c,
                       "unknown approximate='" + c.attrs().getString("approximate", "none") + "'");
  return a->kind == Act::GeluTanh ? unary<geluTanh>(c, {}) : unary<geluErf>(c, {});
}
KC_REGISTER_KERNEL(gelu, "nn.GELU", makeGelu);

KC_UNARY_KERNEL(leakyrelu, "nn.LeakyReLU", leaky, {"negative_slope", 0.01});
KC_UNARY_KERNEL(elu, "nn.ELU", elu, {"alpha", 1.0});
KC_UNARY_KERNEL(celu, "nn.CELU", celu, {"alpha", 1.0});
KC_UNARY_KERNEL(hardtanh, "nn.Hardtanh", hardtanh, {"min_val", -1.0}, {"max_val", 1.0});
KC_UNARY_KERNEL(softplus, "nn.Softplus", softplus, {"beta", 1.0}, {"threshold", 20.0});

/// PReLU: one learned slope, or one per channel (dim 1).
class PReluKernel final : public OpKernel {
public:
  PReluKernel(Tensor w, int64_t outer, int64_t channels, int64_t inner)
      : w_(std::move(w)), outer_(outer), channels_(channels), inner_(inner) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    const float *w = w_.data<float>();
    bool shared = w_.numel() == 1;
    for (int64_t o = 0; o < outer_; ++o)
      for (int64_t c = 0; c < channels_; ++c) {
        float a = shared ? w[0] : w[c];
        int64_t base = (o * channels_ + c) * inner_;
        for (int64_t i = 0; i < inner_; ++i)
          y[base + i] = x[base + i] > 0 ? x[base + i] : a * x[base + i];
      }
  }

private:
  Tensor w_;
  int64_t outer_, channels_, inner_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makePRelu(const CallNode &c, const KernelBuildContext &) {
  auto s = inputShape(c, 0);
  if (!s)
    return s.takeError();
  auto w = weightTensor(c, "weight", true);
  if (!w)
    return w.takeError();
  int64_t C = s->size() >= 2 ? (*s)[1] : 1;
  if (w->numel() != 1 && w->numel() != C)
    return kernelError(c, "weight has " + llvm::Twine(w->numel()) + " slopes for " +
                              llvm::Twine(C) + " channels");
  int64_t outer = s->empty() ? 1 : (*s)[0];
  int64_t inner = numElements(*s) / std::max<int64_t>(1, outer * C);
  if (s->size() < 2)
    outer = 1, C = 1, inner = numElements(*s);
  return std::unique_ptr<OpKernel>(new PReluKernel(std::move(*w), outer, C, inner));
}
KC_REGISTER_KERNEL(prelu, "nn.PReLU", makePRelu);

/// Softmax, log-softmax and softmin along one axis, numerically stable.
class SoftmaxKernel final : public OpKernel {
public:
  enum Kind { Softmax, LogSoftmax, Softmin };
  SoftmaxKernel(Kind k, int64_t outer, int64_t len, int64_t inner)
      : k_(k), outer_(outer), len_(len), inner_(inner) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    const float sign = k_ == Softmin ? -1.f : 1.f;
    const bool log = k_ == LogSoftmax;
    if (inner_ == 1) {
      parallelFor(outer_, outer_ * len_ > 65536,
                  [&](int64_t o) { softmaxRow(x + o * len_, y + o * len_, len_, sign, log); });
      return;
    }
    // Along a dim that is not the last: kColumns positions of the inner
    // dims at a time, each pass over the axis contiguous across them.
    constexpr int64_t kColumns = 256;
    const int64_t blocks = (inner_ + kColumns - 1) / kColumns;
    parallelFor(outer_ * blocks, outer_ * inner_ * len_ > 65536, [&](int64_t ob) {
      int64_t o = ob / blocks, i0 = (ob % blocks) * kColumns, w = std::min(kColumns, inner_ - i0);
      const float *xs = x + o * len_ * inner_ + i0;
      float *ys = y + o * len_ * inner_ + i0;
      float m[kColumns], sum[kColumns];
      std::fill(m, m + w, -INFINITY);
      std::fill(sum, sum + w, 0.f);
      for (int64_t j = 0; j < len_; ++j)
        for (int64_t i = 0; i < w; ++i)
          m[i] = std::max(m[i], sign * xs[j * inner_ + i]);
      const uk::ExpSumFn expSum = uk::microKernels().expSum;
      float d[kColumns];
      for (int64_t j = 0; j < len_; ++j) {
        for (int64_t i = 0; i < w; ++i)
          d[i] = sign * xs[j * inner_ + i] - m[i];
        float *e = log ? d : ys + j * inner_;
        expSum(d, e, w, 1.f, 0.f);
        for (int64_t i = 0; i < w; ++i)
          sum[i] += e[i];
      }
      for (int64_t i = 0; i < w; ++i)
        sum[i] = log ? std::log(sum[i]) + m[i] : 1.f / sum[i];
      for (int64_t j = 0; j < len_; ++j)
        for (int64_t i = 0; i < w; ++i)
          ys[j * inner_ + i] =
              log ? sign * xs[j * inner_ + i] - sum[i] : ys[j * inner_ + i] * sum[i];
    });
  }

private:
  Kind k_;
  int64_t outer_, len_, inner_;
};

template <SoftmaxKernel::Kind K>
llvm::Expected<std::unique_ptr<OpKernel>> makeSoftmax(const CallNode &c,
                                                      const KernelBuildContext &) {
  auto s = inputShape(c, 0);
  if (!s)
    return s.takeError();
  if (s->empty())
    return std::unique_ptr<OpKernel>(new SoftmaxKernel(K, 1, 1, 1));
  int axis = normAxis(c.attrs().getInt("dim", -1), s->size());
  if (axis < 0 || axis >= int(s->size()))
    return kernelError(c, "dim out of range for " + shapeToString(*s));
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i)
    outer *= (*s)[i];
  for (size_t i = axis + 1; i < s->size(); ++i)
    inner *= (*s)[i];
  return std::unique_ptr<OpKernel>(new SoftmaxKernel(K, outer, (*s)[axis], inner));
}
KC_REGISTER_KERNEL(softmax, "nn.Softmax", makeSoftmax<SoftmaxKernel::Softmax>);
KC_REGISTER_KERNEL(logsoftmax, "nn.LogSoftmax", makeSoftmax<SoftmaxKernel::LogSoftmax>);
KC_REGISTER_KERNEL(softmin, "nn.Softmin", makeSoftmax<SoftmaxKernel::Softmin>);

} // namespace
} // namespace kc::rt
