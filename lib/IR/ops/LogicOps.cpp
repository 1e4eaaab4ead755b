//===- LogicOps.cpp - Comparisons, logical and bitwise ops, where ---------===//
//
// Elementwise ops over two operands broadcast as NumPy does; `other` may
// be a scalar attribute instead of an operand (torch.ge(x, 0.3)).
// Comparisons and logical ops give bool tensors; bitwise ops keep their
// (integer or bool) type; torch.where and Tensor.masked_fill select.
//
//===----------------------------------------------------------------------===//
#include "TypeRuleUtils.h"

using namespace kc;
using namespace kc::typerules;

namespace {

/// The broadcast dims of the data operands, or an error.
llvm::Expected<std::vector<int64_t>> broadcastAll(const CallNode &c, bool &known) {
  std::vector<int64_t> d;
  known = true;
  for (size_t i = 0; i < c.numDataArgs(); ++i) {
    const TensorTypeNode *t = dataType(c, i);
    if (!t) {
      known = false;
      return d;
    }
    auto b = broadcast(d, t->dims());
    if (!b)
      return fail(c, "operands do not broadcast");
    d = *b;
  }
  return d;
}

llvm::Expected<Type> toBool(const CallNode &c) {
  bool known;
  auto d = broadcastAll(c, known);
  if (!d)
    return d.takeError();
  return known ? tensorType(DType::Bool, *d) : Type();
}

llvm::Expected<Type> keepType(const CallNode &c) {
  bool known;
  auto d = broadcastAll(c, known);
  if (!d)
    return d.takeError();
  const TensorTypeNode *first = dataType(c, 0);
  return known && first ? tensorType(first->dtype(), *d) : Type();
}

/// Tensor.masked_fill: the input's type; a scalar value it cannot hold is
/// refused, as in PyTorch.
llvm::Expected<Type> maskedFill(const CallNode &c) {
  if (const TensorTypeNode *in = dataType(c, 0))
    if (auto e = checkScalarFits(c, "value", in->dtype()))
      return std::move(e);
  return keepType(c);
}

/// torch.where: the type of the selected operands (the first tensor one).
llvm::Expected<Type> where(const CallNode &c) {
  bool known;
  auto d = broadcastAll(c, known);
  if (!d)
    return d.takeError();
  if (!known)
    return Type();
  for (size_t i = 0; i < c.numArgs(); ++i)
    if (c.keys()[i].role == ArgRole::Named && c.keys()[i].name != "condition")
      if (auto *t = llvm::dyn_cast_or_null<TensorTypeNode>(c.arg(i)->type().get()))
        return tensorType(t->dtype(), *d);
  return tensorType(DType::F32, *d);
}

const OpFlags kEw = OpFlags::Pure | OpFlags::Elementwise;

#define KC_CMP(ID, NAME, DOC)                                                                      \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe(DOC)                                                                               \
      .input("input")                                                                              \
      .input("other")                                                                              \
      .attr("other", AttrValue())                                                                  \
      .flags(kEw | OpFlags::Variadic)                                                              \
      .typeRule(toBool)
KC_CMP(eq_, "torch.eq", "input == other");
KC_CMP(ne_, "torch.ne", "input != other");
KC_CMP(gt_, "torch.gt", "input > other");
KC_CMP(ge_, "torch.ge", "input >= other");
KC_CMP(lt_, "torch.lt", "input < other");
KC_CMP(le_, "torch.le", "input <= other");
KC_CMP(logical_and_, "torch.logical_and", "both nonzero");
KC_CMP(logical_or_, "torch.logical_or", "either nonzero");
KC_CMP(logical_xor_, "torch.logical_xor", "exactly one nonzero");
KC_REGISTER_OP(logical_not_, "torch.logical_not")
    .describe("zero")
    .input("input")
    .flags(kEw)
    .typeRule(toBool);

#define KC_BITWISE(ID, NAME, DOC)                                                                  \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe(DOC)                                                                               \
      .input("input")                                                                              \
      .input("other")                                                                              \
      .attr("other", AttrValue())                                                                  \
      .flags(kEw | OpFlags::Variadic)                                                              \
      .typeRule(keepType)
KC_BITWISE(bitwise_and_, "torch.bitwise_and", "input & other");
KC_BITWISE(bitwise_or_, "torch.bitwise_or", "input | other");
KC_BITWISE(bitwise_xor_, "torch.bitwise_xor", "input ^ other");
KC_BITWISE(bitwise_left_shift_, "torch.bitwise_left_shift", "input << other");
KC_BITWISE(bitwise_right_shift_, "torch.bitwise_right_shift", "input >> other (arithmetic)");
KC_REGISTER_OP(bitwise_not_, "torch.bitwise_not")
    .describe("~input")
    .input("input")
    .flags(kEw)
    .typeRule(keepType);

KC_REGISTER_OP(where_, "torch.where")
    .describe("input where condition, else other")
    .input("condition")
    .input("input")
    .input("other")
    .attr("input", AttrValue())
    .attr("other", AttrValue())
    .flags(kEw | OpFlags::Variadic)
    .typeRule(where);
KC_REGISTER_OP(masked_fill_, "Tensor.masked_fill")
    .describe("value where mask, else input")
    .input("input")
    .input("mask")
    .attr("value", AttrValue(), true)
    .flags(kEw)
    .typeRule(maskedFill);

} // namespace
