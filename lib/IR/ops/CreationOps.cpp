//===- CreationOps.cpp - Tensors made from a value ------------------------===//
#include "TypeRuleUtils.h"

using namespace kc;
using namespace kc::typerules;

namespace {

// x.fill_(v) in a traced model: a tensor of x's shape and type, all v.
KC_REGISTER_OP(fill_, "Tensor.fill")
    .describe("a tensor of the input's shape and type, every element value")
    .input("input")
    .attr("value", AttrValue(), true)
    .flags(OpFlags::Pure)
    .typeRule(sameAsInput);

} // namespace
