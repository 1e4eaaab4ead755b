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
#include "kc/IR/ExprFunctions.h"

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
  const ExprFunction *f = findExprFunction(op);
  return f && f->is(exprfn::Floating);
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

// Every function of ExprFunctions.def, with its arity, flags and doc.
#define KC_EXPR_OP(Id, Name, Arity, Flags, Doc)                                                    \
  KC_REGISTER_OP(expr##Id, Name)                                                                   \
      .describe(Doc)                                                                               \
      .arity(Arity)                                                                                \
      .flags(exprFlags(((Flags)&exprfn::Commutative) != 0))                                        \
      .typeRule(elementwiseRule);
#define KC_EXPR_FN(Id, Name, Arity, Flags, Doc, Value) KC_EXPR_OP(Id, Name, Arity, Flags, Doc)
#define KC_EXPR_ALIAS(Id, Name, Arity, Flags, Doc, Of) KC_EXPR_OP(Id, Name, Arity, Flags, Doc)
#define KC_EXPR_OTHER(Id, Name, Arity, Flags, Doc) KC_EXPR_OP(Id, Name, Arity, Flags, Doc)
#include "kc/IR/ExprFunctions.def"
#undef KC_EXPR_OP

KC_REGISTER_OP(size, "size")
    .describe("size(x, d): dim d of x; size(x): the shape")
    .flags(OpFlags::ExprOp | OpFlags::Pure)
    .typeRule(sizeRule);
KC_REGISTER_OP(list, "list")
    .describe("[a, b, ...]: a Python list, e.g. a shape")
    .flags(OpFlags::ExprOp | OpFlags::Pure | OpFlags::Variadic)
    .typeRule(listRule);

} // namespace
