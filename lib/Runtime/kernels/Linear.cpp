//===- Linear.cpp - nn.Linear ---------------------------------------------===//
//
// y = x Wᵀ + b over all leading dims at once: one sgemm with the weight
// (out × in, row-major as PyTorch stores it) read transposed in place.
//
//===----------------------------------------------------------------------===//
#include "KernelUtils.h"

#include <cblas.h>

namespace kc::rt {
namespace {

class LinearKernel final : public FusableKernel {
public:
  LinearKernel(int64_t rows, int64_t in, int64_t out, Tensor w, Tensor b)
      : rows_(rows), in_(in), out_(out), w_(std::move(w)), b_(std::move(b)) {}

  void run(llvm::ArrayRef<const Tensor *> in, llvm::ArrayRef<Tensor *> out,
           ExecContext &) override {
    float *y = out[0]->data<float>();
    sgemm(false, true, int(rows_), int(out_), int(in_), 1.f,
                in[0]->data<float>(), int(in_), w_.data<float>(), int(in_), 0.f, y, int(out_));
    const float *b = b_.defined() && b_.numel() ? b_.data<float>() : nullptr;
    if (!b && act_ == Act::None)
      return;
    for (int64_t r = 0; r < rows_; ++r) {
      float *p = y + r * out_;
      for (int64_t j = 0; j < out_; ++j)
        p[j] = applyAct(act_, p[j] + (b ? b[j] : 0.f), slope_);
    }
  }

private:
  int64_t rows_, in_, out_;
  Tensor w_, b_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeLinear(const CallNode &c, const KernelBuildContext &) {
  auto x = inputShape(c, 0);
  if (!x)
    return x.takeError();
  auto w = weightTensor(c, "weight", true, WeightUse::ReadOnly);
  if (!w)
    return w.takeError();
  auto b = weightTensor(c, "bias", false);
  if (!b)
    return b.takeError();
  if (x->empty() || w->rank() != 2 || w->dim(1) != x->back())
    return kernelError(c, "input " + shapeToString(*x) + " does not match weight " +
                              shapeToString(w->shape()));
  int64_t rows = numElements(*x) / x->back();
  return std::unique_ptr<OpKernel>(
      new LinearKernel(rows, w->dim(1), w->dim(0), std::move(*w), std::move(*b)));
}

} // namespace

KC_REGISTER_KERNEL(linear, "nn.Linear", makeLinear);

} // namespace kc::rt
