//===- Fill.cpp - Tensor.fill ---------------------------------------------===//
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

llvm::Expected<std::unique_ptr<OpKernel>> makeFill(const CallNode &c, const KernelBuildContext &) {
  const AttrValue *v = c.attrs().find("value");
  if (!v || !(v->isNumber() || v->isBool()))
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

} // namespace
} // namespace kc::rt
