//===- PaddedConv.cpp - Convolutions with a padding_mode ------------------===//
//
// padding_mode reflect, replicate or circular, run as PyTorch defines it:
// F.pad in that mode into scratch, then the same convolution without
// padding, whose kernel the convolution factories choose as for any other.
//
//===----------------------------------------------------------------------===//
#include "../Rebind.h"
#include "ConvAlgorithms.h"

#include "kc/IR/Padding.h"
#include "kc/IR/WindowAttrs.h"

namespace kc::rt {
namespace {

/// Runs `pad` into scratch, then `conv` on the padded tensor.
class PaddedConvKernel final : public OpKernel {
public:
  PaddedConvKernel(std::unique_ptr<OpKernel> pad, std::unique_ptr<OpKernel> conv,
                   std::vector<int64_t> padded)
      : pad_(std::move(pad)), conv_(std::move(conv)), padded_(std::move(padded)) {
    padBytes_ = (size_t(numElements(padded_)) * sizeof(float) + 63) / 64 * 64;
  }
  size_t workspaceBytes() const override {
    return padBytes_ + std::max(pad_->workspaceBytes(), conv_->workspaceBytes());
  }
  /// The convolution's epilogue takes the activation after it.
  bool fuseActivation(const Activation &a) override { return conv_->fuseActivation(a); }
  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    Tensor padded = Tensor::view(DType::F32, padded_, ctx.workspace);
    ExecContext rest;
    rest.workspace = static_cast<uint8_t *>(ctx.workspace) + padBytes_;
    rest.workspaceBytes = ctx.workspaceBytes - padBytes_;
    Tensor *padOut[] = {&padded};
    pad_->run({in[0]}, padOut, rest);
    const Tensor *convIn[] = {&padded};
    if (rest.error.empty())
      conv_->run(convIn, out, rest);
    ctx.error = std::move(rest.error);
  }

private:
  std::unique_ptr<OpKernel> pad_, conv_;
  std::vector<int64_t> padded_;
  size_t padBytes_;
};

} // namespace

llvm::Expected<std::unique_ptr<OpKernel>> makePaddedConv(const CallNode &c,
                                                         const KernelBuildContext &ctx) {
  auto in = inputShape(c, 0);
  if (!in)
    return in.takeError();
  if (in->size() < 2)
    return kernelError(c, "expects (N, C, ...), got " + shapeToString(*in));
  size_t n = in->size() - 2;
  auto win = WindowAttrs::from(c, n, WindowOp::Conv);
  if (!win)
    return kernelError(c, llvm::toString(win.takeError()));
  const std::string &mode = win->paddingMode;
  if (mode == "zeros")
    return kernelError(c, "has no padding_mode to apply");
  std::vector<int64_t> pairs = win->padPairs();
  // F.pad's rules (kc/IR/Padding.h), as PyTorch pads before convolving.
  auto padded = paddedShape(*in, Padding{*parsePadMode(mode), pairs}, shapeToString(*in));
  if (!padded)
    return kernelError(c, llvm::toString(padded.takeError()));
  Type paddedType = tensorType(DType::F32, *padded);
  auto pad = kernelAs(c, "F.pad", c.args().take_front(1), c.keys().take_front(1),
                      {{"pad", AttrValue::intList(pairs)}, {"mode", AttrValue::string(mode)}}, ctx,
                      paddedType);
  if (!pad)
    return pad.takeError();
  // The same call on the padded input, without padding.
  std::vector<Expr> args(c.args().begin(), c.args().end());
  auto dataIndex = std::find_if(c.keys().begin(), c.keys().end(),
                                [](const ArgKey &k) { return k.role != ArgRole::Weight; });
  if (dataIndex == c.keys().end())
    return kernelError(c, "has no input");
  args[dataIndex - c.keys().begin()] = var("padded", paddedType);
  Attrs attrs = c.attrs();
  attrs.set("padding", AttrValue::intList(std::vector<int64_t>(n, 0)));
  attrs.set("padding_mode", AttrValue::string("zeros"));
  auto conv = kernelAs(c, c.calleeName(), args, c.keys(), std::move(attrs), ctx);
  if (!conv)
    return conv.takeError();
  return std::unique_ptr<OpKernel>(
      new PaddedConvKernel(std::move(*pad), std::move(*conv), std::move(*padded)));
}

} // namespace kc::rt
