//===- Rpn.cpp - Reverse-Polish expression programs -----------------------===//
#include "kc/IR/Rpn.h"
#include "kc/IR/Functor.h"
#include "kc/IR/TypeInference.h"
#include "kc/Support/NumberText.h"

#include "llvm/ADT/DenseMap.h"

namespace kc {

static llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

const RpnInstr *RpnProgram::binaryOfParams() const {
  if (code.size() != 3 || code[0].kind != RpnInstr::Kind::Arg ||
      code[1].kind != RpnInstr::Kind::Arg || code[2].kind != RpnInstr::Kind::Apply ||
      code[2].numOperands != 2 || code[0].arg == code[1].arg)
    return nullptr;
  return &code[2];
}

std::optional<ChannelScaleOperands>
matchChannelScale(const RpnProgram &p, llvm::ArrayRef<std::vector<int64_t>> argShapes,
                  llvm::ArrayRef<int64_t> result) {
  const RpnInstr *mul = p.binaryOfParams();
  if (!mul || mul->op->name() != "mul" || result.size() != 4)
    return std::nullopt;
  for (unsigned i : {0u, 1u}) {
    unsigned x = p.code[i].arg, s = p.code[1 - i].arg;
    if (x >= argShapes.size() || s >= argShapes.size())
      return std::nullopt;
    llvm::ArrayRef<int64_t> d = argShapes[s];
    if (result.equals(argShapes[x]) && d.size() == 4 && (d[0] == 1 || d[0] == result[0]) &&
        d[1] == result[1] && d[2] == 1 && d[3] == 1)
      return ChannelScaleOperands{x, s, d[0] != 1};
  }
  return std::nullopt;
}

std::vector<std::string> RpnProgram::toTokens() const {
  std::vector<std::string> t;
  for (const RpnInstr &i : code) {
    switch (i.kind) {
    case RpnInstr::Kind::Arg:
      t.push_back("%" + std::to_string(i.arg));
      break;
    case RpnInstr::Kind::Literal:
      // A string between quotes, unescaped (the token is itself a quoted
      // string of the program); a complex number as `(re+imj)`.
      t.push_back(
          (i.literal.isString() ? "\"" + i.literal.getString() + "\"" : attrToString(i.literal)) +
          ":" + dtypeName(i.literalType).str());
      break;
    case RpnInstr::Kind::Apply:
      t.push_back(i.op->name() + (i.op->arity() < 0 ? "/" + std::to_string(i.numOperands) : ""));
      break;
    case RpnInstr::Kind::Save:
      t.push_back("=$" + std::to_string(i.arg));
      break;
    case RpnInstr::Kind::Load:
      t.push_back("$" + std::to_string(i.arg));
      break;
    }
  }
  return t;
}

bool isLoweredToRpn(const FunctionNode &fn) {
  auto *c = llvm::dyn_cast_or_null<CallNode>(fn.body().get());
  return c && c->opDef() && c->opDef()->name() == kRpnOpName;
}

llvm::DenseMap<const ExprNode *, unsigned> operandUses(const Expr &body) {
  llvm::DenseMap<const ExprNode *, unsigned> uses;
  PostOrderVisit(body, [&](const Expr &e) {
    if (auto *c = llvm::dyn_cast<CallNode>(e.get()))
      for (const Expr &a : c->args())
        ++uses[a.get()];
  });
  return uses;
}

uint64_t rpnLength(const Expr &body, const llvm::DenseMap<const ExprNode *, unsigned> &uses,
                   uint64_t cap) {
  if (!llvm::isa<CallNode>(body.get()))
    return 1;
  uint64_t n = 0;
  PostOrderVisit(body, [&](const Expr &e) {
    auto *c = llvm::dyn_cast<CallNode>(e.get());
    if (!c)
      return;
    uint64_t own = 1; // the op
    if (unsigned u = uses.lookup(c); u > 1)
      own += u; // a save, and a load at each further use
    for (const Expr &a : c->args())
      own += !llvm::isa<CallNode>(a.get()); // a parameter or literal, at each use
    n = std::min(cap, n + own);
  });
  return n;
}

static void track(RpnProgram &p, unsigned &depth, int delta) {
  depth += delta;
  p.maxDepth = std::max(p.maxDepth, depth);
}

namespace {

/// Emits the instructions of one node of an expression function, its
/// operands already on the stack, dispatching on the node's kind: a
/// parameter pushes its argument, a scalar constant its literal, an
/// operator call applies the op (and, used more than once, saves the
/// result). A call computed already loads it instead. The first error is
/// kept in `error` and stops the walk.
class RpnEmitter final : public ExprFunctor<void(const Expr &)> {
public:
  explicit RpnEmitter(const FunctionNode &fn) : fn_(fn), uses_(operandUses(fn.body())) {
    program.numParams = fn.params().size();
    for (unsigned i = 0; i < fn.params().size(); ++i)
      paramIndex_[fn.params()[i].get()] = i;
  }

  /// Whether `c`'s value is in a slot, so its use is one load.
  bool computed(const CallNode *c) const { return slotOf_.count(c) != 0; }

  void VisitExpr_(const VarNode *v) override {
    auto it = paramIndex_.find(v);
    if (it == paramIndex_.end())
      return fail("%" + v->name() + " is not a parameter");
    RpnInstr in(RpnInstr::Kind::Arg);
    in.arg = it->second;
    push(in, +1);
  }

  void VisitExpr_(const ConstantNode *k) override {
    if (!k->isScalar())
      return fail("tensor constant '" + k->name() + "' inside an expression cannot be lowered");
    RpnInstr in(RpnInstr::Kind::Literal);
    in.literal = k->scalar();
    auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(k->type().get());
    // A typeless literal (none, a bare word) stays typeless: `:null`.
    in.literalType = tt ? tt->dtype() : DType::Unknown;
    push(in, +1);
  }

  void VisitExpr_(const CallNode *c) override {
    if (auto it = slotOf_.find(c); it != slotOf_.end()) {
      RpnInstr load(RpnInstr::Kind::Load);
      load.arg = it->second;
      return push(load, +1);
    }
    RpnInstr in(RpnInstr::Kind::Apply);
    in.op = c->opDef();
    in.numOperands = c->numArgs();
    push(in, 1 - int(c->numArgs()));
    if (uses_.lookup(c) > 1) {
      RpnInstr save(RpnInstr::Kind::Save);
      save.arg = program.numSlots++;
      slotOf_[c] = save.arg;
      push(save, 0);
    }
  }

  void VisitExprDefault_(const ExprNode *e) override {
    fail("cannot lower a " + nodeKindName(e->kind()) + " inside an expression");
  }

  void fail(const llvm::Twine &msg) {
    if (error.empty())
      error = "@" + fn_.name() + ": " + msg.str();
  }

  RpnProgram program;
  std::string error;

private:
  void push(const RpnInstr &in, int delta) {
    program.code.push_back(in);
    track(program, depth_, delta);
  }

  const FunctionNode &fn_;
  llvm::DenseMap<const ExprNode *, unsigned> uses_, paramIndex_;
  llvm::DenseMap<const ExprNode *, unsigned> slotOf_; ///< shared calls computed so far
  unsigned depth_ = 0;
};

} // namespace

llvm::Expected<RpnProgram> lowerToRpn(const FunctionNode &fn) {
  if (isLoweredToRpn(fn)) {
    auto *c = llvm::cast<CallNode>(fn.body().get());
    const AttrValue *prog = c->attrs().find("program");
    if (!prog || !prog->isStringList())
      return error("@" + fn.name() + ": rpn body without a program attribute");
    return parseRpnTokens(prog->getStringList(), fn.params().size());
  }
  RpnEmitter emit(fn);
  // Every use in postfix order, without recursion; a shared call's first
  // use in that order computes it, the others load it. After an error the
  // rest of the walk expands nothing and emits nothing.
  PostfixVisit(
      fn.body(),
      [&](const Expr &e) {
        auto *c = llvm::dyn_cast<CallNode>(e.get());
        if (c && !c->opDef())
          emit.fail("only operator calls can be lowered, found a call of @" + c->calleeName());
        return c && emit.error.empty() && !emit.computed(c);
      },
      [&](const Expr &e) {
        if (emit.error.empty())
          emit(e);
      });
  if (!emit.error.empty())
    return error(emit.error);
  return std::move(emit.program);
}

/// The complex number of a literal written `(re+imj)`, as the printer
/// writes them; nullopt for anything else.
static std::optional<AttrValue> complexLiteral(llvm::StringRef text) {
  if (text.size() <= 2 || !text.startswith("(") || !text.endswith("j)"))
    return std::nullopt;
  if (auto c = parseComplexText(text.drop_front().drop_back()))
    return AttrValue::complex(*c);
  return std::nullopt;
}

llvm::Expected<RpnProgram> parseRpnTokens(llvm::ArrayRef<std::string> tokens, unsigned numParams) {
  RpnProgram p;
  p.numParams = numParams;
  unsigned depth = 0;
  for (llvm::StringRef tok : tokens) {
    if (tok.startswith("$") || tok.startswith("=$")) {
      bool save = tok.startswith("=");
      RpnInstr in(save ? RpnInstr::Kind::Save : RpnInstr::Kind::Load);
      if (tok.drop_front(save ? 2 : 1).getAsInteger(10, in.arg))
        return error("rpn: bad slot '" + tok + "'");
      if (save && depth == 0)
        return error("rpn: '" + tok + "' saves from an empty stack");
      if (save && in.arg != p.numSlots)
        return error("rpn: '" + tok + "' saves into slot " + std::to_string(in.arg) +
                     "; slots are numbered in saving order, the next is " +
                     std::to_string(p.numSlots));
      if (!save && in.arg >= p.numSlots)
        return error("rpn: '" + tok + "' loads a slot no value was saved in");
      p.numSlots += save;
      p.code.push_back(in);
      track(p, depth, save ? 0 : +1);
      continue;
    }
    if (tok.startswith("%")) {
      RpnInstr in(RpnInstr::Kind::Arg);
      if (tok.drop_front().getAsInteger(10, in.arg) || in.arg >= numParams)
        return error("rpn: bad argument '" + tok + "'");
      p.code.push_back(in);
      track(p, depth, +1);
      continue;
    }
    size_t colon = tok.rfind(':');
    if (colon != llvm::StringRef::npos && !tok.take_front(colon).empty() &&
        (isdigit((unsigned char)tok[0]) || tok[0] == '-' || tok[0] == '"' || tok[0] == '(' ||
         tok.startswith("true") || tok.startswith("false") || tok.startswith("none") ||
         tok.startswith("inf") || tok.startswith("nan"))) {
      RpnInstr in(RpnInstr::Kind::Literal);
      llvm::StringRef text = tok.take_front(colon);
      auto dt = parseDType(tok.drop_front(colon + 1));
      if (!dt)
        return error("rpn: bad literal type in '" + tok + "'");
      in.literalType = *dt;
      int64_t iv;
      double dv;
      if (text == "true" || text == "false")
        in.literal = AttrValue::boolean(text == "true");
      else if (text == "none")
        in.literal = AttrValue::none();
      else if (text.size() >= 2 && text.startswith("\"") && text.endswith("\""))
        in.literal = AttrValue::string(text.drop_front().drop_back().str());
      else if (auto c = complexLiteral(text))
        in.literal = *c;
      else if (!text.getAsInteger(10, iv))
        in.literal = AttrValue::integer(iv);
      else if (text == "inf" || text == "-inf" || text == "nan" || text == "-nan")
        in.literal = AttrValue::real(text == "inf"    ? INFINITY
                                     : text == "-inf" ? -INFINITY
                                                      : NAN);
      else if (!text.getAsDouble(dv))
        in.literal = AttrValue::real(dv);
      else
        return error("rpn: bad literal '" + tok + "'");
      p.code.push_back(in);
      track(p, depth, +1);
      continue;
    }
    auto [name, count] = tok.split('/');
    const OpDef *op = OpRegistry::global().lookup(name);
    if (!op || !op->is(OpFlags::ExprOp))
      return error("rpn: unknown expression op '" + name + "'");
    RpnInstr in(RpnInstr::Kind::Apply);
    in.op = op;
    if (!count.empty()) {
      if (count.getAsInteger(10, in.numOperands))
        return error("rpn: bad operand count in '" + tok + "'");
    } else if (op->arity() >= 0) {
      in.numOperands = op->arity();
    } else {
      return error("rpn: '" + name + "' needs an operand count (" + name + "/n)");
    }
    if (in.numOperands > depth)
      return error("rpn: '" + tok + "' needs " + std::to_string(in.numOperands) +
                   " operands, the stack holds " + std::to_string(depth));
    p.code.push_back(in);
    track(p, depth, 1 - int(in.numOperands));
  }
  if (depth != 1)
    return error("rpn: program leaves " + std::to_string(depth) + " values on the stack, not 1");
  return p;
}

} // namespace kc

namespace kc {

/// The `rpn` op's result: the program replayed on types, each op's own
/// type rule applied to the types on the stack (so `list`, `size`, integer
/// division and casts type as they do in the expression AST).
static llvm::Expected<Type> rpnTypeRule(const CallNode &call) {
  const AttrValue *prog = call.attrs().find("program");
  if (!prog || !prog->isStringList())
    return error("rpn: missing program attribute");
  auto p = parseRpnTokens(prog->getStringList(), call.numArgs());
  if (!p)
    return p.takeError();
  std::vector<Expr> stack, slots;
  for (const RpnInstr &in : p->code) {
    if (replaySlot(in, stack, slots))
      continue;
    switch (in.kind) {
    case RpnInstr::Kind::Save:
    case RpnInstr::Kind::Load:
      break; // replaySlot
    case RpnInstr::Kind::Arg:
      if (in.arg >= call.numArgs())
        return error("rpn: %" + std::to_string(in.arg) + " is out of range");
      if (!call.arg(in.arg)->type())
        return Type();
      stack.push_back(var(std::to_string(in.arg), call.arg(in.arg)->type()));
      break;
    case RpnInstr::Kind::Literal:
      stack.push_back(scalarConstant(in.literal, in.literalType == DType::Unknown
                                                     ? Type()
                                                     : tensorType(in.literalType, {})));
      break;
    case RpnInstr::Kind::Apply: {
      std::vector<Expr> args(stack.end() - in.numOperands, stack.end());
      stack.resize(stack.size() - in.numOperands);
      Call c = kc::call(in.op->name(), args);
      auto t = inferCallType(*c);
      if (!t)
        return t.takeError();
      if (!*t)
        return Type();
      c->setType(*t);
      stack.push_back(c);
      break;
    }
    }
  }
  return stack.back()->type();
}

KC_REGISTER_OP(rpn, kRpnOpName)
    .describe("a primitive expression lowered to a reverse-Polish program")
    .attr("program", AttrValue::stringList({}), /*required=*/true)
    .flags(OpFlags::Pure | OpFlags::Variadic | OpFlags::Elementwise)
    .typeRule(rpnTypeRule);

std::optional<std::vector<int>> listExpressionItems(const ExprNode &e, const Module &m) {
  auto *c = llvm::dyn_cast<CallNode>(&e);
  const FunctionNode *fn = c ? m.callee(*c) : nullptr;
  auto *body = fn && fn->isPrimitive() ? llvm::dyn_cast<CallNode>(fn->body().get()) : nullptr;
  if (!body)
    return std::nullopt;
  std::vector<int> items;
  if (body->calleeName() == "list") {
    for (size_t i = 0; i < body->numArgs(); ++i) {
      const ExprNode *a = body->arg(i).get();
      if (auto *k = llvm::dyn_cast<ConstantNode>(a); k && k->isScalar() && k->scalar().isNone()) {
        items.push_back(-1);
        continue;
      }
      auto params = fn->params();
      auto p = llvm::find_if(params, [&](const Var &v) { return v.get() == a; });
      if (p == params.end())
        return std::nullopt;
      items.push_back(int(p - params.begin()));
    }
    return items;
  }
  if (body->calleeName() != kRpnOpName)
    return std::nullopt;
  const AttrValue *prog = body->attrs().find("program");
  if (!prog || !prog->isStringList())
    return std::nullopt;
  auto p = parseRpnTokens(prog->getStringList(), fn->params().size());
  if (!p) {
    llvm::consumeError(p.takeError());
    return std::nullopt;
  }
  if (p->code.empty())
    return std::nullopt;
  // Operands and Nones, then one `list` of all of them.
  for (size_t i = 0; i + 1 < p->code.size(); ++i) {
    const RpnInstr &in = p->code[i];
    if (in.kind == RpnInstr::Kind::Arg)
      items.push_back(int(in.arg));
    else if (in.kind == RpnInstr::Kind::Literal && in.literal.isNone())
      items.push_back(-1);
    else
      return std::nullopt;
  }
  const RpnInstr &last = p->code.back();
  if (last.kind != RpnInstr::Kind::Apply || last.op->name() != "list" ||
      last.numOperands != items.size())
    return std::nullopt;
  return items;
}

} // namespace kc
