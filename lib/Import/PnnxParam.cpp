//===- PnnxParam.cpp - The .pnnx.param text format ------------------------===//
#include "kc/Import/PnnxParam.h"
#include "kc/Support/NumberText.h"
#include "kc/Support/Quote.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <cstdlib>

namespace kc {

std::string ShapeDecl::text() const {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + (dims[i] < 0 ? std::string("?") : std::to_string(dims[i]));
  return s + ")" + dtypeName(dtype).str();
}

const AttrValue *ParamOp::param(llvm::StringRef key) const {
  for (auto &p : params)
    if (p.first == key)
      return &p.second;
  return nullptr;
}

namespace {

struct Token {
  llvm::StringRef text;
  unsigned col; // 1-based
};

llvm::Error errorAt(llvm::StringRef file, unsigned line, unsigned col, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 file + ":" + llvm::Twine(line) + ":" + llvm::Twine(col) +
                                     ": error: " + msg);
}

/// An integer that int64 cannot hold must not turn into a float (it would
/// print as 1e+23 and never read back as what was written).
llvm::Error checkIntegerRange(llvm::StringRef s) {
  if (isIntegerText(s) && !parseIntText(s))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "integer " + quoteInput(s) + " does not fit in int64");
  return llvm::Error::success();
}

} // namespace

llvm::Expected<AttrValue> parseParamValue(llvm::StringRef v) {
  if (v == "None" || v == "()" || v == "[]")
    return AttrValue::none();
  if (v == "True" || v == "False")
    return AttrValue::boolean(v == "True");
  if (v.size() >= 2 && (v.front() == '(' || v.front() == '[') &&
      (v.back() == ')' || v.back() == ']')) {
    llvm::SmallVector<llvm::StringRef, 8> elems;
    v.drop_front().drop_back().split(elems, ',');
    bool allInt = true, allNum = true, allComplex = true;
    for (llvm::StringRef e : elems) {
      if (auto err = checkIntegerRange(e))
        return std::move(err);
      bool isInt = parseIntText(e).has_value(), isNum = isInt || parseRealText(e).has_value();
      allInt &= isInt;
      allNum &= isNum;
      allComplex &= !isNum && parseComplexText(e).has_value();
    }
    if (allInt) {
      std::vector<int64_t> l;
      for (llvm::StringRef e : elems)
        l.push_back(*parseIntText(e));
      return AttrValue::intList(std::move(l));
    }
    if (allNum) {
      std::vector<double> l;
      for (llvm::StringRef e : elems)
        l.push_back(parseIntText(e) ? double(*parseIntText(e)) : *parseRealText(e));
      return AttrValue::floatList(std::move(l));
    }
    if (allComplex) {
      std::vector<std::complex<double>> l;
      for (llvm::StringRef e : elems)
        l.push_back(*parseComplexText(e));
      return AttrValue::complexList(std::move(l));
    }
    std::vector<std::string> l;
    for (llvm::StringRef e : elems)
      l.push_back(e.str());
    return AttrValue::stringList(std::move(l));
  }
  if (auto err = checkIntegerRange(v))
    return std::move(err);
  if (auto i = parseIntText(v))
    return AttrValue::integer(*i);
  if (auto d = parseRealText(v))
    return AttrValue::real(*d);
  if (auto c = parseComplexText(v))
    return AttrValue::complex(*c);
  return AttrValue::string(v.str());
}

llvm::Expected<ShapeDecl> parseShapeDecl(llvm::StringRef text, bool allowDynamic) {
  auto fail = [&](const llvm::Twine &m) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), m);
  };
  if (!text.startswith("("))
    return fail("expected '(dims)dtype', got " + quoteInput(text));
  size_t close = text.find(')');
  if (close == llvm::StringRef::npos)
    return fail("missing ')' in shape " + quoteInput(text));
  ShapeDecl d;
  llvm::StringRef dimsText = text.slice(1, close), suffix = text.drop_front(close + 1);
  auto dt = parseDType(suffix);
  if (!dt)
    return fail("unknown dtype " + quoteInput(suffix) + " in " + quoteInput(text) +
                " (expected f32, f64, f16, i32, i64, i16, i8, u8, bool, c64, c128, c32, bf16 or "
                "null)");
  d.dtype = *dt;
  if (!dimsText.empty()) {
    llvm::SmallVector<llvm::StringRef, 6> parts;
    dimsText.split(parts, ',');
    if (parts.size() > 64)
      return fail("shape " + quoteInput(text) + " has more than 64 dims");
    for (llvm::StringRef p : parts) {
      if (p == "?") {
        if (!allowDynamic)
          return fail("dynamic dim '?' is not allowed in a weight shape " + quoteInput(text));
        d.dims.push_back(-1);
        continue;
      }
      int64_t v;
      if (p.getAsInteger(10, v) || v < 0)
        return fail("bad dim " + quoteInput(p) + " in shape " + quoteInput(text));
      d.dims.push_back(v);
    }
  }
  return d;
}

llvm::Expected<ParamFile> parseParamFile(llvm::StringRef text, llvm::StringRef fileName,
                                         const ParamLimits &limits) {
  ParamFile pf;
  unsigned lineNo = 0;
  size_t pos = 0;
  // Next non-blank line, tokenized on whitespace (never by column).
  auto nextLine = [&](llvm::SmallVectorImpl<Token> &toks) -> llvm::Expected<bool> {
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      if (end == llvm::StringRef::npos)
        end = text.size();
      llvm::StringRef line = text.slice(pos, end);
      pos = end + 1;
      ++lineNo;
      if (line.size() > limits.maxLineBytes)
        return errorAt(fileName, lineNo, 1,
                       "line is " + llvm::Twine(line.size()) + " bytes, more than the limit of " +
                           llvm::Twine(limits.maxLineBytes));
      toks.clear();
      size_t i = 0;
      while (i < line.size()) {
        while (i < line.size() && llvm::isSpace(line[i]))
          ++i;
        size_t s = i;
        while (i < line.size() && !llvm::isSpace(line[i]))
          ++i;
        if (i > s)
          toks.push_back({line.slice(s, i), unsigned(s + 1)});
      }
      if (!toks.empty())
        return true;
    }
    return false;
  };

  llvm::SmallVector<Token, 32> toks;
  auto have = nextLine(toks);
  if (!have)
    return have.takeError();
  if (!*have || toks.size() != 1 || toks[0].text != "7767517")
    return errorAt(fileName, std::max(lineNo, 1u), 1,
                   "expected the PNNX magic number 7767517 on the first line");
  have = nextLine(toks);
  if (!have)
    return have.takeError();
  if (!*have || toks.size() != 2 || toks[0].text.getAsInteger(10, pf.declaredOps) ||
      toks[1].text.getAsInteger(10, pf.declaredOperands) || pf.declaredOps < 0 ||
      pf.declaredOperands < 0)
    return errorAt(fileName, lineNo, 1, "expected '<operator count> <operand count>'");
  if (size_t(pf.declaredOps) > limits.maxOps)
    return errorAt(fileName, lineNo, 1,
                   "operator count " + llvm::Twine(pf.declaredOps) + " exceeds the limit of " +
                       llvm::Twine(limits.maxOps));

  for (int64_t k = 0; k < pf.declaredOps; ++k) {
    have = nextLine(toks);
    if (!have)
      return have.takeError();
    if (!*have)
      return errorAt(fileName, lineNo, 1,
                     "the header declares " + llvm::Twine(pf.declaredOps) +
                         " operators but the file ends after " + llvm::Twine(k));
    ParamOp op;
    op.line = lineNo;
    if (toks.size() < 4)
      return errorAt(fileName, lineNo, toks[0].col,
                     "expected '<type> <name> <input count> <output count> ...'");
    op.type = toks[0].text.str();
    op.name = toks[1].text.str();
    uint64_t nin, nout;
    if (toks[2].text.getAsInteger(10, nin))
      return errorAt(fileName, lineNo, toks[2].col,
                     "expected an input count, got " + quoteInput(toks[2].text));
    if (toks[3].text.getAsInteger(10, nout))
      return errorAt(fileName, lineNo, toks[3].col,
                     "expected an output count, got " + quoteInput(toks[3].text));
    if (nin > toks.size() || nout > toks.size() || 4 + nin + nout > toks.size())
      return errorAt(fileName, lineNo, toks[2].col,
                     "the line declares " + llvm::Twine(nin) + " inputs and " +
                         llvm::Twine(nout) + " outputs but has only " +
                         llvm::Twine(toks.size() - 4) + " more tokens");
    size_t t = 4;
    for (uint64_t i = 0; i < nin; ++i, ++t) {
      op.inputs.push_back(toks[t].text.str());
      op.inputCols.push_back(toks[t].col);
    }
    for (uint64_t i = 0; i < nout; ++i, ++t) {
      op.outputs.push_back(toks[t].text.str());
      op.outputCols.push_back(toks[t].col);
    }
    op.inputNames.assign(nin, "");
    size_t lastNamed = 0;
    // The operands on this line, built at the first annotation: a line may
    // carry many thousands of both.
    llvm::StringSet<> onLine;
    // The token of each parameter, weight and argument name: each is given
    // once (pnnx keeps them in maps, where the last would silently win).
    llvm::StringMap<size_t> itemAt;
    auto given = [&](llvm::StringRef key) -> llvm::Error {
      auto [it, fresh] = itemAt.try_emplace(key, t);
      if (fresh)
        return llvm::Error::success();
      const Token &first = toks[it->second];
      const char *what = key.front() == '@'   ? "weight"
                         : key.front() == '$' ? "argument name"
                                              : "parameter";
      return errorAt(fileName, lineNo, toks[t].col,
                     llvm::Twine(what) + " " + quoteInput(key) + " is given twice: " +
                         quoteInput(toks[t].text) + " here and " + quoteInput(first.text) + " at " +
                         llvm::Twine(lineNo) + ":" + llvm::Twine(first.col));
    };
    for (; t < toks.size(); ++t) {
      llvm::StringRef tok = toks[t].text;
      size_t eq = tok.find('=');
      if (eq == llvm::StringRef::npos || eq == 0)
        return errorAt(fileName, lineNo, toks[t].col, "expected key=value, got " + quoteInput(tok));
      llvm::StringRef key = tok.take_front(eq), value = tok.drop_front(eq + 1);
      unsigned vcol = toks[t].col + eq + 1;
      // A bare sigil would make an unnamed weight, operand or argument, which
      // no later reader (nor the kc text printer) can refer to.
      if (key.size() == 1 && llvm::StringRef("@#$").contains(key.front())) {
        const char *what = key == "@" ? "a weight" : key == "#" ? "an operand" : "an argument";
        return errorAt(fileName, lineNo, toks[t].col,
                       "expected " + llvm::Twine(what) + " name after '" + key + "', got " +
                           quoteInput(tok));
      }
      if (key.front() != '#')
        if (auto e = given(key))
          return std::move(e);
      switch (key.front()) {
      case '@': {
        auto d = parseShapeDecl(value, /*allowDynamic=*/false);
        if (!d)
          return errorAt(fileName, lineNo, vcol,
                         "weight " + quoteInput(key.drop_front()) + ": " +
                             llvm::toString(d.takeError()));
        op.weights.push_back({key.drop_front().str(), *d});
        break;
      }
      case '$': {
        // Give the name to the next input (after the previous named one)
        // holding that operand: the writer emits them in input order.
        bool found = false;
        for (size_t i = lastNamed; i < op.inputs.size() && !found; ++i)
          if (op.inputs[i] == value && op.inputNames[i].empty()) {
            op.inputNames[i] = key.drop_front().str();
            lastNamed = i + 1;
            found = true;
          }
        if (!found)
          return errorAt(fileName, lineNo, toks[t].col,
                         "argument name " + quoteInput(key) + " refers to operand " +
                             quoteInput(value) + ", which is not an input of this operator");
        break;
      }
      case '#': {
        llvm::StringRef operand = key.drop_front();
        if (onLine.empty()) {
          onLine.insert(op.inputs.begin(), op.inputs.end());
          onLine.insert(op.outputs.begin(), op.outputs.end());
        }
        if (!onLine.count(operand))
          return errorAt(fileName, lineNo, toks[t].col,
                         "annotation " + quoteInput(key) +
                             " names an operand that is not on this line");
        auto d = parseShapeDecl(value, /*allowDynamic=*/true);
        if (!d)
          return errorAt(fileName, lineNo, vcol,
                         "operand " + quoteInput(operand) + ": " + llvm::toString(d.takeError()));
        op.annotations.push_back({operand.str(), *d, toks[t].col});
        break;
      }
      default:
        // `expr` holds whole expressions: never parse it as a list.
        if (key == "expr") {
          op.params.push_back({key.str(), AttrValue::string(value.str())});
          break;
        }
        auto v = parseParamValue(value);
        if (!v)
          return errorAt(fileName, lineNo, vcol,
                         "parameter " + quoteInput(key) + ": " + llvm::toString(v.takeError()));
        op.params.push_back({key.str(), std::move(*v)});
        break;
      }
    }
    pf.ops.push_back(std::move(op));
  }
  return pf;
}

} // namespace kc
