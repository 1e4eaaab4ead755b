//===- ExpressionParser.cpp - pnnx.Expression to IR -----------------------===//
#include "kc/Import/ExpressionParser.h"
#include "kc/IR/ExprFunctions.h"
#include "kc/Import/PnnxParam.h"
#include "kc/Support/Quote.h"

#include "llvm/ADT/StringExtras.h"

namespace kc {

int expressionArity(llvm::StringRef name) {
  if (const ExprFunction *f = findExprFunction(name))
    return f->arity;
  return name == "size" ? -1 : 0;
}

namespace {

class Parser {
public:
  Parser(llvm::StringRef text, llvm::ArrayRef<Var> params, const ExpressionLimits &limits)
      : text_(text), params_(params), limits_(limits) {}

  llvm::Expected<Expr> parse() {
    // Current pnnx writes `expm1(@0)` as `expm1,@0`: read it back as a call.
    auto [head, rest] = text_.split(',');
    if (!rest.empty() && expressionArity(head) == 1 && rest.startswith("@") &&
        rest.find_first_of("(),[]") == llvm::StringRef::npos) {
      Parser inner(rest, params_, limits_);
      auto arg = inner.parse();
      if (!arg)
        return arg.takeError();
      return Expr(call(head, {*arg}));
    }
    auto e = parseItem(0);
    if (!e)
      return e.takeError();
    if (pos_ != text_.size())
      return error("unexpected " + quoteInput(text_.substr(pos_, 1)) +
                   " after the end of the expression");
    return e;
  }

private:
  llvm::Error error(const llvm::Twine &msg) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "expression column " + llvm::Twine(pos_ + 1) + ": " + msg);
  }

  bool peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  /// A word: everything up to the next structural character.
  llvm::StringRef word() {
    size_t s = pos_;
    while (pos_ < text_.size() && !llvm::StringRef("(),[]").contains(text_[pos_]))
      ++pos_;
    return text_.slice(s, pos_);
  }

  llvm::Expected<Expr> parseItem(unsigned depth) {
    if (depth > limits_.maxDepth)
      return error("expression nested deeper than " + llvm::Twine(limits_.maxDepth) + " levels");
    if (peek('['))
      return parseList(depth);
    return parseTerm(depth);
  }

  llvm::Expected<Expr> parseList(unsigned depth) {
    ++pos_; // '['
    llvm::SmallVector<Expr, 4> items;
    if (!peek(']')) {
      while (true) {
        auto e = parseItem(depth + 1);
        if (!e)
          return e.takeError();
        items.push_back(*e);
        if (peek(',')) {
          ++pos_;
          continue;
        }
        break;
      }
    }
    if (!peek(']'))
      return error("expected ',' or ']' in a list");
    ++pos_;
    return Expr(call("list", items));
  }

  llvm::Expected<Expr> parseTerm(unsigned depth) {
    size_t start = pos_;
    llvm::StringRef w = word();
    if (w.empty())
      return error(pos_ < text_.size() ? "unexpected " + quoteInput(text_.substr(pos_, 1))
                                       : llvm::Twine("unexpected end of expression"));
    if (peek('('))
      return parseCall(w, start, depth);
    if (w.startswith("@")) {
      unsigned idx;
      if (w.drop_front().getAsInteger(10, idx)) {
        pos_ = start;
        return error("bad operand reference " + quoteInput(w));
      }
      if (idx >= params_.size()) {
        pos_ = start;
        return error("operand @" + llvm::Twine(idx) + " is out of range: the operator has " +
                     llvm::Twine(params_.size()) + " input(s)");
      }
      return Expr(params_[idx]);
    }
    return literal(w);
  }

  llvm::Expected<Expr> parseCall(llvm::StringRef name, size_t start, unsigned depth) {
    int arity = expressionArity(name);
    if (arity == 0) {
      pos_ = start;
      return error("unknown function " + quoteInput(name));
    }
    ++pos_; // '('
    llvm::SmallVector<Expr, 2> args;
    while (true) {
      auto e = parseItem(depth + 1);
      if (!e)
        return e.takeError();
      args.push_back(*e);
      if (peek(',')) {
        ++pos_;
        continue;
      }
      break;
    }
    if (!peek(')'))
      return error(pos_ < text_.size() ? "expected ',' or ')' in the arguments of " + quoteInput(name)
                                       : "missing ')' for " + quoteInput(name));
    ++pos_;
    bool ok = arity > 0 ? int(args.size()) == arity : (args.size() == 1 || args.size() == 2);
    if (!ok) {
      pos_ = start;
      return error(quoteInput(name) + " takes " +
                   (arity > 0 ? llvm::Twine(arity) : llvm::Twine("1 or 2")) +
                   " argument(s), got " + llvm::Twine(args.size()));
    }
    return Expr(call(name, args));
  }

  llvm::Expected<Expr> literal(llvm::StringRef w) {
    auto parsed = parseParamValue(w);
    if (!parsed) {
      pos_ -= w.size(); // point at the literal
      return error(llvm::toString(parsed.takeError()));
    }
    AttrValue v = std::move(*parsed);
    switch (v.kind()) {
    case AttrValue::Kind::Int:
      return Expr(intConstant(v.getInt()));
    case AttrValue::Kind::Float:
      return Expr(floatConstant(v.getFloat()));
    case AttrValue::Kind::Bool:
      return Expr(scalarConstant(v, tensorType(DType::Bool, {})));
    case AttrValue::Kind::Complex:
      return Expr(scalarConstant(v, tensorType(DType::C64, {})));
    case AttrValue::Kind::None:
      return Expr(scalarConstant(v, nullptr));
    default:
      // A bare word (a rounding mode, a dtype name): a string literal.
      return Expr(scalarConstant(AttrValue::string(w.str()), nullptr));
    }
  }

  llvm::StringRef text_;
  llvm::ArrayRef<Var> params_;
  const ExpressionLimits &limits_;
  size_t pos_ = 0;
};

} // namespace

llvm::Expected<Expr> parseExpression(llvm::StringRef text, llvm::ArrayRef<Var> params,
                                     const ExpressionLimits &limits) {
  if (text.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "empty expression");
  return Parser(text, params, limits).parse();
}

} // namespace kc
