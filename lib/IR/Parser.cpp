//===- Parser.cpp - Reads kc's textual IR ---------------------------------===//
//
// A recursive-descent parser over the characters of the text, tracking line
// and column for diagnostics. The grammar is the printer's (docs/ir.md).
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Parser.h"
#include "kc/IR/Op.h"
#include "kc/Support/NumberText.h"
#include "kc/Support/Quote.h"
#include "kc/Support/ZipArchive.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <map>

namespace kc {
namespace {

/// How deeply tuple types and attribute lists may nest: the parser recurses
/// on them, and hostile text must not exhaust the stack.
constexpr unsigned kMaxNesting = 256;

/// Counts one level of nesting for as long as it lives.
class Nesting {
public:
  explicit Nesting(unsigned &depth) : depth_(depth) { ++depth_; }
  ~Nesting() { --depth_; }
  bool tooDeep() const { return depth_ > kMaxNesting; }

private:
  unsigned &depth_;
};

/// A type as an error message shows it, bounded.
std::string shown(const Type &t) { return clipInput(typeToString(t)); }

class TextParser {
public:
  TextParser(llvm::StringRef text, llvm::StringRef name, const ZipReader *weights)
      : text_(text), name_(name), weights_(weights) {}

private:
  //===--- Characters ------------------------------------------------------===//

  SourceLoc here() const { return {line_, unsigned(pos_ - lineStart_ + 1)}; }

  llvm::Error errorAt(SourceLoc l, const llvm::Twine &msg) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   name_ + ":" + llvm::Twine(l.line) + ":" + llvm::Twine(l.col) +
                                       ": error: " + msg);
  }
  llvm::Error error(const llvm::Twine &msg) const { return errorAt(here(), msg); }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      lineStart_ = pos_ + 1;
    }
    ++pos_;
  }

  /// Skips blanks and `//` comments; with `newlines` false stops at a line end.
  void skipSpace(bool newlines = true) {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n')) {
        advance();
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n')
          ++pos_;
      } else {
        break;
      }
    }
  }

  bool consume(llvm::StringRef tok) {
    skipSpace();
    if (!text_.substr(pos_).startswith(tok))
      return false;
    for (size_t i = 0; i < tok.size(); ++i)
      advance();
    return true;
  }

  llvm::Error expect(llvm::StringRef tok, llvm::StringRef what) {
    if (consume(tok))
      return llvm::Error::success();
    return error("expected '" + tok + "' " + what + found());
  }

  std::string found() const {
    if (pos_ >= text_.size())
      return ", found the end of the input";
    size_t n = 0;
    while (pos_ + n < text_.size() && n < 16 && !llvm::isSpace(text_[pos_ + n]))
      ++n;
    return ", found " + quoteInput(text_.substr(pos_, std::max<size_t>(n, 1)));
  }

  static bool isNameChar(char c) { return llvm::isAlnum(c) || c == '_' || c == '.'; }

  /// A bare name (letters, digits, `_`, `.`) or a quoted string.
  llvm::Expected<std::string> parseName(llvm::StringRef what) {
    skipSpace();
    if (peek() == '"')
      return parseString();
    size_t b = pos_;
    while (pos_ < text_.size() && isNameChar(text_[pos_]))
      ++pos_;
    if (b == pos_)
      return error("expected " + what + found());
    return text_.substr(b, pos_ - b).str();
  }

  /// An op name may also contain `:` (`prim::Foo` printed bare is never
  /// produced, but hand-written text may use it).
  llvm::Expected<std::string> parseString() {
    SourceLoc start = here();
    ++pos_; // opening quote
    std::string s;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n')
        return errorAt(start, "unterminated string");
      char c = text_[pos_++];
      if (c == '"')
        return s;
      if (c != '\\') {
        s += c;
        continue;
      }
      if (pos_ >= text_.size())
        return errorAt(start, "unterminated string");
      char e = text_[pos_++];
      if (e == 'n')
        s += '\n';
      else if (e == 'x' && pos_ + 2 <= text_.size() && llvm::isHexDigit(text_[pos_]) &&
               llvm::isHexDigit(text_[pos_ + 1])) {
        s += char(llvm::hexDigitValue(text_[pos_]) * 16 + llvm::hexDigitValue(text_[pos_ + 1]));
        pos_ += 2;
      } else if (e == '"' || e == '\\')
        s += e;
      else
        return error("unknown escape " + quoteInput(std::string("\\") + e) + " in a string");
    }
  }

  //===--- Types -----------------------------------------------------------===//

  llvm::Expected<Type> parseType() {
    skipSpace();
    if (consume("?"))
      return Type();
    if (peek() == '(') {
      Nesting nest(depth_);
      if (nest.tooDeep())
        return error("tuple types nested deeper than " + llvm::Twine(kMaxNesting) + " levels");
      advance();
      std::vector<Type> fields;
      if (!consume(")")) {
        while (true) {
          auto t = parseType();
          if (!t)
            return t.takeError();
          fields.push_back(*t);
          if (consume(")"))
            break;
          if (auto e = expect(",", "between tuple type fields"))
            return e;
        }
      }
      return tupleType(fields);
    }
    SourceLoc at = here();
    size_t b = pos_;
    while (pos_ < text_.size() && llvm::isAlnum(text_[pos_]))
      ++pos_;
    llvm::StringRef dt = text_.substr(b, pos_ - b);
    auto dtype = parseDType(dt);
    if (!dtype) {
      pos_ = b;
      return errorAt(at, "expected a type such as f32[1,3] or (f32[2], i64[])" + found());
    }
    if (peek() != '[')
      return error("expected '[' after the element type " + quoteInput(dt));
    advance();
    std::vector<int64_t> dims;
    skipSpace();
    if (peek() == ']') {
      advance();
      return tensorType(*dtype, dims);
    }
    while (true) {
      skipSpace();
      if (peek() == '?') {
        advance();
        dims.push_back(kDynamicDim);
      } else {
        size_t d = pos_;
        while (pos_ < text_.size() && llvm::isDigit(text_[pos_]))
          ++pos_;
        int64_t v;
        if (d == pos_ || text_.substr(d, pos_ - d).getAsInteger(10, v))
          return error("expected a dimension (a non-negative integer or '?')" + found());
        dims.push_back(v);
      }
      skipSpace();
      if (peek() == ']') {
        advance();
        break;
      }
      if (auto e = expect(",", "between dimensions"))
        return e;
    }
    Type t = tensorType(*dtype, dims);
    if (llvm::cast<TensorTypeNode>(t.get())->isStatic() &&
        !llvm::cast<TensorTypeNode>(t.get())->numElements())
      return errorAt(at, "the type " + shown(t) + " has more elements than int64 holds");
    return t;
  }

  //===--- Values ----------------------------------------------------------===//

  /// The text of one attribute value: up to a `,` `}` `)` or `:` at bracket
  /// depth 0, strings kept whole.
  llvm::Expected<AttrValue> parseAttrValue() {
    skipSpace();
    SourceLoc at = here();
    if (peek() == '"') {
      auto s = parseString();
      if (!s)
        return s.takeError();
      return AttrValue::string(*s);
    }
    if (peek() == '[') {
      // A list: parse its items and decide the kind from them.
      Nesting nest(depth_);
      if (nest.tooDeep())
        return error("lists nested deeper than " + llvm::Twine(kMaxNesting) + " levels");
      advance();
      std::vector<AttrValue> items;
      skipSpace();
      if (peek() == ']') {
        advance();
        return AttrValue::intList({});
      }
      while (true) {
        auto v = parseAttrValue();
        if (!v)
          return v.takeError();
        items.push_back(*v);
        skipSpace();
        if (peek() == ']') {
          advance();
          break;
        }
        if (auto e = expect(",", "between list items"))
          return e;
      }
      return makeList(items, at);
    }
    size_t b = pos_;
    int depth = 0;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '(')
        ++depth;
      else if (c == ')') {
        if (depth == 0)
          break;
        --depth;
      } else if (depth == 0 && (c == ',' || c == '}' || c == ']' || c == ':' || llvm::isSpace(c)))
        break;
      ++pos_;
    }
    llvm::StringRef w = text_.substr(b, pos_ - b);
    if (w.empty())
      return errorAt(at, "expected a value" + found());
    if (w == "none")
      return AttrValue::none();
    if (w == "true" || w == "false")
      return AttrValue::boolean(w == "true");
    // The printer writes complex numbers as `(re+imj)`.
    if (w.size() > 2 && w.front() == '(' && w.endswith("j)"))
      if (auto c = parseComplexText(w.drop_front().drop_back()))
        return AttrValue::complex(*c);
    if (isIntegerText(w)) {
      if (auto i = parseIntText(w))
        return AttrValue::integer(*i);
      return errorAt(at, "integer " + quoteInput(w) + " does not fit in int64");
    }
    if (auto d = parseRealText(w))
      return AttrValue::real(*d);
    return errorAt(at, "expected a value (a number, true/false, none, a quoted string, a "
                       "list or a complex number), found " +
                           quoteInput(w));
  }

  llvm::Expected<AttrValue> makeList(const std::vector<AttrValue> &items, SourceLoc at) {
    auto all = [&](auto pred) { return llvm::all_of(items, pred); };
    if (all([](const AttrValue &v) { return v.isInt(); })) {
      std::vector<int64_t> r;
      for (auto &v : items)
        r.push_back(v.getInt());
      return AttrValue::intList(r);
    }
    if (all([](const AttrValue &v) { return v.isNumber(); })) {
      std::vector<double> r;
      for (auto &v : items)
        r.push_back(v.getNumber());
      return AttrValue::floatList(r);
    }
    if (all([](const AttrValue &v) { return v.isString(); })) {
      std::vector<std::string> r;
      for (auto &v : items)
        r.push_back(v.getString());
      return AttrValue::stringList(r);
    }
    if (all([](const AttrValue &v) { return v.kind() == AttrValue::Kind::Complex; })) {
      std::vector<std::complex<double>> r;
      for (auto &v : items)
        r.push_back(v.getComplex());
      return AttrValue::complexList(r);
    }
    // The kinds of list an attribute can be (docs/ir.md): no booleans, none
    // or lists in a list.
    for (const AttrValue &v : items)
      if (!v.isNumber() && !v.isString() && v.kind() != AttrValue::Kind::Complex)
        return errorAt(at, "a list holds numbers, strings or complex numbers, not " + v.kindName() +
                               " values such as " + clipInput(attrToString(v)));
    return errorAt(at, "a list mixes values of different kinds");
  }

  /// `%name`, or a literal `2.5:f32`, `none`, `"floor"`.
  llvm::Expected<Expr> parseOperand() {
    skipSpace();
    SourceLoc at = here();
    if (peek() == '%') {
      advance();
      auto n = parseName("a value name after '%'");
      if (!n)
        return n.takeError();
      auto it = values_.find(*n);
      if (it == values_.end())
        return errorAt(at, "use of undefined value " + quoteInput("%" + *n));
      return it->second;
    }
    size_t literalStart = pos_;
    auto v = parseAttrValue();
    if (!v)
      return v.takeError();
    Type t;
    skipSpace(false);
    if (peek() == ':' && !v->isString() && !v->isNone()) {
      advance();
      skipSpace(false);
      size_t b = pos_;
      while (pos_ < text_.size() && llvm::isAlnum(text_[pos_]))
        ++pos_;
      auto dt = parseDType(text_.substr(b, pos_ - b));
      if (!dt) {
        pos_ = b;
        return error("expected the element type of a literal" + found());
      }
      if (*dt != DType::Unknown)
        t = tensorType(*dt, {});
      // A value the type cannot hold would be converted with undefined or
      // surprising results at run time: refuse it here, naming it.
      if ((isInteger(*dt) || *dt == DType::Bool) && !literalFits(*v, *dt))
        return errorAt(at, "literal " + quoteInput(text_.slice(literalStart, pos_)) +
                               " does not fit in " + dtypeName(*dt));
    }
    Constant c = scalarConstant(*v, t);
    c->setLoc(at);
    return Expr(c);
  }

  /// A named tensor constant, shared by name within the module.
  llvm::Expected<Expr> tensorConst(const std::string &name, const Type &t, SourceLoc at) {
    auto it = consts_.find(name);
    if (it != consts_.end()) {
      // One name, one tensor: a second declaration must repeat the type.
      if (typeEqual(it->second->type(), t))
        return it->second;
      return errorAt(at, "constant @" + clipInput(name) + " is declared " + shown(t) +
                             " here, but " + shown(it->second->type()) + " on line " +
                             llvm::Twine(it->second->loc().line) + ":" +
                             llvm::Twine(it->second->loc().col));
    }
    TensorDataPtr data;
    if (weights_) {
      if (const ZipEntry *e = weights_->find(name)) {
        auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(t.get());
        uint64_t need = tt && tt->numElements() ? uint64_t(*tt->numElements()) *
                                                      dtypeSize(tt->dtype())
                                                : 0;
        if (e->size != need)
          return errorAt(at, weights_->name() + ": entry " + quoteInput(name) + " holds " +
                                 llvm::Twine(e->size) + " bytes, but " + shown(t) +
                                 " needs " + llvm::Twine(need));
        data = TensorData::borrowed(weights_->file(),
                                    weights_->data(*e));
      }
    }
    Constant c = tensorConstant(name, t, data);
    c->setLoc(at);
    consts_[name] = c;
    return Expr(c);
  }

  //===--- Statements ------------------------------------------------------===//

  llvm::Expected<Function> parseFunction() {
    fnLoc_ = here();
    if (!consume("fn"))
      return error("expected 'fn'" + found());
    if (auto e = expect("@", "before the function name"))
      return e;
    auto name = parseName("a function name");
    if (!name)
      return name.takeError();
    values_.clear();
    if (auto e = expect("(", "to open the parameter list"))
      return e;
    std::vector<Var> params;
    if (!consume(")")) {
      while (true) {
        SourceLoc at = here();
        if (auto e = expect("%", "before a parameter name"))
          return e;
        auto pn = parseName("a parameter name");
        if (!pn)
          return pn.takeError();
        if (auto e = expect(":", "after a parameter name"))
          return e;
        auto t = parseType();
        if (!t)
          return t.takeError();
        if (values_.count(*pn))
          return errorAt(at, "parameter " + quoteInput("%" + *pn) + " is declared twice");
        Var v = var(*pn, *t);
        v->setLoc(at);
        values_[*pn] = v;
        params.push_back(v);
        if (consume(")"))
          break;
        if (auto e = expect(",", "between parameters"))
          return e;
      }
    }
    if (auto e = expect("->", "before the result type"))
      return e;
    auto ret = parseType();
    if (!ret)
      return ret.takeError();
    FunctionKind kind = consume("primitive") ? FunctionKind::Expression
                        : consume("fused")   ? FunctionKind::Fused
                                             : FunctionKind::Graph;
    if (auto e = expect("{", "to open the function body"))
      return e;
    while (true) {
      skipSpace();
      if (consume("return"))
        break;
      if (pos_ >= text_.size())
        return error("missing 'return' in @" + clipInput(*name));
      if (auto e = parseStatement())
        return e;
    }
    auto result = parseOperand();
    if (!result)
      return result.takeError();
    if (auto e = expect("}", "to close the function body"))
      return e;
    Function f = make<const FunctionNode>(*name, params, *result, *ret, kind);
    f->setLoc(fnLoc_);
    return f;
  }

  llvm::Error parseStatement() {
    SourceLoc at = here();
    if (peek() != '%')
      return error("expected a definition '%name = ...' or 'return'" + found());
    advance();
    auto name = parseName("a value name");
    if (!name)
      return name.takeError();
    if (values_.count(*name))
      return errorAt(at, "value " + quoteInput("%" + *name) + " is defined twice");
    if (auto e = expect("=", "after the defined name"))
      return e;
    auto value = parseDefinition();
    if (!value)
      return value.takeError();
    (*value)->setLoc(at);
    values_[*name] = *value;
    return llvm::Error::success();
  }

  llvm::Expected<Expr> parseDefinition() {
    skipSpace();
    SourceLoc at = here();
    if (consume("const ")) {
      if (auto e = expect("@", "before a constant's name"))
        return e;
      auto n = parseName("a constant name");
      if (!n)
        return n.takeError();
      if (auto e = expect(":", "before a constant's type"))
        return e;
      auto t = parseType();
      if (!t)
        return t.takeError();
      return tensorConst(*n, *t, at);
    }
    if (peek() == '(') { // a tuple
      advance();
      std::vector<Expr> fields;
      if (!consume(")")) {
        while (true) {
          auto f = parseOperand();
          if (!f)
            return f.takeError();
          fields.push_back(*f);
          if (consume(")"))
            break;
          if (auto e = expect(",", "between tuple fields"))
            return e;
        }
      }
      Tuple t = tuple(fields);
      if (auto e = typeSuffix(t))
        return e;
      return Expr(t);
    }
    if (peek() == '%') { // %value.index : type
      advance();
      size_t b = pos_;
      while (pos_ < text_.size() && isNameChar(text_[pos_]))
        ++pos_;
      llvm::StringRef ref = text_.substr(b, pos_ - b);
      auto [base, idx] = ref.rsplit('.');
      unsigned index;
      auto it = values_.find(base.str());
      if (idx.empty() || idx.getAsInteger(10, index))
        return errorAt(at, "expected '%value.index' to read a tuple field");
      if (it == values_.end())
        return errorAt(at, "use of undefined value " + quoteInput("%" + base.str()));
      auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(it->second->type().get());
      if (tt && index >= tt->size())
        return errorAt(at, "tuple field " + llvm::Twine(index) + " is out of range for " +
                               shown(it->second->type()));
      TupleGetItem g = tupleGetItem(it->second, index);
      if (auto e = typeSuffix(g))
        return e;
      return Expr(g);
    }
    return parseCall();
  }

  llvm::Error typeSuffix(const Expr &e) {
    if (auto err = expect(":", "before the type of a definition"))
      return err;
    auto t = parseType();
    if (!t)
      return t.takeError();
    e->setType(*t);
    return llvm::Error::success();
  }

  llvm::Expected<Expr> parseCall() {
    skipSpace();
    SourceLoc at = here();
    Expr callee;
    if (peek() == '@') {
      advance();
      auto fn = parseName("a function name");
      if (!fn)
        return fn.takeError();
      Function f = module_lookup(*fn);
      if (!f)
        return errorAt(at, "call of undefined function @" + clipInput(*fn) +
                               " (functions must be defined before they are called)");
      callee = globalVar(f->name());
    } else {
      std::string op;
      if (peek() == '"') {
        auto s = parseString();
        if (!s)
          return s.takeError();
        op = *s;
      } else {
        size_t b = pos_;
        while (pos_ < text_.size() && (isNameChar(text_[pos_]) || text_[pos_] == ':'))
          ++pos_;
        op = text_.substr(b, pos_ - b).str();
      }
      if (op.empty())
        return errorAt(at, "expected an op name, '@function', '(' or '%value'" + found());
      callee = OpRegistry::global().getOrOpaque(op)->node();
    }
    if (auto e = expect("(", "to open the arguments"))
      return e;
    std::vector<Expr> args;
    std::vector<ArgKey> keys;
    // Where each argument key and attribute was given: each is given once
    // (the last would otherwise silently win).
    std::map<std::pair<ArgRole, std::string>, SourceLoc> keyAt;
    if (!consume(")")) {
      while (true) {
        // `key=%x` or `key=@weight: type`: look ahead for `name=`.
        skipSpace();
        SourceLoc keyLoc = here();
        ArgKey key;
        size_t save = pos_;
        unsigned saveLine = line_;
        size_t saveStart = lineStart_;
        if (peek() != '%') {
          auto k = peek() == '"' || isNameChar(peek()) ? parseName("an argument name")
                                                        : llvm::Expected<std::string>(
                                                              std::string());
          if (!k)
            llvm::consumeError(k.takeError());
          else if (!k->empty() && peek() == '=') {
            advance();
            key = {ArgRole::Named, *k};
          }
          if (key.name.empty())
            pos_ = save, line_ = saveLine, lineStart_ = saveStart;
        }
        skipSpace();
        SourceLoc argAt = here();
        if (peek() == '@') {
          advance();
          auto wn = parseName("a weight name");
          if (!wn)
            return wn.takeError();
          if (auto e = expect(":", "before a weight's type"))
            return e;
          auto t = parseType();
          if (!t)
            return t.takeError();
          auto c = tensorConst(*wn, *t, argAt);
          if (!c)
            return c.takeError();
          if (key.name.empty())
            return errorAt(argAt, "a weight argument needs a key: 'key=@" + clipInput(*wn) +
                                      ": ...'");
          key.role = ArgRole::Weight;
          args.push_back(*c);
        } else {
          auto a = parseOperand();
          if (!a)
            return a.takeError();
          args.push_back(*a);
        }
        if (key.role != ArgRole::Positional) {
          auto [it, fresh] = keyAt.try_emplace({key.role, key.name}, keyLoc);
          if (!fresh)
            return errorAt(keyLoc,
                           llvm::Twine(key.role == ArgRole::Weight ? "weight" : "argument") + " " +
                               quoteInput(key.name) + " is given twice: here and at " +
                               llvm::Twine(it->second.line) + ":" + llvm::Twine(it->second.col));
        }
        keys.push_back(key);
        if (consume(")"))
          break;
        if (auto e = expect(",", "between arguments"))
          return e;
      }
    }
    Attrs attrs;
    if (consume("{")) {
      if (!consume("}")) {
        std::map<std::string, SourceLoc> attrAt;
        while (true) {
          skipSpace();
          SourceLoc at = here();
          auto k = parseName("an attribute name");
          if (!k)
            return k.takeError();
          if (auto e = expect("=", "after an attribute name"))
            return e;
          auto v = parseAttrValue();
          if (!v)
            return v.takeError();
          auto [it, fresh] = attrAt.try_emplace(*k, at);
          if (!fresh)
            return errorAt(at, "attribute " + quoteInput(*k) +
                                   " is given twice: " + clipInput(attrToString(*v)) +
                                   " here and " + clipInput(attrToString(*attrs.find(*k))) +
                                   " at " + llvm::Twine(it->second.line) + ":" +
                                   llvm::Twine(it->second.col));
          attrs.set(*k, *v);
          if (consume("}"))
            break;
          if (auto e = expect(",", "between attributes"))
            return e;
        }
      }
    }
    Call c = call(callee, args, std::move(attrs), keys);
    if (auto e = typeSuffix(c))
      return e;
    skipSpace(false);
    if (consume("name(")) {
      skipSpace();
      if (peek() != '"')
        return error("expected a quoted operator name in name(...)");
      auto s = parseString();
      if (!s)
        return s.takeError();
      if (auto e = expect(")", "to close name(...)"))
        return e;
      Type t = c->type();
      c = make<const CallNode>(c->callee(), c->args(), c->keys(), c->attrs(), *s);
      c->setType(t);
    }
    return Expr(c);
  }

  Function module_lookup(const std::string &name) {
    auto it = functions_.find(name);
    return it == functions_.end() ? Function() : it->second;
  }

public:
  /// Records each parsed function so later ones can call it.
  llvm::Expected<ModulePtr> run() {
    auto m = std::make_shared<Module>();
    m->setSourceName(name_.str());
    skipSpace();
    while (pos_ < text_.size()) {
      auto f = parseFunction();
      if (!f)
        return f.takeError();
      if (functions_.count((*f)->name()))
        return errorAt(fnLoc_, "function @" + clipInput((*f)->name()) + " is defined twice");
      functions_[(*f)->name()] = *f;
      m->add(*f);
      skipSpace();
    }
    if (!m->main())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     name_ + ": error: the module has no function @main");
    return m;
  }

private:
  llvm::StringRef text_;
  llvm::StringRef name_;
  const ZipReader *weights_;
  size_t pos_ = 0;
  unsigned line_ = 1;
  size_t lineStart_ = 0;
  unsigned depth_ = 0;
  SourceLoc fnLoc_;
  std::map<std::string, Expr> values_;
  std::map<std::string, Expr> consts_;
  std::map<std::string, Function> functions_;
};

} // namespace

llvm::Expected<ModulePtr> parseModule(llvm::StringRef text, llvm::StringRef bufferName,
                                      const ZipReader *weights) {
  return TextParser(text, bufferName, weights).run();
}

} // namespace kc
