//===- MathOps.cpp - lgamma, cross, pairwise_distance ---------------------===//
#include "TypeRuleUtils.h"

using namespace kc;
using namespace kc::typerules;

namespace {

llvm::Expected<Type> cross(const CallNode &c) {
  const TensorTypeNode *a = dataType(c, 0), *b = dataType(c, 1);
  if (!a || !b)
    return Type();
  auto d = broadcast(a->dims(), b->dims());
  if (!d)
    return fail(c, "operands do not broadcast");
  const AttrValue *dv = c.attrs().find("dim");
  int64_t k = dv && !dv->isNone() ? normDim(dv->getInt(), d->size()) : -1;
  if (k < 0) // without a dim: the first of size 3
    for (size_t i = 0; i < d->size() && k < 0; ++i)
      if ((*d)[i] == 3)
        k = int64_t(i);
  if (k < 0 || (*d)[k] != 3)
    return fail(c, "the crossed dim must have size 3");
  return tensorType(a->dtype(), *d);
}

/// ‖x1 - x2 + eps‖_p over the last dim of the broadcast operands.
llvm::Expected<Type> pairwiseDistance(const CallNode &c) {
  const TensorTypeNode *a = dataType(c, 0), *b = dataType(c, 1);
  if (!a || !b)
    return Type();
  auto d = broadcast(a->dims(), b->dims());
  if (!d || d->empty())
    return fail(c, "operands do not broadcast to at least one dim");
  if (c.attrs().getBool("keepdim", false))
    d->back() = 1;
  else
    d->pop_back();
  return tensorType(a->dtype(), *d);
}

KC_REGISTER_OP(lgamma_, "torch.lgamma")
    .describe("log |Γ(x)|")
    .input("input")
    .flags(OpFlags::Pure | OpFlags::Elementwise)
    .typeRule(sameAsInput);
KC_REGISTER_OP(cross_, "torch.cross")
    .describe("cross product of 3-vectors along dim")
    .input("input")
    .input("other")
    .attr("dim", AttrValue())
    .flags(OpFlags::Pure)
    .typeRule(cross);
KC_REGISTER_OP(pairwise_distance_, "F.pairwise_distance")
    .describe("p-norm of x1 - x2 + eps over the last dim")
    .input("x1")
    .input("x2")
    .attr("p", AttrValue::real(2.0))
    .attr("eps", AttrValue::real(1e-6))
    .attr("keepdim", AttrValue::boolean(false))
    .flags(OpFlags::Pure)
    .typeRule(pairwiseDistance);

} // namespace
