//===- CreationOps.cpp - Tensors made from a value ------------------------===//
#include "TypeRuleUtils.h"
#include "kc/Support/DType.h"
#include "kc/Support/Quote.h"

#include <cmath>

using namespace kc;
using namespace kc::typerules;

namespace {

/// The input's type, the value refused where PyTorch refuses it.
llvm::Expected<Type> fill(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  if (auto e = checkScalarFits(c, "value", in->dtype()))
    return e;
  return c.dataArg(0)->type();
}

/// The `dtype` attribute (`torch.float`, ...), or `dflt` when it is None.
llvm::Expected<DType> dtypeAttr(const CallNode &c, DType dflt) {
  std::string name = c.attrs().getString("dtype", "");
  if (name.empty())
    return dflt;
  if (std::optional<DType> dt = parseTorchDType(name))
    return *dt;
  return fail(c, "dtype " + quoteInput(name) + " is not a torch element type");
}

/// A tensor of `dims` of the `dtype` attribute, else of `dflt`; its
/// `fill_value` (if any) refused where PyTorch refuses it.
llvm::Expected<Type> filledType(const CallNode &c, DType dflt, llvm::ArrayRef<int64_t> dims) {
  auto dt = dtypeAttr(c, dflt);
  if (!dt)
    return dt.takeError();
  if (c.attrs().find("fill_value"))
    if (auto e = checkScalarFits(c, "fill_value", *dt))
      return e;
  return tensorType(*dt, dims);
}

/// torch.*_like: the input's shape, of `dtype` when given (`torch.float`),
/// else of the input's type.
llvm::Expected<Type> like(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  return filledType(c, in->dtype(), in->dims());
}

/// The element type PyTorch gives torch.full without a dtype: that of the
/// fill value's Python type.
DType fillValueDType(const CallNode &c) {
  const AttrValue *v = c.attrs().find("fill_value");
  if (v && v->isBool())
    return DType::Bool;
  return v && v->isInt() ? DType::I64 : DType::F32;
}

/// torch.zeros / ones / empty / full and Tensor.new_*: a tensor of the
/// shape `size` (written as an operand when it depends on the input's
/// shape), of `dtype`, else of the input's type (new_*), the fill value's
/// (full) or f32.
llvm::Expected<Type> sized(const CallNode &c) {
  const AttrValue *size = c.attrs().find("size");
  if (!size || !(size->isInt() || size->isIntList()))
    return fail(c, "needs the integer list 'size'");
  std::vector<int64_t> dims = size->asIntVector();
  CheckedInt n = 1;
  for (int64_t d : dims) {
    if (d < 0)
      return fail(c, "size " + attrToString(*size) + " has a negative dim");
    n = n * d;
  }
  if (n.overflowed())
    return fail(c, "size " + attrToString(*size) + " has more elements than int64 can count");
  DType dflt = DType::F32;
  if (c.calleeName().startswith("Tensor.new_")) {
    const TensorTypeNode *in = dataType(c, 0);
    if (!in)
      return Type();
    dflt = in->dtype();
  } else if (c.attrs().find("fill_value")) {
    dflt = fillValueDType(c);
  }
  return filledType(c, dflt, dims);
}

/// torch.arange: ceil((end - start) / step) values, i64 when start, end and
/// step are all integers, else f32, unless `dtype` says otherwise.
llvm::Expected<Type> arange(const CallNode &c) {
  const AttrValue *end = c.attrs().find("end");
  if (!end || !end->isNumber())
    return fail(c, "needs the number 'end'");
  bool allInt = end->isInt();
  for (const char *key : {"start", "step"})
    if (const AttrValue *v = c.attrs().find(key)) {
      if (!v->isNumber())
        return fail(c, llvm::Twine(key) + " must be a number");
      allInt = allInt && v->isInt();
    }
  double start = c.attrs().getFloat("start", 0), step = c.attrs().getFloat("step", 1);
  if (!(step != 0) || !std::isfinite(start) || !std::isfinite(end->getNumber()))
    return fail(c, "needs finite bounds and a non-zero step");
  double count = std::ceil((end->getNumber() - start) / step);
  if (count < 0)
    return fail(c, "the bounds and the step's sign disagree");
  if (!(count < 9.0e18))
    return fail(c, "has more elements than int64 can count");
  auto dt = dtypeAttr(c, allInt ? DType::I64 : DType::F32);
  if (!dt)
    return dt.takeError();
  return tensorType(*dt, {int64_t(count)});
}

// pnnx writes these where the size depends on the input's shape (`?` dims,
// the size an operand); at a static shape it folds them into constants.
#define KC_SIZED_FILL(ID, NAME, DOC)                                                               \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe(DOC)                                                                               \
      .attr("size", AttrValue(), true)                                                             \
      .attr("dtype", AttrValue())                                                                  \
      .flags(OpFlags::Pure)                                                                        \
      .typeRule(sized)
KC_SIZED_FILL(zeros_, "torch.zeros", "zeros of shape size");
KC_SIZED_FILL(ones_, "torch.ones", "ones of shape size");
KC_SIZED_FILL(empty_, "torch.empty", "a tensor of shape size; kc's holds zeros");
KC_SIZED_FILL(full_, "torch.full", "fill_value in shape size").attr("fill_value", AttrValue(), true);
KC_SIZED_FILL(new_zeros_, "Tensor.new_zeros", "zeros of shape size, of the input's dtype unless given")
    .input("input");
KC_SIZED_FILL(new_ones_, "Tensor.new_ones", "ones of shape size, of the input's dtype unless given")
    .input("input");
KC_SIZED_FILL(new_empty_, "Tensor.new_empty",
              "a tensor of shape size, of the input's dtype unless given; kc's holds zeros")
    .input("input");
#undef KC_SIZED_FILL
KC_REGISTER_OP(arange_, "torch.arange")
    .describe("start, start + step, ... below end")
    .attr("start", AttrValue::integer(0))
    .attr("end", AttrValue(), true)
    .attr("step", AttrValue::integer(1))
    .attr("dtype", AttrValue())
    .flags(OpFlags::Pure)
    .typeRule(arange);

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
