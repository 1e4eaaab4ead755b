//===- Exporter.cpp - kc IR to PNNX files ---------------------------------===//
#include "kc/Import/Exporter.h"
#include "kc/IR/Diagnostic.h"
#include "kc/IR/Functor.h"
#include "kc/IR/InlineFused.h"
#include "kc/IR/Op.h"
#include "kc/IR/Rpn.h"
#include "kc/Import/ExpressionParser.h"
#include "kc/Import/Importer.h"
#include "kc/Import/PnnxParam.h"
#include "kc/Support/OutputFile.h"
#include "kc/Support/Quote.h"
#include "kc/Support/ZipArchive.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace kc {

/// The longest pnnx expression written: a value an expression reuses is
/// written out again at each use.
constexpr size_t kMaxExpressionText = size_t(1) << 20;

/// What cannot be exported, said without a place: the caller (a tool)
/// places the message at the file it was exporting. Errors about one node
/// are placed at it (PnnxWriter::nodeError).
static llvm::Error exportError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot export: " + msg);
}

/// Whether `s` can be one token of a `.pnnx.param` line. PNNX has no quoting
/// or escapes: the reader splits lines at whitespace, so a token is never
/// empty and holds none.
static bool isPnnxToken(llvm::StringRef s) {
  return !s.empty() && llvm::none_of(s, [](char c) { return llvm::isSpace(c); });
}

/// Whether `s` can be the key of a `key=value` item (`@key`, `$key`, `#key`
/// too): a token without `=`, where the reader splits the item.
static bool isPnnxKey(llvm::StringRef s) { return isPnnxToken(s) && !s.contains('='); }

/// Op types the importer reads as graph structure rather than as a call.
static bool isStructuralOpType(llvm::StringRef type) {
  return type == "pnnx.Input" || type == "pnnx.Output" || type == "pnnx.Attribute" ||
         type == "pnnx.Expression" || type == "prim::TupleConstruct" || type == "prim::TupleUnpack";
}

/// A number as PNNX writes it: floats always with `.` or an exponent.
static std::string pnnxNumber(const AttrValue &v) {
  return v.isInt() ? std::to_string(v.getInt()) : formatDouble(v.getNumber());
}

static std::string pnnxComplex(std::complex<double> c, bool inExpression) {
  // Parameters join the parts with a literal `+` (giving `+-`); expressions
  // use the sign of the imaginary part.
  std::string im = formatDouble(c.imag());
  std::string sep = inExpression ? (std::signbit(c.imag()) ? "" : "+") : "+";
  return formatDouble(c.real()) + sep + im + "j";
}

/// A parameter value in `.param` syntax (§2.4 of the format notes).
static std::string pnnxParam(const AttrValue &v) {
  auto join = [](auto &&items, auto &&fmt) {
    std::string s = "(";
    for (size_t i = 0; i < items.size(); ++i)
      s += (i ? "," : "") + fmt(items[i]);
    return s + ")";
  };
  switch (v.kind()) {
  case AttrValue::Kind::None: return "None";
  case AttrValue::Kind::Bool: return v.getBool() ? "True" : "False";
  case AttrValue::Kind::Int:
  case AttrValue::Kind::Float: return pnnxNumber(v);
  case AttrValue::Kind::String: return v.getString();
  case AttrValue::Kind::Complex: return pnnxComplex(v.getComplex(), false);
  case AttrValue::Kind::IntList:
    return join(v.getIntList(), [](int64_t x) { return std::to_string(x); });
  case AttrValue::Kind::FloatList:
    return join(v.getFloatList(), [](double x) { return formatDouble(x); });
  case AttrValue::Kind::StringList:
    return join(v.getStringList(), [](const std::string &x) { return x; });
  case AttrValue::Kind::ComplexList:
    return join(v.getComplexList(), [](std::complex<double> x) { return pnnxComplex(x, false); });
  }
  return "None";
}

static std::string shapeText(const TensorTypeNode &t) {
  std::string s = "(";
  for (size_t i = 0; i < t.rank(); ++i)
    s += (i ? "," : "") + (t.dims()[i] == kDynamicDim ? std::string("?")
                                                        : std::to_string(t.dims()[i]));
  return s + ")" + dtypeName(t.dtype()).str();
}

llvm::Expected<std::string> expressionText(const FunctionNode &fn) {
  auto prog = lowerToRpn(fn);
  if (!prog)
    return prog.takeError();
  // Replays the postfix program on a stack of texts. A pnnx expression is
  // a tree: a saved value is written out again at each use, so the text
  // can outgrow the program; past kMaxExpressionText it is refused.
  std::vector<std::string> stack, slots;
  auto tooLong = [&] {
    return exportError("@" + fn.name() + ": the expression would be longer than " +
                       llvm::Twine(kMaxExpressionText) +
                       " characters written out as a tree (it reuses values)");
  };
  for (const RpnInstr &in : prog->code) {
    if (!stack.empty() && stack.back().size() > kMaxExpressionText)
      return tooLong();
    if (replaySlot(in, stack, slots))
      continue;
    switch (in.kind) {
    case RpnInstr::Kind::Save:
    case RpnInstr::Kind::Load:
      break; // replaySlot
    case RpnInstr::Kind::Arg:
      stack.push_back("@" + std::to_string(in.arg));
      break;
    case RpnInstr::Kind::Literal: {
      const AttrValue &v = in.literal;
      if (v.isString())
        stack.push_back(v.getString());
      else if (v.kind() == AttrValue::Kind::Complex)
        stack.push_back(pnnxComplex(v.getComplex(), true));
      else
        stack.push_back(pnnxParam(v));
      break;
    }
    case RpnInstr::Kind::Apply: {
      if (stack.size() < in.numOperands)
        return exportError("@" + fn.name() + ": malformed expression program");
      std::vector<std::string> ops(stack.end() - in.numOperands, stack.end());
      stack.resize(stack.size() - in.numOperands);
      bool isList = in.op->name() == "list";
      std::string s = isList ? "[" : in.op->name() + "(";
      for (size_t i = 0; i < ops.size(); ++i)
        s += (i ? "," : "") + ops[i];
      stack.push_back(s + (isList ? "]" : ")"));
      break;
    }
    }
  }
  if (stack.size() != 1)
    return exportError("@" + fn.name() + ": malformed expression program");
  if (stack.back().size() > kMaxExpressionText)
    return tooLong();
  return stack.back();
}

namespace {

struct OpLine {
  std::string type, name;
  std::vector<std::string> inputs, outputs;
  std::vector<std::string> items; ///< params, then weights, then $names, then #annotations
};

class PnnxWriter {
public:
  explicit PnnxWriter(const Module &m) : m_(m) {}

  llvm::Expected<ExportedPnnx> run() {
    Function main = m_.main();
    if (!main)
      return exportError("the module has no @main");
    // Operator names are the calls' own: they are reserved first, so that a
    // name made up for a pnnx.Attribute or an unnamed call never takes one.
    if (auto e = reserveCallNames(main))
      return e;
    for (const Var &p : main->params()) {
      // The input's name is its operand's, a token of the line and the key
      // of its `#name=` annotation.
      if (!isPnnxKey(p->name()))
        return moduleError(m_, p->loc(),
                           "@main: input " + quoteInput("%" + p->name()) +
                               ": cannot export: PNNX cannot write an operand name that is "
                               "empty or holds whitespace or '=' (it has no quoting)");
      std::string operand = fresh(p->name());
      operands_[p.get()] = {operand};
      OpLine l{"pnnx.Input", uniqueOpName("pnnx_input_" + std::to_string(inputs_++)), {}, {operand}, {}};
      annotate(l, operand, p->type());
      lines_.push_back(std::move(l));
    }
    llvm::Error err = llvm::Error::success();
    // Dataflow only: the bodies of callee functions are not entered.
    llvm::DenseSet<const ExprNode *> seen;
    ExpandDataflow(
        main->body(), [&](const Expr &e) { return seen.count(e.get()) != 0; },
        [&](const Expr &e) {
          if (!seen.insert(e.get()).second || err)
            return;
          if (auto x = visit(e))
            err = std::move(x);
        });
    if (err)
      return err;

    OpLine out{"pnnx.Output", uniqueOpName("pnnx_output_0"), {}, {}, {}};
    std::vector<Expr> results;
    if (auto *t = llvm::dyn_cast<TupleNode>(main->body().get()))
      results.assign(t->fields().begin(), t->fields().end());
    else
      results.push_back(main->body());
    for (const Expr &r : results) {
      auto o = operandOf(r);
      if (!o)
        return o.takeError();
      out.inputs.push_back(*o);
    }
    lines_.push_back(std::move(out));

    ExportedPnnx result;
    size_t numOperands = 0;
    for (const OpLine &l : lines_)
      numOperands += l.outputs.size();
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "7767517\n" << lines_.size() << " " << numOperands << "\n";
    for (const OpLine &l : lines_) {
      os << llvm::left_justify(l.type, 24) << " " << llvm::left_justify(l.name, 24) << " "
         << l.inputs.size() << " " << l.outputs.size();
      for (auto &i : l.inputs)
        os << " " << i;
      for (auto &o : l.outputs)
        os << " " << o;
      for (auto &item : l.items)
        os << " " << item;
      os << "\n";
    }
    result.param = os.str();
    if (missingWeight_.empty()) {
      auto bytes = zip_.finish();
      if (!bytes)
        return bytes.takeError();
      result.bin = std::move(*bytes);
    }
    result.missingWeight = missingWeight_;
    return result;
  }

private:
  /// An operand name not used yet, preferring `hint`.
  std::string fresh(llvm::StringRef hint = "") {
    if (!hint.empty() && hint.find_first_of(" \t\n=") == llvm::StringRef::npos &&
        usedOperands_.insert(hint).second)
      return hint.str();
    std::string n;
    do
      n = std::to_string(nextOperand_++);
    while (!usedOperands_.insert(n).second);
    return n;
  }

  /// A name for an operator kc names itself (an input, the output, a
  /// pnnx.Attribute, an unnamed call), not used yet, preferring `hint`.
  std::string uniqueOpName(std::string hint) {
    if (!isPnnxToken(hint))
      hint = "op";
    std::string n = hint;
    for (unsigned i = 0; !usedOpNames_.insert(n).second; ++i)
      n = hint + "_" + std::to_string(i);
    return n;
  }

  /// Checks and reserves the names of main's calls: PNNX writes each name
  /// once, as one token, so a name that holds whitespace or is given to two
  /// calls would come back different (or not at all).
  llvm::Error reserveCallNames(const Function &main) {
    llvm::StringMap<const CallNode *> owner;
    llvm::DenseSet<const ExprNode *> seen;
    llvm::Error err = llvm::Error::success();
    ExpandDataflow(
        main->body(), [&](const Expr &e) { return seen.count(e.get()) != 0; },
        [&](const Expr &e) {
          if (!seen.insert(e.get()).second || err)
            return;
          auto *c = llvm::dyn_cast<CallNode>(e.get());
          if (!c || c->name().empty())
            return;
          if (!isPnnxToken(c->name())) {
            err = nodeError(*c, "PNNX cannot write an operator name that holds whitespace (it "
                                "has no quoting)");
            return;
          }
          auto [it, fresh] = owner.try_emplace(c->name(), c);
          if (!fresh)
            err = nodeError(*c, "the operator name is also used by the call on line " +
                                    llvm::Twine(it->second->loc().line) +
                                    ", and PNNX names each operator once");
        });
    if (err)
      return err;
    for (auto &entry : owner)
      usedOpNames_.insert(entry.getKey());
    return llvm::Error::success();
  }

  /// `file:line:col: error: @main: <node>: cannot export: msg`.
  llvm::Error nodeError(const ExprNode &e, const llvm::Twine &msg) const {
    return moduleError(m_, e.loc(), "@main: " + describeNode(e) + ": cannot export: " + msg);
  }

  /// `key=value` as PNNX writes a parameter, if the reader gives back exactly
  /// `value` for it; otherwise an error at `owner` naming the attribute. PNNX
  /// has no quoting: a value is what follows the first `=` up to the next
  /// whitespace, typed by its text, so a string with a space, one that
  /// reads as a number (`"1"`) or None, or a list item with a comma cannot
  /// be written.
  llvm::Expected<std::string> paramItem(const ExprNode &owner, llvm::StringRef key,
                                        const AttrValue &value) const {
    std::string what = "attribute " + quoteInput(key);
    if (!isPnnxKey(key) || llvm::StringRef("@$#").contains(key.front()))
      return nodeError(owner, "PNNX cannot write the " + what +
                                  ": a parameter name is a token without '=' that does not "
                                  "start with '@', '$' or '#'");
    std::string text = pnnxParam(value);
    if (!isPnnxToken(text) && !text.empty())
      return nodeError(owner, what + " is " + clipInput(attrToString(value)) +
                                  ", which PNNX cannot write: a value ends at whitespace (there "
                                  "is no quoting)");
    // The importer keeps `expr` as written, as pnnx does.
    llvm::Expected<AttrValue> back =
        key == "expr" ? llvm::Expected<AttrValue>(AttrValue::string(text)) : parseParamValue(text);
    if (!back)
      return nodeError(owner,
                       what + " is " + clipInput(attrToString(value)) +
                           ", which PNNX would not read back: " + llvm::toString(back.takeError()));
    if (*back != value)
      return nodeError(owner, what + " is " + clipInput(attrToString(value)) +
                                  ", which PNNX would read back as " +
                                  clipInput(attrToString(*back)));
    return key.str() + "=" + text;
  }

  void annotate(OpLine &l, const std::string &operand, const Type &t) {
    if (auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(t.get()))
      l.items.push_back("#" + operand + "=" + shapeText(*tt));
  }

  void addWeight(const std::string &entry, const ConstantNode &c) {
    if (!c.hasData()) {
      if (missingWeight_.empty())
        missingWeight_ = c.name();
      return;
    }
    zip_.add(entry, c.data()->bytes());
  }

  llvm::Expected<std::string> operandOf(const Expr &e) {
    auto it = operands_.find(e.get());
    if (it != operands_.end() && it->second.size() == 1)
      return it->second[0];
    // A tensor constant used as a value (a result folded to a constant, a
    // tuple field) is a pnnx.Attribute.
    if (auto *c = llvm::dyn_cast<ConstantNode>(e.get()); c && !c->isScalar())
      return attributeOperand(*c);
    if (auto *g = llvm::dyn_cast<TupleGetItemNode>(e.get())) {
      auto t = operands_.find(g->tuple().get());
      if (t != operands_.end() && g->index() < t->second.size())
        return t->second[g->index()];
    }
    return exportError("a value of type " + typeToString(e->type()) +
                       " has no PNNX operand (a tuple used as a whole?)");
  }

  llvm::Error visit(const Expr &e) {
    const ExprNode *n = e.get();
    if (llvm::isa<VarNode>(n) || llvm::isa<OpNode>(n) || llvm::isa<GlobalVarNode>(n) ||
        llvm::isa<FunctionNode>(n) || llvm::isa<TupleGetItemNode>(n))
      return llvm::Error::success();
    if (auto *c = llvm::dyn_cast<ConstantNode>(n))
      return visitConstant(*c);
    if (auto *t = llvm::dyn_cast<TupleNode>(n)) {
      if (e == m_.main()->body())
        return llvm::Error::success(); // becomes pnnx.Output's inputs
      OpLine l{"prim::TupleConstruct", uniqueOpName("pnnx_tuple_" + std::to_string(tuples_++)),
               {}, {}, {}};
      for (const Expr &f : t->fields()) {
        auto o = operandOf(f);
        if (!o)
          return o.takeError();
        l.inputs.push_back(*o);
      }
      std::string out = fresh();
      l.outputs.push_back(out);
      operands_[n] = {out};
      lines_.push_back(std::move(l));
      return llvm::Error::success();
    }
    return visitCall(*llvm::cast<CallNode>(n));
  }

  llvm::Error visitConstant(const ConstantNode &c) {
    // Weights of calls are written as `@key` on the call; only constants
    // used as values reach here (and are written lazily, on first use).
    if (c.isScalar()) {
      OpLine l{"prim::Constant", uniqueOpName("pnnx_const_" + std::to_string(consts_++)), {}, {}, {}};
      auto item = paramItem(c, "value", c.scalar());
      if (!item)
        return item.takeError();
      std::string out = fresh();
      l.outputs.push_back(out);
      l.items.push_back(*item);
      annotate(l, out, c.type());
      operands_[&c] = {out};
      lines_.push_back(std::move(l));
      return llvm::Error::success();
    }
    return llvm::Error::success();
  }

  /// Emits the `pnnx.Attribute` of a tensor constant used as a value.
  llvm::Expected<std::string> attributeOperand(const ConstantNode &c) {
    auto it = operands_.find(&c);
    if (it != operands_.end())
      return it->second[0];
    auto [opName, key] = llvm::StringRef(c.name()).rsplit('.');
    if (key.empty() || opName.empty())
      opName = c.name(), key = "data";
    // Its name becomes the operator's name and the `@key` of the line.
    if (!isPnnxToken(opName) || !isPnnxKey(key))
      return moduleError(m_, c.loc(),
                         "@main: constant @" + clipInput(c.name()) +
                             ": cannot export: PNNX cannot write a name that holds whitespace "
                             "(or '=' after its last '.'), having no quoting");
    auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(c.type().get());
    if (!tt)
      return exportError("constant '" + c.name() + "' has no tensor type");
    std::string name = uniqueOpName(opName.str());
    OpLine l{"pnnx.Attribute", name, {}, {}, {}};
    std::string out = fresh();
    l.outputs.push_back(out);
    l.items.push_back("@" + key.str() + "=" + shapeText(*tt));
    annotate(l, out, c.type());
    addWeight(name + "." + key.str(), c);
    operands_[&c] = {out};
    lines_.push_back(std::move(l));
    return out;
  }

  /// The `expr=` text of the call `c` of `fn`, if it reads back as the same
  /// expression: a string literal holding `,` or a parenthesis, or one that
  /// reads as a number, would not.
  llvm::Expected<std::string> checkedExpression(const CallNode &c, const FunctionNode &fn) {
    auto text = expressionText(fn);
    if (!text)
      return text.takeError();
    if (!isPnnxToken(*text))
      return nodeError(c, "the expression of @" + clipInput(fn.name()) + " is " +
                              quoteInput(*text) +
                              ", which PNNX cannot write: a value ends at whitespace");
    auto body = parseExpression(*text, fn.params());
    std::string back;
    if (body) {
      Function again = make<const FunctionNode>(fn.name(), fn.params(), *body, Type(),
                                                /*primitive=*/true);
      auto t = expressionText(*again);
      if (t)
        back = *t;
      else
        llvm::consumeError(t.takeError());
    } else {
      llvm::consumeError(body.takeError());
    }
    if (back != *text)
      return nodeError(c, "the expression of @" + clipInput(fn.name()) + ", written " +
                              quoteInput(*text) + ", would not read back the same");
    return text;
  }

  llvm::Error visitCall(const CallNode &c) {
    OpLine l;
    // Calls with a name have it reserved (reserveCallNames); PNNX needs a
    // name for the others too.
    l.name = c.name().empty() ? uniqueOpName("op_" + std::to_string(unnamed_++)) : c.name();
    std::vector<std::string> params;
    if (const GlobalVarNode *g = c.global()) {
      const FunctionNode *fn = m_.callee(c);
      if (!fn)
        return nodeError(c, "it calls @" + clipInput(g->name()) + ", which is not in the module");
      if (!fn->isPrimitive())
        return nodeError(c, "it calls @" + clipInput(fn->name()) +
                                ", which is not a primitive expression function");
      if (c.attrs().has("expr"))
        return nodeError(c, "an expression's attribute 'expr' would clash with its expr=");
      auto text = checkedExpression(c, *fn);
      if (!text)
        return text.takeError();
      l.type = "pnnx.Expression";
      params.push_back("expr=" + *text);
    } else {
      l.type = c.calleeName().str();
      if (l.type.empty())
        return exportError("a call without an op or function callee");
      if (!isPnnxToken(l.type))
        return nodeError(c, "PNNX cannot write an op type that holds whitespace (it has no "
                            "quoting)");
      if (isStructuralOpType(l.type))
        return nodeError(c, quoteInput(l.type) +
                                " lines are graph structure in PNNX, not calls, and would not "
                                "read back as this call");
    }
    for (auto &[key, value] : c.attrs().entries()) {
      auto item = paramItem(c, key, value);
      if (!item)
        return item.takeError();
      params.push_back(std::move(*item));
    }
    std::sort(params.begin(), params.end(), [](const std::string &a, const std::string &b) {
      return llvm::StringRef(a).split('=').first < llvm::StringRef(b).split('=').first;
    });
    l.items = params;

    std::vector<std::string> weights, names;
    for (size_t i = 0; i < c.numArgs(); ++i) {
      const ArgKey &k = c.keys()[i];
      if (k.role != ArgRole::Positional && !isPnnxKey(k.name))
        return nodeError(c, "PNNX cannot write the argument name " + quoteInput(k.name) +
                                " (an item key is a token without '=')");
      auto *w = llvm::dyn_cast<ConstantNode>(c.arg(i).get());
      if (k.role == ArgRole::Weight && w && !w->isScalar()) {
        auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(w->type().get());
        if (!tt)
          return exportError("weight '" + w->name() + "' has no tensor type");
        weights.push_back("@" + k.name + "=" + shapeText(*tt));
        addWeight(l.name + "." + k.name, *w);
        continue;
      }
      llvm::Expected<std::string> o = w && !w->isScalar() ? attributeOperand(*w)
                                                          : operandOf(c.arg(i));
      if (!o)
        return o.takeError();
      l.inputs.push_back(*o);
      if (k.role != ArgRole::Positional)
        names.push_back("$" + k.name + "=" + *o);
    }
    l.items.insert(l.items.end(), weights.begin(), weights.end());
    l.items.insert(l.items.end(), names.begin(), names.end());

    if (auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(c.type().get())) {
      std::vector<std::string> outs;
      for (size_t i = 0; i < tt->size(); ++i) {
        outs.push_back(fresh());
        annotate(l, outs.back(), tt->fields()[i]);
      }
      l.outputs = outs;
      operands_[&c] = outs;
    } else {
      std::string out = fresh();
      l.outputs.push_back(out);
      annotate(l, out, c.type());
      operands_[&c] = {out};
    }
    lines_.push_back(std::move(l));
    return llvm::Error::success();
  }

  const Module &m_;
  std::vector<OpLine> lines_;
  llvm::DenseMap<const ExprNode *, std::vector<std::string>> operands_;
  llvm::StringSet<> usedOperands_, usedOpNames_;
  unsigned nextOperand_ = 0, inputs_ = 0, tuples_ = 0, consts_ = 0, unnamed_ = 0;
  ZipWriter zip_{ZipLayout::Zip64};
  std::string missingWeight_;
};

/// A convolution whose zero padding differs before and after (fold-pad
/// writes (before, after) pairs, which PyTorch's convolutions do not take)
/// as the F.pad it came from and the convolution without padding.
class UnfoldPadPairs final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    auto *c = llvm::cast<CallNode>(post.get());
    const OpDef *d = c->opDef();
    const AttrValue *padding = c->attrs().find("padding");
    if (!d || !d->window() || d->window()->op != WindowOp::Conv || !padding ||
        !padding->isIntList() || c->attrs().getString("padding_mode", "zeros") != "zeros")
      return post;
    size_t at = c->dataArgIndex(0);
    const ExprNode *x = pre->dataArg(0);
    auto *in = x ? llvm::dyn_cast_or_null<TensorTypeNode>(x->type().get()) : nullptr;
    std::vector<int64_t> pairs = padding->asIntVector();
    if (!in || in->rank() < 3 || pairs.size() != 2 * (in->rank() - 2) || at == c->numArgs())
      return post;
    size_t n = in->rank() - 2;
    std::vector<int64_t> dims(in->dims().begin(), in->dims().end());
    for (size_t j = 0; j < n; ++j)
      if (dims[2 + n - 1 - j] >= 0)
        dims[2 + n - 1 - j] += pairs[2 * j] + pairs[2 * j + 1];
    Call pad = call("F.pad", {c->arg(at)},
                    Attrs{{"mode", AttrValue::string("constant")},
                          {"pad", AttrValue::intList(pairs)},
                          {"value", AttrValue::real(0.0)}});
    pad->setType(tensorType(in->dtype(), dims));
    pad->setLoc(c->loc());
    std::vector<Expr> args(c->args().begin(), c->args().end());
    args[at] = pad;
    Attrs attrs = c->attrs();
    attrs.set("padding", AttrValue::intList(std::vector<int64_t>(n, 0)));
    Call conv = call(c->callee(), args, std::move(attrs), c->keys(), c->name());
    conv->setType(c->type() ? c->type() : pre->type());
    conv->setLoc(c->loc());
    return conv;
  }
};

} // namespace

llvm::Expected<ExportedPnnx> exportPnnx(const Module &m) {
  // PNNX has no fused groups: each is written as its calls; nor uneven
  // zero padding in a convolution: it is written as the pad.
  ModulePtr flat = inlineFusedCalls(m);
  if (Function main = flat->main()) {
    UnfoldPadPairs unfold;
    Expr body = unfold.Mutate(main->body());
    if (body.get() != main->body().get())
      flat->add(withBody(main, main->params(), body));
  }
  return PnnxWriter(*flat).run();
}

llvm::Error writePnnx(const ExportedPnnx &r, llvm::StringRef paramPath, llvm::StringRef binPath) {
  // A .param without its .bin (or with a partial one) would load as a
  // different model, or not at all: on any failure neither file is left.
  // writeOutputFile removes a partly written file; the .param, complete
  // by then, goes when the .bin fails.
  if (auto e = writeOutputFile(paramPath, llvm::StringRef(r.param)))
    return e;
  if (!r.bin)
    return llvm::Error::success();
  std::string bin = binPath.empty() ? weightPathFor(paramPath) : binPath.str();
  if (auto e = writeOutputFile(bin, *r.bin)) {
    if (llvm::sys::fs::is_regular_file(paramPath))
      llvm::sys::fs::remove(paramPath);
    return e;
  }
  return llvm::Error::success();
}

llvm::Error exportPnnx(const Module &m, llvm::StringRef paramPath, llvm::StringRef binPath) {
  auto r = exportPnnx(m);
  if (!r)
    return r.takeError();
  return writePnnx(*r, paramPath, binPath);
}

} // namespace kc
