//===- ReductionOps.cpp - Reductions with indices, statistics and scans ---===//
//
// torch.max / torch.min (over all elements, or along a dim with values and
// i64 indices), argmax / argmin, topk, logsumexp, std, var, norm, and the
// cumulative sum and product.
//
//===----------------------------------------------------------------------===//
#include "TypeRuleUtils.h"

using namespace kc;
using namespace kc::typerules;

namespace {

/// The dims left by reducing `dims` (all of them when absent or empty).
llvm::Expected<std::vector<int64_t>> reducedDims(const CallNode &c, const TensorTypeNode *in,
                                                 bool allWhenAbsent = true) {
  const AttrValue *dv = c.attrs().find("dim");
  std::vector<int64_t> dims = dv && !dv->isNone() ? dv->asIntVector() : std::vector<int64_t>{};
  bool keep = c.attrs().getBool("keepdim", false);
  std::vector<bool> red(in->rank(), dims.empty() && allWhenAbsent);
  for (int64_t x : dims) {
    int64_t k = normDim(x, in->rank());
    if (k < 0)
      return fail(c, "dim " + llvm::Twine(x) + " out of range for rank " + llvm::Twine(in->rank()));
    red[k] = true;
  }
  std::vector<int64_t> d;
  for (size_t k = 0; k < in->rank(); ++k)
    if (!red[k])
      d.push_back(in->dims()[k]);
    else if (keep)
      d.push_back(1);
  return d;
}

/// torch.max, torch.min, argmax and argmin have no value over nothing:
/// PyTorch refuses to reduce an empty dim, or an empty input whole.
llvm::Error refuseEmptyExtreme(const CallNode &c, const TensorTypeNode *in) {
  const AttrValue *dv = c.attrs().find("dim");
  if (!dv || dv->isNone()) {
    if (in->numElements() == std::optional<int64_t>(0))
      return fail(c, "cannot reduce " + shown(c.dataArg(0)->type()) + ", which is empty");
    return llvm::Error::success();
  }
  for (int64_t x : dv->asIntVector()) {
    int64_t k = normDim(x, std::max<int64_t>(in->rank(), 1));
    if (k >= 0 && size_t(k) < in->rank() && in->dims()[k] == 0)
      return fail(c, "cannot reduce dim " + llvm::Twine(k) + " of " + shown(c.dataArg(0)->type()) +
                         ", which is empty");
  }
  return llvm::Error::success();
}

/// Whether the model declares two results (values and indices).
bool declaresPair(const CallNode &c) {
  auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(c.type().get());
  return tt && tt->size() == 2;
}

llvm::Expected<Type> reduce(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  auto d = reducedDims(c, in);
  if (!d)
    return d.takeError();
  return tensorType(in->dtype(), *d);
}

/// torch.max / torch.min: with a dim, values and (when the model uses
/// them) i64 indices; without, the extreme of all elements.
llvm::Expected<Type> maxMin(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  if (auto e = refuseEmptyExtreme(c, in))
    return std::move(e);
  const AttrValue *dv = c.attrs().find("dim");
  if (!dv || dv->isNone())
    return tensorType(in->dtype(), {});
  if (dv->asIntVector().size() != 1)
    return fail(c, "dim must be one dim");
  auto d = reducedDims(c, in);
  if (!d)
    return d.takeError();
  Type values = tensorType(in->dtype(), *d);
  if (declaresPair(c))
    return tupleType({values, tensorType(DType::I64, *d)});
  return values;
}

llvm::Expected<Type> argReduce(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  if (auto e = refuseEmptyExtreme(c, in))
    return std::move(e);
  const AttrValue *dv = c.attrs().find("dim");
  if (!dv || dv->isNone())
    return tensorType(DType::I64, {});
  auto d = reducedDims(c, in);
  if (!d)
    return d.takeError();
  return tensorType(DType::I64, *d);
}

llvm::Expected<Type> topk(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  int64_t k = normDim(c.attrs().getInt("dim", -1), std::max<size_t>(in->rank(), 1));
  if (k < 0)
    return fail(c, "dim out of range");
  int64_t n = c.attrs().getInt("k", 1);
  std::vector<int64_t> d(in->dims().begin(), in->dims().end());
  if (!d.empty()) {
    if (d[k] >= 0 && (n < 0 || n > d[k]))
      return fail(c, "k=" + llvm::Twine(n) + " is out of range for a dim of " + llvm::Twine(d[k]));
    d[k] = n;
  }
  return tupleType({tensorType(in->dtype(), d), tensorType(DType::I64, d)});
}

/// torch.sort: the values in order along dim and their i64 indices.
llvm::Expected<Type> sort(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  if (normDim(c.attrs().getInt("dim", -1), std::max<size_t>(in->rank(), 1)) < 0)
    return fail(c, "dim out of range");
  return tupleType({tensorType(in->dtype(), in->dims()), tensorType(DType::I64, in->dims())});
}

llvm::Expected<Type> scan(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  if (normDim(c.attrs().getInt("dim", 0), std::max<size_t>(in->rank(), 1)) < 0)
    return fail(c, "dim out of range");
  return tensorType(in->dtype(), in->dims());
}

const OpFlags kPure = OpFlags::Pure;

KC_REGISTER_OP(max_, "torch.max")
    .describe("maximum of all elements, or (values, indices) along dim")
    .input("input")
    .attr("dim", AttrValue())
    .attr("keepdim", AttrValue::boolean(false))
    .outputs(-1)
    .flags(kPure)
    .typeRule(maxMin);
KC_REGISTER_OP(min_, "torch.min")
    .describe("minimum of all elements, or (values, indices) along dim")
    .input("input")
    .attr("dim", AttrValue())
    .attr("keepdim", AttrValue::boolean(false))
    .outputs(-1)
    .flags(kPure)
    .typeRule(maxMin);
KC_REGISTER_OP(argmax_, "torch.argmax")
    .describe("index of the maximum along dim (of all elements without dim)")
    .input("input")
    .attr("dim", AttrValue())
    .attr("keepdim", AttrValue::boolean(false))
    .flags(kPure)
    .typeRule(argReduce);
KC_REGISTER_OP(argmin_, "torch.argmin")
    .describe("index of the minimum along dim (of all elements without dim)")
    .input("input")
    .attr("dim", AttrValue())
    .attr("keepdim", AttrValue::boolean(false))
    .flags(kPure)
    .typeRule(argReduce);
KC_REGISTER_OP(topk_, "torch.topk")
    .describe("the k largest (or smallest) along dim and their indices")
    .input("input")
    .attr("k", AttrValue::integer(1), true)
    .attr("dim", AttrValue::integer(-1))
    .attr("largest", AttrValue::boolean(true))
    .attr("sorted", AttrValue::boolean(true))
    .outputs(2)
    .flags(kPure)
    .typeRule(topk);
// pnnx writes torch.sort and Tensor.sort as `aten::sort` with its
// arguments as literal operands; the importer makes them attributes.
KC_REGISTER_OP(sort_, "torch.sort")
    .describe("the values sorted along dim (descending: largest first) and their indices")
    .input("input")
    .attr("dim", AttrValue::integer(-1))
    .attr("descending", AttrValue::boolean(false))
    .attr("stable", AttrValue::boolean(false))
    .outputs(2)
    .flags(kPure)
    .typeRule(sort);
KC_REGISTER_OP(logsumexp_, "torch.logsumexp")
    .describe("log Σ exp(x) over dims")
    .input("input")
    .attr("dim", AttrValue(), true)
    .attr("keepdim", AttrValue::boolean(false))
    .flags(kPure)
    .typeRule(reduce);
KC_REGISTER_OP(std_, "torch.std")
    .describe("standard deviation over dims (unbiased: divides by n - 1)")
    .input("input")
    .attr("dim", AttrValue())
    .attr("unbiased", AttrValue::boolean(true))
    .attr("keepdim", AttrValue::boolean(false))
    .flags(kPure)
    .typeRule(reduce);
KC_REGISTER_OP(var_, "torch.var")
    .describe("variance over dims (unbiased: divides by n - 1)")
    .input("input")
    .attr("dim", AttrValue())
    .attr("unbiased", AttrValue::boolean(true))
    .attr("keepdim", AttrValue::boolean(false))
    .flags(kPure)
    .typeRule(reduce);
KC_REGISTER_OP(norm_, "torch.norm")
    .describe("p-norm over dims (p: a number, 'fro' or inf)")
    .input("input")
    .attr("p", AttrValue())
    .attr("dim", AttrValue())
    .attr("keepdim", AttrValue::boolean(false))
    .flags(kPure)
    .typeRule(reduce);
KC_REGISTER_OP(cumsum_, "torch.cumsum")
    .describe("running sum along dim")
    .input("input")
    .attr("dim", AttrValue::integer(0), true)
    .flags(kPure)
    .typeRule(scan);
KC_REGISTER_OP(cumprod_, "torch.cumprod")
    .describe("running product along dim")
    .input("input")
    .attr("dim", AttrValue::integer(0), true)
    .flags(kPure)
    .typeRule(scan);

} // namespace
