//===- Fill.cpp - Tensor.fill and the torch.*_like fills ------------------===//
#include "Operands.h"

#include "kc/Support/FloatToInt.h"

namespace kc::rt {
namespace {

template <typename T> class FillKernel final : public OpKernel {
public:
  explicit FillKernel(T v) : v_(v) {}
  void run(llvm::ArrayRef<const Tensor *>, llvm::ArrayRef<Tensor *> out,
           ExecContext &) const override {
    T *y = out[0]->data<T>();
    std::fill(y, y + out[0]->numel(), v_);
  }

private:
  T v_;
};

/// The value a fill op writes: Tensor.fill's `value`, the `fill_value` of
/// full and full_like, 1 for the ones, 0 for the zeros and the
/// empties (whose elements PyTorch leaves unset).
AttrValue fillValue(const CallNode &c) {
  llvm::StringRef op = c.calleeName();
  if (op.endswith("ones_like") || op.endswith("ones"))
    return AttrValue::integer(1);
  if (op.endswith("zeros_like") || op.endswith("zeros") || op.endswith("empty_like") ||
      op.endswith("empty"))
    return AttrValue::integer(0);
  const AttrValue *v = c.attrs().find(op == "Tensor.fill" ? "value" : "fill_value");
  return v ? *v : AttrValue();
}

llvm::Expected<std::unique_ptr<OpKernel>> makeFill(const CallNode &c, const KernelBuildContext &) {
  const AttrValue value = fillValue(c);
  const AttrValue *v = &value;
  if (!(v->isNumber() || v->isBool()))
    return kernelError(c, "value must be a number (a tensor value is not supported)");
  double d = v->isBool() ? double(v->getBool()) : v->getNumber();
  // PyTorch refuses a value the type cannot hold (type inference does too).
  if (!v->isInt() && !scalarFits(d, outputDType(c)))
    return kernelError(c, "value " + attrToString(*v) + " cannot be converted to " +
                              dtypeName(outputDType(c)) + " without overflow");
  switch (outputDType(c)) {
  case DType::F32:
    return std::unique_ptr<OpKernel>(new FillKernel<float>(float(d)));
  case DType::I64:
    return std::unique_ptr<OpKernel>(
        new FillKernel<int64_t>(v->isInt() ? v->getInt() : *truncToInt64(d)));
  case DType::Bool:
    return std::unique_ptr<OpKernel>(new FillKernel<uint8_t>(d != 0));
  default:
    return kernelError(c,
                       "a result of type " + dtypeName(outputDType(c)).str() + " is not supported");
  }
}
KC_REGISTER_KERNEL_DTYPES(fill, "Tensor.fill", makeFill,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
// The *_like ops read only their input's shape: any element type.
KC_REGISTER_KERNEL_DTYPES(zeros_like, "torch.zeros_like", makeFill, kRealDTypes,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(ones_like, "torch.ones_like", makeFill, kRealDTypes,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(empty_like, "torch.empty_like", makeFill, kRealDTypes,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(full_like, "torch.full_like", makeFill, kRealDTypes,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
// The sized fills take no tensor but new_*'s, which lends only its dtype.
#define KC_SIZED_FILL_KERNEL(ID, NAME)                                                             \
  KC_REGISTER_KERNEL_DTYPES(ID, NAME, makeFill, kRealDTypes,                                       \
                            (DTypeSet{DType::F32, DType::I64, DType::Bool}))
KC_SIZED_FILL_KERNEL(zeros, "torch.zeros");
KC_SIZED_FILL_KERNEL(ones, "torch.ones");
KC_SIZED_FILL_KERNEL(empty, "torch.empty");
KC_SIZED_FILL_KERNEL(full, "torch.full");
KC_SIZED_FILL_KERNEL(new_zeros, "Tensor.new_zeros");
KC_SIZED_FILL_KERNEL(new_ones, "Tensor.new_ones");
KC_SIZED_FILL_KERNEL(new_empty, "Tensor.new_empty");
#undef KC_SIZED_FILL_KERNEL

/// torch.arange: element i is start + i * step, computed in `Acc` (int64
/// for an integer result, double for a floating one, as PyTorch does).
template <typename T, typename Acc> class ArangeKernel final : public OpKernel {
public:
  ArangeKernel(Acc start, Acc step) : start_(start), step_(step) {}
  void run(llvm::ArrayRef<const Tensor *>, llvm::ArrayRef<Tensor *> out,
           ExecContext &) const override {
    T *y = out[0]->data<T>();
    int64_t n = out[0]->numel();
    for (int64_t i = 0; i < n; ++i)
      y[i] = T(start_ + Acc(i) * step_);
  }

private:
  Acc start_, step_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeArange(const CallNode &c,
                                                     const KernelBuildContext &) {
  double start = c.attrs().getFloat("start", 0), step = c.attrs().getFloat("step", 1);
  const AttrValue *s = c.attrs().find("start"), *st = c.attrs().find("step");
  bool intBounds = (!s || s->isInt()) && (!st || st->isInt());
  switch (outputDType(c)) {
  case DType::F32:
    return std::unique_ptr<OpKernel>(new ArangeKernel<float, double>(start, step));
  case DType::I64:
    // PyTorch computes an integer result of floating bounds in double and
    // truncates; kc has not written that path.
    if (!intBounds)
      return kernelError(c, "an integer result of floating bounds is not supported");
    return std::unique_ptr<OpKernel>(
        new ArangeKernel<int64_t, int64_t>(s ? s->getInt() : 0, st ? st->getInt() : 1));
  default:
    return kernelError(c,
                       "a result of type " + dtypeName(outputDType(c)).str() + " is not supported");
  }
}
KC_REGISTER_KERNEL_DTYPES(arange, "torch.arange", makeArange, kRealDTypes,
                          (DTypeSet{DType::F32, DType::I64}));

} // namespace
} // namespace kc::rt
