//===- AttrOperands.cpp - Attributes given as operands --------------------===//
#include "kc/IR/AttrOperands.h"
#include "kc/IR/Diagnostic.h"
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/IR/Rpn.h"
#include "kc/IR/ScalarEval.h"
#include "kc/IR/TypeInference.h"
#include "kc/Support/Quote.h"

#include <cstring>

namespace kc {

bool isAttrOperand(const CallNode &c, size_t i) {
  const ArgKey &k = c.keys()[i];
  const OpDef *op = c.opDef();
  if (k.role != ArgRole::Named || !op || op->isOpaque() || !op->findAttr(k.name))
    return false;
  return !llvm::is_contained(op->inputs(), k.name);
}

bool hasAttrOperands(const CallNode &c) {
  for (size_t i = 0; i < c.numArgs(); ++i)
    if (isAttrOperand(c, i))
      return true;
  return false;
}

namespace {

/// The most elements a constant tensor given as an attribute may have: an
/// attribute is a shape, a size or an index, never bulk data.
constexpr size_t kMaxListElements = 64;

const TensorTypeNode *staticTensorType(const Type &t) {
  auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(t.get());
  return tt && tt->isStatic() ? tt : nullptr;
}

std::optional<AttrValue> constantValue(const ConstantNode &k) {
  if (k.isScalar())
    return k.scalar();
  const TensorTypeNode *tt = staticTensorType(k.type());
  if (!tt || !k.hasData() || tt->rank() > 1)
    return std::nullopt;
  size_t n = size_t(tt->numElements().value_or(0));
  llvm::ArrayRef<uint8_t> bytes = k.data()->bytes();
  if (n > kMaxListElements || bytes.size() != n * dtypeSize(tt->dtype()))
    return std::nullopt;
  std::vector<int64_t> values(n);
  for (size_t i = 0; i < n; ++i) {
    if (tt->dtype() == DType::I64) {
      std::memcpy(&values[i], bytes.data() + 8 * i, 8);
    } else if (tt->dtype() == DType::I32) {
      int32_t v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      values[i] = v;
    } else {
      return std::nullopt;
    }
  }
  if (tt->rank() == 0)
    return AttrValue::integer(values[0]);
  return AttrValue::intList(std::move(values));
}

/// `size(x, d)` or `size(x)` of an operand whose type is `t`.
std::optional<AttrValue> sizeValue(const TensorTypeNode &t, llvm::ArrayRef<AttrValue> args) {
  if (args.empty())
    return AttrValue::intList(std::vector<int64_t>(t.dims().begin(), t.dims().end()));
  if (args.size() != 1 || !args[0].isInt())
    return std::nullopt;
  int64_t d = args[0].getInt(), rank = int64_t(t.rank());
  if (d < -rank || d >= rank)
    return std::nullopt;
  return AttrValue::integer(t.dims()[d < 0 ? d + rank : d]);
}

/// `[a, b, ...]` of scalars: a list of ints, or of floats if any is one.
std::optional<AttrValue> listValue(llvm::ArrayRef<AttrValue> args) {
  std::vector<int64_t> ints;
  std::vector<double> floats;
  bool anyFloat = false;
  for (const AttrValue &a : args) {
    if (!a.isNumber() && !a.isBool())
      return std::nullopt;
    anyFloat |= a.isFloat();
    ints.push_back(a.isBool() ? int64_t(a.getBool()) : a.isInt() ? a.getInt() : 0);
    floats.push_back(a.isBool() ? double(a.getBool()) : a.getNumber());
  }
  return anyFloat ? AttrValue::floatList(std::move(floats)) : AttrValue::intList(std::move(ints));
}

/// The value of a call of an expression function: its program (the AST or
/// its lowered `rpn` form) run on values, its parameters bound to the
/// call's operands, which only `size` may read.
std::optional<AttrValue> expressionValue(const CallNode &c, const FunctionNode &f) {
  if (f.params().size() != c.numArgs())
    return std::nullopt;
  auto program = lowerToRpn(f);
  if (!program) {
    llvm::consumeError(program.takeError());
    return std::nullopt;
  }
  struct Value {
    const TensorTypeNode *tensor = nullptr; ///< an operand, else `v`
    AttrValue v;
  };
  std::vector<Value> stack, slots;
  for (const RpnInstr &in : program->code) {
    if (replaySlot(in, stack, slots))
      continue;
    if (in.kind == RpnInstr::Kind::Arg) {
      if (in.arg >= c.numArgs())
        return std::nullopt;
      const TensorTypeNode *t = staticTensorType(c.arg(in.arg)->type());
      if (!t)
        return std::nullopt;
      stack.push_back({t, AttrValue()});
      continue;
    }
    if (in.kind == RpnInstr::Kind::Literal) {
      stack.push_back({nullptr, in.literal});
      continue;
    }
    if (!in.op || in.numOperands > stack.size())
      return std::nullopt;
    std::vector<Value> operands(stack.end() - in.numOperands, stack.end());
    stack.resize(stack.size() - in.numOperands);
    std::vector<AttrValue> args;
    size_t first = in.op->name() == "size" ? 1 : 0;
    if (first && (operands.empty() || !operands[0].tensor))
      return std::nullopt;
    for (size_t i = first; i < operands.size(); ++i) {
      if (operands[i].tensor)
        return std::nullopt; // a tensor's values are not known
      args.push_back(operands[i].v);
    }
    std::optional<AttrValue> v;
    if (first)
      v = sizeValue(*operands[0].tensor, args);
    else if (in.op->name() == "list")
      v = listValue(args);
    else
      v = evalScalarOp(in.op->name(), args);
    if (!v)
      return std::nullopt;
    stack.push_back({nullptr, *v});
  }
  if (stack.size() != 1 || stack[0].tensor)
    return std::nullopt;
  return stack[0].v;
}

} // namespace

std::optional<AttrValue> staticValue(const Expr &e, const Module &m) {
  if (auto *k = llvm::dyn_cast<ConstantNode>(e.get()))
    return constantValue(*k);
  if (auto *c = llvm::dyn_cast<CallNode>(e.get()))
    if (const FunctionNode *f = m.callee(*c))
      if (f->isPrimitive() && f->body())
        return expressionValue(*c, *f);
  return std::nullopt;
}

namespace {

/// `c` with its attribute operands made attributes, their values read from
/// `typed` (`c`, or the typed call `c` was rewritten from: its operands may
/// carry no types yet); null when one is not known, naming it in `unknown`.
Call bindFrom(const CallNode &typed, const CallNode &c, const Module &m, std::string *unknown) {
  std::vector<Expr> args;
  std::vector<ArgKey> keys;
  Attrs attrs = c.attrs();
  for (size_t i = 0; i < typed.numArgs(); ++i) {
    if (!isAttrOperand(typed, i)) {
      args.push_back(c.arg(i));
      keys.push_back(c.keys()[i]);
      continue;
    }
    std::optional<AttrValue> v = staticValue(typed.arg(i), m);
    if (!v) {
      if (unknown)
        *unknown = typed.keys()[i].name;
      return Call();
    }
    attrs.set(typed.keys()[i].name, *v);
  }
  Call bound = call(c.callee(), args, std::move(attrs), keys, c.name());
  bound->setLoc(c.loc());
  return bound;
}

} // namespace

Call bindAttrOperands(const CallNode &c, const Module &m) { return bindFrom(c, c, m, nullptr); }

bool hasAttrOperands(const Module &m) {
  bool found = false;
  for (const Function &f : m.functions())
    PostOrderVisit(f->body(), [&](const Expr &e) {
      if (auto *c = llvm::dyn_cast<CallNode>(e.get()))
        found = found || hasAttrOperands(*c);
    });
  return found;
}

namespace {

/// Replaces calls with attribute operands by their bound form. The values
/// are read from the original (typed) call: its rewritten operands carry no
/// types yet.
class Binder final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  explicit Binder(const Module &m) : m_(m) {}
  llvm::Error err = llvm::Error::success();

  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    if (err || !hasAttrOperands(*pre))
      return post;
    std::string unknown;
    Call bound = bindFrom(*pre, *llvm::cast<CallNode>(post.get()), m_, &unknown);
    if (!bound)
      err = moduleError(m_, pre->loc(),
                        describeCall(*pre) + ": attribute " + quoteInput(unknown) +
                            " is computed from tensor values, not from shapes; kc needs its "
                            "value when the model is compiled");
    return bound ? Expr(bound) : post;
  }

private:
  const Module &m_;
};

} // namespace

llvm::Error bindAttrOperands(Module &m) {
  bool changed = false;
  for (const Function &f : m.functions()) {
    Binder b(m);
    Expr body = b.Mutate(f->body());
    if (b.err)
      return std::move(b.err);
    llvm::consumeError(std::move(b.err));
    if (body.get() != f->body().get()) {
      m.add(withBody(f, f->params(), body));
      changed = true;
    }
  }
  return changed ? inferTypes(m) : llvm::Error::success();
}

} // namespace kc
