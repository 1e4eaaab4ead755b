//===- CreationOps.cpp - Tensors made from a value ------------------------===//
#include "TypeRuleUtils.h"
#include "kc/Support/DType.h"
#include "kc/Support/Quote.h"

using namespace kc;
using namespace kc::typerules;

namespace {

/// The input's type, the value refused where PyTorch refuses it.
llvm::Expected<Type> fill(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  if (auto e = checkScalarFits(c, "value", in->dtype()))
    return std::move(e);
  return dataArg(c, 0)->type();
}

/// torch.*_like: the input's shape, of `dtype` when given (`torch.float`),
/// else of the input's type; full_like's value refused where PyTorch
/// refuses it.
llvm::Expected<Type> like(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  std::string name = c.attrs().getString("dtype", "");
  std::optional<DType> dt = parseTorchDType(name);
  if (!name.empty() && !dt)
    return fail(c, "dtype " + quoteInput(name) + " is not a torch element type");
  DType out = dt ? *dt : in->dtype();
  if (c.attrs().find("fill_value"))
    if (auto e = checkScalarFits(c, "fill_value", out))
      return std::move(e);
  return tensorType(out, in->dims());
}

// x.fill_(v) in a traced model: a tensor of x's shape and type, all v.
KC_REGISTER_OP(fill_, "Tensor.fill")
    .describe("a tensor of the input's shape and type, every element value")
    .input("input")
    .attr("value", AttrValue(), true)
    .flags(OpFlags::Pure)
    .typeRule(fill);
// pnnx writes these where the input's shape is not known when converting
// (`?` dims); at a static shape it folds them into constants.
KC_REGISTER_OP(zeros_like_, "torch.zeros_like")
    .describe("zeros of the input's shape (and dtype, unless given)")
    .input("input")
    .attr("dtype", AttrValue())
    .flags(OpFlags::Pure)
    .typeRule(like);
KC_REGISTER_OP(ones_like_, "torch.ones_like")
    .describe("ones of the input's shape (and dtype, unless given)")
    .input("input")
    .attr("dtype", AttrValue())
    .flags(OpFlags::Pure)
    .typeRule(like);
KC_REGISTER_OP(empty_like_, "torch.empty_like")
    .describe("a tensor of the input's shape (and dtype, unless given); kc's holds zeros")
    .input("input")
    .attr("dtype", AttrValue())
    .flags(OpFlags::Pure)
    .typeRule(like);
KC_REGISTER_OP(full_like_, "torch.full_like")
    .describe("fill_value in the input's shape (and dtype, unless given)")
    .input("input")
    .attr("fill_value", AttrValue(), true)
    .attr("dtype", AttrValue())
    .flags(OpFlags::Pure)
    .typeRule(like);

} // namespace
