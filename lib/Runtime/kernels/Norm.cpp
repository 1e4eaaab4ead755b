//===- Norm.cpp - Batch, layer, group and instance normalization ----------===//
//
// The nn modules and the F. functions alike: a module's statistics, weight
// and bias are weights of the call, a function's are operands, and the
// kernels read either (ParamTensor.h). Absent ones (affine=False, pnnx's
// weight=None) mean 1 and 0. F.instance_norm normalizes with the input's
// own statistics, as PyTorch does unless use_input_stats=False, which pnnx
// does not write: running_mean and running_var do not change its output.
//
//===----------------------------------------------------------------------===//
#include "../ukernels/MicroKernels.h"
#include "Epilogue.h"
#include "MeanVariance.h"
#include "Parallel.h"
#include "ParamTensor.h"

namespace kc::rt {

/// Mean and variance of n floats, summed in double (f32_mean_variance).
std::pair<double, double> meanVariance(const float *x, int64_t n) {
  double mean, var;
  uk::microKernels().meanVariance(x, n, &mean, &var);
  return {mean, var};
}

namespace {

/// The parameters of a normalization, each optional: running statistics
/// (batch norm reads them) and the affine weight and bias.
struct NormParams {
  ParamTensor mean, var, weight, bias;
};

/// c's NormParams, `n` elements each (channels, or positions of a row).
llvm::Expected<NormParams> normParams(const CallNode &c, int64_t n) {
  NormParams p;
  if (llvm::Error e = takeParams(c, n,
                                 {{"running_mean", &p.mean},
                                  {"running_var", &p.var},
                                  {"weight", &p.weight},
                                  {"bias", &p.bias}}))
    return std::move(e);
  return p;
}

/// Inference-mode batch norm over (N, C, inner):
/// y = (x - mean[c]) / sqrt(var[c] + eps) * w[c] + b[c], as x·scale + shift
/// per channel, then the activation fused after it (densenet's BatchNorm →
/// ReLU before each convolution), applied to each plane while it is in
/// cache.
class BatchNormKernel final : public FusableKernel {
public:
  BatchNormKernel(int64_t n, int64_t c, int64_t inner, double eps, NormParams p)
      : n_(n), c_(c), inner_(inner), eps_(eps), p_(std::move(p)) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>(), *m = p_.mean.data(in), *v = p_.var.data(in);
    const float *w = p_.weight.data(in), *b = p_.bias.data(in);
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
      biasActivationRow(ys, inner, 0.f, act_, slope_);
    });
  }

private:
  int64_t n_, c_, inner_;
  double eps_;
  NormParams p_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeBatchNorm(const CallNode &c, const CallShapes &io) {
  llvm::ArrayRef<int64_t> s = io.in;
  if (s.size() < 2)
    return kernelError(c, "expects (N, C, ...), got " + shapeToString(s));
  int64_t C = s[1];
  auto p = normParams(c, C);
  if (!p)
    return p.takeError();
  if (!p->mean.present() || !p->var.present())
    return kernelError(c, "needs running_mean and running_var (training mode is not supported)");
  int64_t inner = numElements(s) / std::max<int64_t>(1, s[0] * C);
  return std::unique_ptr<OpKernel>(
      new BatchNormKernel(s[0], C, inner, c.attrs().getFloat("eps", 1e-5), std::move(*p)));
}
KC_REGISTER_KERNEL(bn1d, "nn.BatchNorm1d", withShapes<makeBatchNorm>);
KC_REGISTER_KERNEL(bn2d, "nn.BatchNorm2d", withShapes<makeBatchNorm>);
KC_REGISTER_KERNEL(bn3d, "nn.BatchNorm3d", withShapes<makeBatchNorm>);
KC_REGISTER_KERNEL(fbatchnorm, "F.batch_norm", withShapes<makeBatchNorm>);

/// Normalizes `rows` runs of `len` values by their own mean and variance,
/// then applies the optional affine: per position of the row (layer
/// norm), or per channel of `inner` values (group and instance norm).
class RowNormKernel final : public OpKernel {
public:
  RowNormKernel(int64_t rows, int64_t len, float eps, NormParams p, bool perChannel,
                int64_t channels, int64_t inner)
      : rows_(rows), len_(len), eps_(eps), p_(std::move(p)), perChannel_(perChannel),
        channels_(channels), inner_(inner) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>();
    const float *w = p_.weight.data(in), *b = p_.bias.data(in);
    float *y = out[0]->data<float>();
    const int64_t len = len_, inner = inner_;
    parallelFor(rows_, rows_ * len > 65536, [&](int64_t r) {
      const float *xs = x + r * len;
      float *ys = y + r * len;
      auto [mean, var] = meanVariance(xs, len);
      const float inv = float(1.0 / std::sqrt(var + eps_)), m = float(mean);
      if (!perChannel_) {
        // One loop per case, so that each vectorizes.
        if (w && b)
          for (int64_t i = 0; i < len; ++i)
            ys[i] = (xs[i] - m) * inv * w[i] + b[i];
        else if (w)
          for (int64_t i = 0; i < len; ++i)
            ys[i] = (xs[i] - m) * inv * w[i];
        else if (b)
          for (int64_t i = 0; i < len; ++i)
            ys[i] = (xs[i] - m) * inv + b[i];
        else
          for (int64_t i = 0; i < len; ++i)
            ys[i] = (xs[i] - m) * inv;
        return;
      }
      // Row r covers channels starting at (r*len / inner) mod channels, a
      // run of `inner` values each.
      for (int64_t i0 = 0; i0 < len; i0 += inner) {
        int64_t ch = ((r * len + i0) / inner) % channels_;
        float s = w ? w[ch] : 1.f, t = b ? b[ch] : 0.f;
        for (int64_t i = i0; i < i0 + inner; ++i)
          ys[i] = (xs[i] - m) * inv * s + t;
      }
    });
  }

private:
  int64_t rows_, len_;
  float eps_;
  NormParams p_;
  bool perChannel_;
  int64_t channels_, inner_;
};

float epsOf(const CallNode &c) { return float(c.attrs().getFloat("eps", 1e-5)); }

llvm::Expected<std::unique_ptr<OpKernel>> makeLayerNorm(const CallNode &c, const CallShapes &io) {
  llvm::ArrayRef<int64_t> s = io.in;
  std::vector<int64_t> ns = c.attrs().getInts("normalized_shape");
  if (ns.empty() || ns.size() > s.size() || !std::equal(ns.begin(), ns.end(), s.end() - ns.size()))
    return kernelError(c, "normalized_shape " + shapeToString(ns) + " does not end " +
                              shapeToString(s));
  int64_t len = numElements(ns);
  auto p = normParams(c, len);
  if (!p)
    return p.takeError();
  return std::unique_ptr<OpKernel>(
      new RowNormKernel(numElements(s) / len, len, epsOf(c), std::move(*p), false, 1, 1));
}
KC_REGISTER_KERNEL(layernorm, "nn.LayerNorm", withShapes<makeLayerNorm>);
KC_REGISTER_KERNEL(flayernorm, "F.layer_norm", withShapes<makeLayerNorm>);

/// Group norm of `groups` groups over `s`, (N, C, ...).
llvm::Expected<std::unique_ptr<OpKernel>> groupNorm(const CallNode &c, llvm::ArrayRef<int64_t> s,
                                                    int64_t groups) {
  if (s.size() < 2)
    return kernelError(c, "expects (N, C, ...), got " + shapeToString(s));
  int64_t C = s[1];
  if (groups <= 0 || C % groups)
    return kernelError(c, "num_groups=" + llvm::Twine(groups) +
                              " does not divide the channels of " + shapeToString(s));
  auto p = normParams(c, C);
  if (!p)
    return p.takeError();
  int64_t inner = numElements(s) / (s[0] * C);
  return std::unique_ptr<OpKernel>(new RowNormKernel(s[0] * groups, C / groups * inner, epsOf(c),
                                                     std::move(*p), true, C, inner));
}

llvm::Expected<std::unique_ptr<OpKernel>> makeGroupNorm(const CallNode &c, const CallShapes &io) {
  return groupNorm(c, io.in, c.attrs().getInt("num_groups", 1));
}
KC_REGISTER_KERNEL(groupnorm, "nn.GroupNorm", withShapes<makeGroupNorm>);
KC_REGISTER_KERNEL(fgroupnorm, "F.group_norm", withShapes<makeGroupNorm>);

/// F.instance_norm: group norm with a group per channel of (N, C, ...).
llvm::Expected<std::unique_ptr<OpKernel>> makeInstanceNorm(const CallNode &c,
                                                           const CallShapes &io) {
  if (io.in.size() < 3)
    return kernelError(c, "expects (N, C, ...), got " + shapeToString(io.in));
  return groupNorm(c, io.in, io.in[1]);
}
KC_REGISTER_KERNEL(finstnorm, "F.instance_norm", withShapes<makeInstanceNorm>);

/// nn.InstanceNorm2d, whose input may also be unbatched, (C, H, W); with
/// running statistics PyTorch normalizes like batch norm in eval mode.
llvm::Expected<std::unique_ptr<OpKernel>> makeInstanceNorm2d(const CallNode &c,
                                                             const CallShapes &io) {
  bool unbatched = io.in.size() == 3;
  if (!unbatched && io.in.size() != 4)
    return kernelError(c, "expects (N, C, H, W) or (C, H, W), got " + shapeToString(io.in));
  if (c.attrs().getBool("track_running_stats", false) && c.weight("running_mean")) {
    if (unbatched)
      return kernelError(c, "an unbatched input with running statistics is not supported");
    return makeBatchNorm(c, io);
  }
  std::vector<int64_t> s = io.in;
  if (unbatched)
    s.insert(s.begin(), 1);
  return groupNorm(c, s, s[1]);
}
KC_REGISTER_KERNEL(instnorm2d, "nn.InstanceNorm2d", withShapes<makeInstanceNorm2d>);

} // namespace
} // namespace kc::rt
