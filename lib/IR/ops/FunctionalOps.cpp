//===- FunctionalOps.cpp - F.* forms whose weights are operands -----------===//
//
// pnnx turns F.conv2d(x, w) with a constant w into nn.Conv2d, and so on; it
// writes the functional form when the weights are computed, or are inputs
// of the model. Here they are data operands, read when the op runs:
// convolutions, linear, and batch, layer, group and instance norm.
//
//===----------------------------------------------------------------------===//
#include "TypeRuleUtils.h"

#include "kc/IR/WindowAttrs.h"

using namespace kc;
using namespace kc::typerules;

namespace {

/// The data operand keyed `name` ($weight, $bias, ...), or null.
const TensorTypeNode *namedType(const CallNode &c, llvm::StringRef name) {
  const ExprNode *e = c.argByName(name);
  return e ? llvm::dyn_cast_or_null<TensorTypeNode>(e->type().get()) : nullptr;
}

/// F.conv{1,2,3}d and F.conv_transpose{1,2,3}d: PyTorch's output sizes,
/// the kernel size and channels from the weight operand.
llvm::Expected<Type> convRule(const CallNode &c, size_t n, bool transposed) {
  const TensorTypeNode *in = dataType(c, 0), *w = namedType(c, "weight");
  if (!w)
    w = dataType(c, 1);
  if (!in || !w)
    return Type();
  if (in->rank() < n + 1 || w->rank() != n + 2)
    return fail(c, "expects an input of at least " + llvm::Twine(n + 1) + " dims and a weight of " +
                       llvm::Twine(n + 2));
  std::vector<int64_t> kernel(w->dims().begin() + 2, w->dims().end());
  if (llvm::any_of(kernel, [](int64_t k) { return k < 0; }))
    kernel.clear(); // unknown: kernel_size cannot be checked yet
  std::vector<int64_t> dims(in->dims().begin(), in->dims().end());
  size_t r = dims.size();
  if (kernel.empty()) {
    dims[r - n - 1] = transposed ? -1 : w->dim(0);
    for (size_t i = 0; i < n; ++i)
      dims[r - n + i] = -1;
    return tensorType(in->dtype(), dims);
  }
  auto win = WindowAttrs::from(c, n, transposed ? WindowOp::ConvTranspose : WindowOp::Conv, kernel);
  if (!win)
    return fail(c, llvm::toString(win.takeError()));
  CheckedInt oc = transposed ? CheckedInt(w->dim(1)) * win->groups : CheckedInt(w->dim(0));
  if (oc.overflowed())
    return fail(c, "groups give a channel count outside int64");
  dims[r - n - 1] = oc.value();
  for (size_t i = 0; i < n; ++i) {
    int64_t x = dims[r - n + i];
    if (x < 0)
      continue;
    std::optional<int64_t> out = win->outputSize(i, x);
    if (!out)
      return fail(c, "the attributes give an output size outside int64");
    if (*out <= 0)
      return fail(c, "input size " + llvm::Twine(x) + " in spatial dim " + llvm::Twine(i) +
                         " is smaller than the padded, dilated kernel");
    dims[r - n + i] = *out;
  }
  return tensorType(in->dtype(), dims);
}
llvm::Expected<Type> conv1d(const CallNode &c) { return convRule(c, 1, false); }
llvm::Expected<Type> conv2d(const CallNode &c) { return convRule(c, 2, false); }
llvm::Expected<Type> conv3d(const CallNode &c) { return convRule(c, 3, false); }
llvm::Expected<Type> convT1d(const CallNode &c) { return convRule(c, 1, true); }
llvm::Expected<Type> convT2d(const CallNode &c) { return convRule(c, 2, true); }
llvm::Expected<Type> convT3d(const CallNode &c) { return convRule(c, 3, true); }

llvm::Expected<Type> linear(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0), *w = namedType(c, "weight");
  if (!w)
    w = dataType(c, 1);
  if (!in || !w)
    return Type();
  if (in->rank() == 0 || w->rank() != 2)
    return fail(c, "expects an input of at least 1 dim and a 2-d weight");
  std::vector<int64_t> d(in->dims().begin(), in->dims().end());
  d.back() = w->dim(0);
  return tensorType(in->dtype(), d);
}

const OpFlags kPure = OpFlags::Pure;

#define KC_FCONV(ID, NAME, RULE, OP, RANK)                                                         \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe("convolution with the weight (and bias) as operands")                              \
      .input("input")                                                                              \
      .input("weight")                                                                             \
      .input("bias")                                                                               \
      .attr("stride", AttrValue())                                                                 \
      .attr("padding", AttrValue())                                                                \
      .attr("dilation", AttrValue())                                                               \
      .attr("groups", AttrValue::integer(1))                                                       \
      .attr("output_padding", AttrValue())                                                         \
      .flags(kPure | OpFlags::Variadic | OpFlags::FusesActivation)                                 \
      .window(WindowOp::OP, RANK)                                                                  \
      .typeRule(RULE)
KC_FCONV(fconv1d_, "F.conv1d", conv1d, Conv, 1);
KC_FCONV(fconv2d_, "F.conv2d", conv2d, Conv, 2);
KC_FCONV(fconv3d_, "F.conv3d", conv3d, Conv, 3);
KC_FCONV(fconvt1d_, "F.conv_transpose1d", convT1d, ConvTranspose, 1);
KC_FCONV(fconvt2d_, "F.conv_transpose2d", convT2d, ConvTranspose, 2);
KC_FCONV(fconvt3d_, "F.conv_transpose3d", convT3d, ConvTranspose, 3);

KC_REGISTER_OP(flinear_, "F.linear")
    .describe("x Wᵀ + b with W (and b) as operands")
    .input("input")
    .input("weight")
    .input("bias")
    .flags(kPure | OpFlags::Variadic)
    .typeRule(linear);

#define KC_FNORM(ID, NAME, DOC)                                                                    \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe(DOC)                                                                               \
      .input("input")                                                                              \
      .attr("eps", AttrValue::real(1e-5))                                                          \
      .flags(kPure | OpFlags::Variadic)                                                            \
      .typeRule(sameAsInput)
KC_FNORM(fbatchnorm_, "F.batch_norm", "batch normalization by the running_mean/var operands")
    .flags(OpFlags::FusesActivation)
    .input("running_mean")
    .input("running_var")
    .input("weight")
    .input("bias");
KC_FNORM(flayernorm_, "F.layer_norm", "layer normalization, weight and bias as operands")
    .attr("normalized_shape", AttrValue(), true)
    .input("weight")
    .input("bias");
KC_FNORM(fgroupnorm_, "F.group_norm", "group normalization, weight and bias as operands")
    .attr("num_groups", AttrValue::integer(1), true)
    .input("weight")
    .input("bias");
KC_FNORM(finstnorm_, "F.instance_norm", "instance normalization, weight and bias as operands")
    .input("running_mean")
    .input("running_var")
    .input("weight")
    .input("bias");

} // namespace
