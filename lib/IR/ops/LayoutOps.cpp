//===- LayoutOps.cpp - Roll, flip, repeat, tile and other re-layouts ------===//
//
// Ops that move elements without computing: cyclic shifts, reversal,
// repetition, channel shuffle, strided views, slice writes, and the `_as`
// forms that take a shape or dtype from a second operand.
//
//===----------------------------------------------------------------------===//
#include "TypeRuleUtils.h"

using namespace kc;
using namespace kc::typerules;

namespace {

/// Tensor.repeat (sizes) and torch.tile (dims): the input right-aligned
/// against the repeats, each dim multiplied. tile pads short repeats with
/// leading ones; repeat needs at least the input's rank.
llvm::Expected<Type> repeatRule(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  bool tile = c.calleeName() == "torch.tile";
  std::vector<int64_t> reps = c.attrs().getInts(tile ? "dims" : "sizes");
  if (reps.size() < in->rank()) {
    if (!tile)
      return fail(c, "sizes has fewer entries than the input has dims");
    reps.insert(reps.begin(), in->rank() - reps.size(), 1);
  }
  std::vector<int64_t> d(reps.size() - in->rank(), 1);
  d.insert(d.end(), in->dims().begin(), in->dims().end());
  for (size_t i = 0; i < d.size(); ++i) {
    if (reps[i] < 0)
      return fail(c, "negative repeat count " + llvm::Twine(reps[i]));
    if (d[i] < 0)
      continue;
    CheckedInt v = CheckedInt(d[i]) * reps[i];
    if (v.overflowed())
      return fail(c, "the repeated shape has more elements than int64 holds");
    d[i] = v.value();
  }
  return tensorType(in->dtype(), d);
}

llvm::Expected<Type> repeatInterleave(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  const AttrValue *rv = c.attrs().find("repeats");
  if (!rv || !rv->isInt())
    return c.type(); // repeats per element: the shape depends on the values
  const AttrValue *dv = c.attrs().find("dim");
  std::vector<int64_t> d;
  int64_t k;
  if (!dv || dv->isNone()) {
    auto n = in->numElements();
    d = {n ? *n : -1};
    k = 0;
  } else {
    d.assign(in->dims().begin(), in->dims().end());
    k = normDim(dv->getInt(), in->rank());
    if (k < 0)
      return fail(c, "dim out of range");
  }
  if (d[k] >= 0) {
    CheckedInt v = CheckedInt(d[k]) * rv->getInt();
    if (v.overflowed() || rv->getInt() < 0)
      return fail(c, "repeats gives a size outside int64");
    d[k] = v.value();
  }
  return tensorType(in->dtype(), d);
}

llvm::Expected<Type> asStrided(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  return tensorType(in->dtype(), c.attrs().getInts("size"));
}

llvm::Expected<Type> diag(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  int64_t k = c.attrs().getInt("diagonal", 0);
  if (in->rank() == 1) {
    if (in->dim(0) < 0)
      return tensorType(in->dtype(), {-1, -1});
    CheckedInt n = CheckedInt(in->dim(0)) + (k < 0 ? -k : k);
    if (n.overflowed())
      return fail(c, "diagonal gives a size outside int64");
    return tensorType(in->dtype(), {n.value(), n.value()});
  }
  if (in->rank() != 2)
    return fail(c, "expects a vector or a matrix");
  int64_t r = in->dim(0), cols = in->dim(1);
  if (r < 0 || cols < 0)
    return tensorType(in->dtype(), {-1});
  int64_t n = k >= 0 ? std::min(r, cols - k) : std::min(r + k, cols);
  return tensorType(in->dtype(), {std::max<int64_t>(n, 0)});
}

llvm::Expected<Type> narrow(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  int64_t k = normDim(c.attrs().getInt("dim", 0), in->rank());
  if (k < 0)
    return fail(c, "dim out of range");
  int64_t n = in->dims()[k], start = c.attrs().getInt("start", 0);
  int64_t len = c.attrs().getInt("length", 0);
  if (n >= 0 && (start < -n || start > n || len < 0 || (start < 0 ? start + n : start) + len > n))
    return fail(c, "start " + llvm::Twine(start) + " and length " + llvm::Twine(len) +
                       " leave dim " + llvm::Twine(k) + " of size " + llvm::Twine(n));
  std::vector<int64_t> d(in->dims().begin(), in->dims().end());
  d[k] = len;
  return tensorType(in->dtype(), d);
}

llvm::Expected<Type> t(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  if (in->rank() > 2)
    return fail(c, "expects at most 2 dims");
  std::vector<int64_t> d(in->dims().rbegin(), in->dims().rend());
  return tensorType(in->dtype(), d);
}

llvm::Expected<Type> unflatten(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  int64_t k = normDim(c.attrs().getInt("dim", 0), in->rank());
  if (k < 0)
    return fail(c, "dim out of range");
  std::vector<int64_t> sizes = c.attrs().getInts("sizes");
  int64_t n = in->dims()[k], known = 1, infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1 && infer < 0)
      infer = int64_t(i);
    else if (sizes[i] < 0)
      return fail(c, "bad sizes");
    else
      known *= sizes[i];
  }
  if (infer >= 0)
    sizes[infer] = n >= 0 && known ? n / known : -1;
  else if (n >= 0 && known != n)
    return fail(c, "sizes do not multiply to " + llvm::Twine(n));
  std::vector<int64_t> d(in->dims().begin(), in->dims().begin() + k);
  d.insert(d.end(), sizes.begin(), sizes.end());
  d.insert(d.end(), in->dims().begin() + k + 1, in->dims().end());
  return tensorType(in->dtype(), d);
}

/// reshape_as / expand_as take the other operand's dims, type_as its dtype.
llvm::Expected<Type> asOther(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0), *other = dataType(c, 1);
  if (!in || !other)
    return Type();
  if (c.calleeName() == "Tensor.type_as")
    return tensorType(other->dtype(), in->dims());
  if (c.calleeName() == "Tensor.reshape_as" && in->numElements() && other->numElements() &&
      *in->numElements() != *other->numElements())
    return fail(c, "cannot reshape " + typeToString(c.dataArg(0)->type()) + " as " +
                       typeToString(c.dataArg(1)->type()));
  return tensorType(in->dtype(), other->dims());
}

const OpFlags kPure = OpFlags::Pure;

KC_REGISTER_OP(roll_, "torch.roll")
    .describe("cyclic shift along dims (of the flattened tensor without dims)")
    .input("input")
    .attr("shifts", AttrValue(), true)
    .attr("dims", AttrValue())
    .flags(kPure)
    .typeRule(sameAsInput);
KC_REGISTER_OP(flip_, "torch.flip")
    .describe("reverse the order along dims")
    .input("input")
    .attr("dims", AttrValue(), true)
    .flags(kPure)
    .typeRule(sameAsInput);
KC_REGISTER_OP(repeat_, "Tensor.repeat")
    .describe("repeat along each dim (leading new dims allowed)")
    .input("input")
    .attr("sizes", AttrValue(), true)
    .flags(kPure)
    .typeRule(repeatRule);
KC_REGISTER_OP(tile_, "torch.tile")
    .describe("repeat along each dim (fewer repeats than dims: leading ones)")
    .input("input")
    .attr("dims", AttrValue(), true)
    .flags(kPure)
    .typeRule(repeatRule);
KC_REGISTER_OP(repeat_interleave_, "torch.repeat_interleave")
    .describe("repeat each element along dim (of the flattened tensor without dim)")
    .input("input")
    .attr("repeats", AttrValue(), true)
    .attr("dim", AttrValue())
    .attr("output_size", AttrValue())
    .flags(kPure | OpFlags::Variadic)
    .typeRule(repeatInterleave);
KC_REGISTER_OP(channel_shuffle_, "nn.ChannelShuffle")
    .describe("(N, g·k, ...) read as (N, g, k, ...), written as (N, k, g, ...)")
    .input("input")
    .attr("groups", AttrValue::integer(1), true)
    .flags(kPure)
    .typeRule(sameAsInput);
KC_REGISTER_OP(as_strided_, "torch.as_strided")
    .describe("a strided view of the contiguous input")
    .input("input")
    .attr("size", AttrValue(), true)
    .attr("stride", AttrValue(), true)
    .attr("storage_offset", AttrValue::integer(0))
    .flags(kPure)
    .typeRule(asStrided);
KC_REGISTER_OP(diag_, "torch.diag")
    .describe("vector → diagonal matrix, matrix → its diagonal")
    .input("input")
    .attr("diagonal", AttrValue::integer(0))
    .flags(kPure)
    .typeRule(diag);
KC_REGISTER_OP(slice_scatter_, "torch.slice_scatter")
    .describe("the input with src written over start:end:step of dim")
    .input("input")
    .input("src")
    .attr("dim", AttrValue::integer(0))
    .attr("start", AttrValue())
    .attr("end", AttrValue())
    .attr("step", AttrValue::integer(1))
    .flags(kPure)
    .typeRule(sameAsInput);
// The in-place `x[..., a:b] = y` of a traced model: a copy of self with src
// written over the slice, as torch.slice_scatter.
KC_REGISTER_OP(slice_copy_, "Tensor.slice_copy")
    .describe("self with src written over start:end:step of dim")
    .input("self")
    .input("src")
    .attr("dim", AttrValue::integer(0))
    .attr("start", AttrValue())
    .attr("end", AttrValue())
    .attr("step", AttrValue::integer(1))
    .flags(kPure)
    .typeRule(sameAsInput);
KC_REGISTER_OP(narrow_, "torch.narrow")
    .describe("length elements of dim from start")
    .input("input")
    .attr("dim", AttrValue::integer(0), true)
    .attr("start", AttrValue::integer(0), true)
    .attr("length", AttrValue::integer(0), true)
    .flags(kPure)
    .typeRule(narrow);
KC_REGISTER_OP(t_, "torch.t")
    .describe("transpose of a matrix (vectors and scalars unchanged)")
    .input("input")
    .flags(kPure)
    .typeRule(t);
KC_REGISTER_OP(unflatten_, "Tensor.unflatten")
    .describe("split dim into sizes")
    .input("input")
    .attr("dim", AttrValue::integer(0), true)
    .attr("sizes", AttrValue(), true)
    .flags(kPure)
    .typeRule(unflatten);
KC_REGISTER_OP(reshape_as_, "Tensor.reshape_as")
    .describe("reshape to the shape of other")
    .input("input")
    .input("other")
    .flags(kPure)
    .typeRule(asOther);
KC_REGISTER_OP(expand_as_, "Tensor.expand_as")
    .describe("broadcast to the shape of other")
    .input("input")
    .input("other")
    .flags(kPure)
    .typeRule(asOther);
KC_REGISTER_OP(type_as_, "Tensor.type_as")
    .describe("convert to the dtype of other")
    .input("input")
    .input("other")
    .flags(kPure)
    .typeRule(asOther);

} // namespace
