//===- CreationOps.cpp - Tensors made from a value ------------------------===//
#include "TypeRuleUtils.h"

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

// x.fill_(v) in a traced model: a tensor of x's shape and type, all v.
KC_REGISTER_OP(fill_, "Tensor.fill")
    .describe("a tensor of the input's shape and type, every element value")
    .input("input")
    .attr("value", AttrValue(), true)
    .flags(OpFlags::Pure)
    .typeRule(fill);

} // namespace
