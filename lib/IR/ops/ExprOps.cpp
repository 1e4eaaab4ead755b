//===- ExprOps.cpp - The functions of pnnx.Expression ---------------------===//
//
// The primitive ops that expression function bodies are made of, named as in
// PNNX (`add`, `floor_divide`, `size`, ...), plus `list` for `[...]`. Their
// type rule is PyTorch's: NumPy broadcasting, and type promotion in which a
// scalar literal does not widen a tensor of the same kind (f32 tensor * 2.5
// stays f32) but an int tensor meeting a float becomes f32.
//
//===----------------------------------------------------------------------===//
#include "TypeRuleUtils.h"

#include "llvm/ADT/StringSwitch.h"

using namespace kc;
using namespace kc::typerules;

namespace {

int kindRank(DType t) { return t == DType::Bool ? 0 : isFloating(t) ? 2 : 1; }

bool isLiteral(const ExprNode *e) {
  auto *k = llvm::dyn_cast<ConstantNode>(e);
  return k && k->isScalar();
}

/// Ops whose result is floating even for integer operands.
bool alwaysFloat(llvm::StringRef op) {
  return llvm::StringSwitch<bool>(op)
      .Cases("div", "pow", "atan2", "logaddexp", "sqrt", "rsqrt", "reciprocal", true)
      .Cases("exp", "expm1", "log", "log10", "log1p", "erf", true)
      .Cases("sin", "cos", "tan", "asin", "acos", "atan", true)
      .Cases("sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "torch.float", true)
      .Default(false);
}

llvm::Expected<Type> elementwiseRule(const CallNode &c) {
  llvm::StringRef op = c.calleeName();
  std::vector<int64_t> dims;
  DType strong = DType::Unknown, weak = DType::Unknown;
  for (const Expr &a : c.args()) {
    auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(a->type().get());
    if (!tt)
      return Type();
    auto b = broadcast(dims, tt->dims());
    if (!b)
      return fail(c, "operands " + shown(c.arg(0)->type()) + " and " +
                         shown(a->type()) + " do not broadcast");
    dims = *b;
    DType &slot = isLiteral(a.get()) ? weak : strong;
    if (slot == DType::Unknown || kindRank(tt->dtype()) > kindRank(slot))
      slot = tt->dtype();
  }
  DType dt = strong != DType::Unknown ? strong : weak;
  if (strong != DType::Unknown && weak != DType::Unknown && kindRank(weak) > kindRank(strong))
    dt = isFloating(weak) ? DType::F32 : DType::I64;
  if (alwaysFloat(op) && !isFloating(dt))
    dt = DType::F32;
  if (op == "int")
    dt = DType::I64;
  if (auto cast = parseTorchDType(op))
    dt = *cast;
  return tensorType(dt, dims);
}

llvm::Expected<Type> sizeRule(const CallNode &c) {
  auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(c.arg(0)->type().get());
  if (c.numArgs() == 1)
    return tt ? tensorType(DType::I64, {int64_t(tt->rank())}) : Type();
  return tensorType(DType::I64, {});
}

llvm::Expected<Type> listRule(const CallNode &c) {
  DType dt = DType::I64;
  for (const Expr &a : c.args()) {
    auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(a->type().get());
    if (tt && isFloating(tt->dtype()))
      dt = DType::F32;
  }
  return tensorType(dt, {int64_t(c.numArgs())});
}

OpFlags exprFlags(bool commutative = false) {
  OpFlags f = OpFlags::ExprOp | OpFlags::Pure | OpFlags::Elementwise;
  return commutative ? f | OpFlags::Commutative : f;
}

#define KC_BINARY(ID, NAME, COMM, DOC)                                                             \
  KC_REGISTER_OP(ID, NAME).describe(DOC).arity(2).flags(exprFlags(COMM)).typeRule(elementwiseRule)
#define KC_UNARY(ID, NAME, DOC)                                                                    \
  KC_REGISTER_OP(ID, NAME).describe(DOC).arity(1).flags(exprFlags()).typeRule(elementwiseRule)

KC_BINARY(add, "add", true, "a + b");
KC_BINARY(sub, "sub", false, "a - b");
KC_BINARY(mul, "mul", true, "a * b");
KC_BINARY(div, "div", false, "a / b (true division)");
KC_BINARY(floor_divide, "floor_divide", false, "a // b, rounding toward -inf");
KC_BINARY(remainder, "remainder", false, "a % b with the sign of b (Python)");
KC_BINARY(fmod, "fmod", false, "C fmod: the sign of a");
KC_BINARY(pow, "pow", false, "a ** b");
KC_BINARY(atan2, "atan2", false, "atan2(a, b)");
KC_BINARY(max, "max", true, "elementwise maximum");
KC_BINARY(maximum, "maximum", true, "elementwise maximum");
KC_BINARY(min, "min", true, "elementwise minimum");
KC_BINARY(minimum, "minimum", true, "elementwise minimum");
KC_BINARY(logaddexp, "logaddexp", true, "log(exp(a) + exp(b))");
KC_BINARY(and_, "and", true, "bitwise and");
KC_BINARY(or_, "or", true, "bitwise or");
KC_BINARY(xor_, "xor", true, "bitwise xor");
KC_BINARY(lshift, "lshift", false, "a << b");
KC_BINARY(rshift, "rshift", false, "a >> b");
KC_UNARY(neg, "neg", "-x");
KC_UNARY(abs, "abs", "|x|");
KC_UNARY(sign, "sign", "sign of x");
KC_UNARY(square, "square", "x * x");
KC_UNARY(sqrt, "sqrt", "square root");
KC_UNARY(rsqrt, "rsqrt", "1 / sqrt(x)");
KC_UNARY(reciprocal, "reciprocal", "1 / x");
KC_UNARY(exp, "exp", "e ** x");
KC_UNARY(expm1, "expm1", "e ** x - 1");
KC_UNARY(log, "log", "natural logarithm");
KC_UNARY(log10, "log10", "base-10 logarithm");
KC_UNARY(log1p, "log1p", "log(1 + x)");
KC_UNARY(erf, "erf", "error function");
KC_UNARY(sin, "sin", "sine");
KC_UNARY(cos, "cos", "cosine");
KC_UNARY(tan, "tan", "tangent");
KC_UNARY(asin, "asin", "arc sine");
KC_UNARY(acos, "acos", "arc cosine");
KC_UNARY(atan, "atan", "arc tangent");
KC_UNARY(sinh, "sinh", "hyperbolic sine");
KC_UNARY(cosh, "cosh", "hyperbolic cosine");
KC_UNARY(tanh, "tanh", "hyperbolic tangent");
KC_UNARY(asinh, "asinh", "inverse hyperbolic sine");
KC_UNARY(acosh, "acosh", "inverse hyperbolic cosine");
KC_UNARY(atanh, "atanh", "inverse hyperbolic tangent");
KC_UNARY(ceil, "ceil", "round up");
KC_UNARY(floor, "floor", "round down");
KC_UNARY(trunc, "trunc", "round toward zero");
KC_UNARY(round, "round", "round half to even");
KC_UNARY(int_, "int", "Python int(): truncation");
// Casts, one per name parseTorchDType knows (pnnx writes them as written).
KC_UNARY(to_float, "torch.float", "cast to float32");
KC_UNARY(to_float32, "torch.float32", "cast to float32");
KC_UNARY(to_double, "torch.double", "cast to float64");
KC_UNARY(to_float64, "torch.float64", "cast to float64");
KC_UNARY(to_half, "torch.half", "cast to float16");
KC_UNARY(to_float16, "torch.float16", "cast to float16");
KC_UNARY(to_bfloat16, "torch.bfloat16", "cast to bfloat16");
KC_UNARY(to_int, "torch.int", "cast to int32");
KC_UNARY(to_int32, "torch.int32", "cast to int32");
KC_UNARY(to_long, "torch.long", "cast to int64");
KC_UNARY(to_int64, "torch.int64", "cast to int64");
KC_UNARY(to_short, "torch.short", "cast to int16");
KC_UNARY(to_int16, "torch.int16", "cast to int16");
KC_UNARY(to_int8, "torch.int8", "cast to int8");
KC_UNARY(to_uint8, "torch.uint8", "cast to uint8");
KC_UNARY(to_bool, "torch.bool", "cast to bool");
KC_UNARY(to_complex32, "torch.complex32", "cast to complex32");
KC_UNARY(to_complex64, "torch.complex64", "cast to complex64");
KC_UNARY(to_complex128, "torch.complex128", "cast to complex128");

KC_REGISTER_OP(size, "size")
    .describe("size(x, d): dim d of x; size(x): the shape")
    .flags(OpFlags::ExprOp | OpFlags::Pure)
    .typeRule(sizeRule);
KC_REGISTER_OP(list, "list")
    .describe("[a, b, ...]: a Python list, e.g. a shape")
    .flags(OpFlags::ExprOp | OpFlags::Pure | OpFlags::Variadic)
    .typeRule(listRule);

} // namespace
