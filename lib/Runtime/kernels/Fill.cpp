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

/// The value a fill op writes: Tensor.fill's `value`, torch.full_like's
/// `fill_value`, 1 for ones_like, 0 for zeros_like and empty_like (whose
/// elements PyTorch leaves unset).
AttrValue fillValue(const CallNode &c) {
  llvm::StringRef op = c.calleeName();
  if (op == "torch.ones_like")
    return AttrValue::integer(1);
  if (op == "torch.zeros_like" || op == "torch.empty_like")
    return AttrValue::integer(0);
  const AttrValue *v = c.attrs().find(op == "torch.full_like" ? "fill_value" : "value");
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

} // namespace
} // namespace kc::rt
