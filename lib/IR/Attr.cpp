//===- Attr.cpp - Typed attribute values ----------------------------------===//
#include "kc/IR/Attr.h"
#include "kc/Support/FloatToInt.h"
#include "kc/Support/Quote.h"

#include <optional>

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace kc {

AttrValue AttrValue::boolean(bool b) {
  AttrValue v;
  v.kind_ = Kind::Bool;
  v.b_ = b;
  return v;
}
AttrValue AttrValue::integer(int64_t i) {
  AttrValue v;
  v.kind_ = Kind::Int;
  v.i_ = i;
  return v;
}
AttrValue AttrValue::real(double d) {
  AttrValue v;
  v.kind_ = Kind::Float;
  v.d_ = d;
  return v;
}
AttrValue AttrValue::string(std::string s) {
  AttrValue v;
  v.kind_ = Kind::String;
  v.s_ = std::move(s);
  return v;
}
AttrValue AttrValue::intList(std::vector<int64_t> l) {
  AttrValue v;
  v.kind_ = Kind::IntList;
  v.ints_ = std::move(l);
  return v;
}
AttrValue AttrValue::floatList(std::vector<double> l) {
  AttrValue v;
  v.kind_ = Kind::FloatList;
  v.floats_ = std::move(l);
  return v;
}
AttrValue AttrValue::stringList(std::vector<std::string> l) {
  AttrValue v;
  v.kind_ = Kind::StringList;
  v.strings_ = std::move(l);
  return v;
}
AttrValue AttrValue::complex(std::complex<double> c) {
  AttrValue v;
  v.kind_ = Kind::Complex;
  v.complexes_ = {c};
  return v;
}
AttrValue AttrValue::complexList(std::vector<std::complex<double>> l) {
  AttrValue v;
  v.kind_ = Kind::ComplexList;
  v.complexes_ = std::move(l);
  return v;
}

//===----------------------------------------------------------------------===//
// Integers read from floats
//===----------------------------------------------------------------------===//

namespace {
thread_local IntAttrCheck *innermostCheck = nullptr;
} // namespace

IntAttrCheck::IntAttrCheck() : outer_(innermostCheck) { innermostCheck = this; }
IntAttrCheck::~IntAttrCheck() { innermostCheck = outer_; }

void IntAttrCheck::report(const AttrValue &v) {
  if (innermostCheck && !innermostCheck->bad_) {
    innermostCheck->bad_ = &v;
    innermostCheck->badText_ = attrToString(v);
  }
}

std::string IntAttrCheck::failure(const Attrs &attrs) const {
  if (!bad_)
    return "";
  std::string got = clipInput(badText_);
  for (const auto &[key, value] : attrs.entries())
    if (&value == bad_)
      return "attribute " + quoteInput(key) + " must be an integer, got " + got;
  return "an attribute that must be an integer is " + got;
}

/// d as an integer attribute: exact, or reported and saturated.
static int64_t intOf(double d, const AttrValue &owner) {
  if (std::optional<int64_t> i = exactInt64(d))
    return *i;
  IntAttrCheck::report(owner);
  return saturatingInt64(d);
}

std::vector<int64_t> AttrValue::asIntVector() const {
  switch (kind_) {
  case Kind::Int:
    return {i_};
  case Kind::Bool:
    return {int64_t(b_)};
  case Kind::Float:
    return {intOf(d_, *this)};
  case Kind::IntList:
    return ints_;
  case Kind::FloatList: {
    std::vector<int64_t> r;
    for (double d : floats_)
      r.push_back(intOf(d, *this));
    return r;
  }
  default:
    return {};
  }
}

int64_t AttrValue::getInt() const {
  switch (kind_) {
  case Kind::Int:
    return i_;
  case Kind::Bool:
    return int64_t(b_);
  case Kind::Float:
  case Kind::IntList:
  case Kind::FloatList: {
    std::vector<int64_t> v = asIntVector();
    return v.empty() ? 0 : v[0];
  }
  default:
    return 0;
  }
}

std::vector<double> AttrValue::asFloatVector() const {
  switch (kind_) {
  case Kind::Int:
    return {double(i_)};
  case Kind::Float:
    return {d_};
  case Kind::IntList:
    return std::vector<double>(ints_.begin(), ints_.end());
  case Kind::FloatList:
    return floats_;
  default:
    return {};
  }
}

llvm::StringRef AttrValue::kindName() const {
  switch (kind_) {
  case Kind::None: return "none";
  case Kind::Bool: return "bool";
  case Kind::Int: return "int";
  case Kind::Float: return "float";
  case Kind::String: return "string";
  case Kind::IntList: return "int list";
  case Kind::FloatList: return "float list";
  case Kind::StringList: return "string list";
  case Kind::Complex: return "complex";
  case Kind::ComplexList: return "complex list";
  }
  return "?";
}

static bool sameDouble(double a, double b) {
  // Bitwise-style equality: NaN equals NaN, so attribute dictionaries compare
  // structurally (a printed-and-parsed NaN is the same attribute).
  return a == b ? std::signbit(a) == std::signbit(b) : (std::isnan(a) && std::isnan(b));
}

bool operator==(const AttrValue &a, const AttrValue &b) {
  if (a.kind_ != b.kind_)
    return false;
  switch (a.kind_) {
  case AttrValue::Kind::None: return true;
  case AttrValue::Kind::Bool: return a.b_ == b.b_;
  case AttrValue::Kind::Int: return a.i_ == b.i_;
  case AttrValue::Kind::Float: return sameDouble(a.d_, b.d_);
  case AttrValue::Kind::String: return a.s_ == b.s_;
  case AttrValue::Kind::IntList: return a.ints_ == b.ints_;
  case AttrValue::Kind::FloatList:
    return a.floats_.size() == b.floats_.size() &&
           std::equal(a.floats_.begin(), a.floats_.end(), b.floats_.begin(), sameDouble);
  case AttrValue::Kind::StringList: return a.strings_ == b.strings_;
  case AttrValue::Kind::Complex:
  case AttrValue::Kind::ComplexList:
    return a.complexes_.size() == b.complexes_.size() &&
           std::equal(a.complexes_.begin(), a.complexes_.end(), b.complexes_.begin(),
                      [](std::complex<double> x, std::complex<double> y) {
                        return sameDouble(x.real(), y.real()) && sameDouble(x.imag(), y.imag());
                      });
  }
  return false;
}

static llvm::hash_code hashDouble(double d) {
  if (std::isnan(d))
    return llvm::hash_value(uint64_t(0x7ff8000000000000));
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return llvm::hash_value(bits);
}

llvm::hash_code hash_value(const AttrValue &v) {
  llvm::hash_code h = llvm::hash_value(int(v.kind_));
  switch (v.kind_) {
  case AttrValue::Kind::None: return h;
  case AttrValue::Kind::Bool: return llvm::hash_combine(h, v.b_);
  case AttrValue::Kind::Int: return llvm::hash_combine(h, v.i_);
  case AttrValue::Kind::Float: return llvm::hash_combine(h, hashDouble(v.d_));
  case AttrValue::Kind::String: return llvm::hash_combine(h, v.s_);
  case AttrValue::Kind::IntList:
    return llvm::hash_combine(h, llvm::hash_combine_range(v.ints_.begin(), v.ints_.end()));
  case AttrValue::Kind::FloatList:
    for (double d : v.floats_)
      h = llvm::hash_combine(h, hashDouble(d));
    return h;
  case AttrValue::Kind::StringList:
    return llvm::hash_combine(h, llvm::hash_combine_range(v.strings_.begin(), v.strings_.end()));
  case AttrValue::Kind::Complex:
  case AttrValue::Kind::ComplexList:
    for (std::complex<double> c : v.complexes_)
      h = llvm::hash_combine(h, hashDouble(c.real()), hashDouble(c.imag()));
    return h;
  }
  return h;
}

bool literalFits(const AttrValue &v, DType dtype) {
  if (!v.isBool() && !v.isNumber())
    return false;
  if (isFloating(dtype) || v.isBool())
    return isFloating(dtype) || isInteger(dtype) || dtype == DType::Bool;
  std::optional<int64_t> i = v.isInt() ? std::optional<int64_t>(v.getInt()) : exactInt64(v.getFloat());
  if (!i)
    return false;
  switch (dtype) {
  case DType::I64: return true;
  case DType::I32: return *i >= INT32_MIN && *i <= INT32_MAX;
  case DType::I16: return *i >= INT16_MIN && *i <= INT16_MAX;
  case DType::I8: return *i >= INT8_MIN && *i <= INT8_MAX;
  case DType::U8: return *i >= 0 && *i <= UINT8_MAX;
  case DType::Bool: return *i == 0 || *i == 1;
  default: return false;
  }
}

std::string formatDouble(double d) {
  if (std::isnan(d))
    return std::signbit(d) ? "-nan" : "nan";
  if (std::isinf(d))
    return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

std::string quoteString(llvm::StringRef s) {
  static const char hex[] = "0123456789abcdef";
  std::string r = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      r += '\\';
      r += c;
    } else if (c == '\n') {
      r += "\\n";
    } else if (u < 0x20 || u == 0x7f) {
      // Always two hex digits: the parser reads exactly two.
      r += "\\x";
      r += hex[u >> 4];
      r += hex[u & 15];
    } else {
      r += c;
    }
  }
  return r + "\"";
}

static std::string complexToString(std::complex<double> c) {
  return "(" + formatDouble(c.real()) + (std::signbit(c.imag()) ? "" : "+") +
         formatDouble(c.imag()) + "j)";
}

std::string attrToString(const AttrValue &v) {
  switch (v.kind()) {
  case AttrValue::Kind::None: return "none";
  case AttrValue::Kind::Bool: return v.getBool() ? "true" : "false";
  case AttrValue::Kind::Int: return std::to_string(v.getInt());
  case AttrValue::Kind::Float: return formatDouble(v.getFloat());
  case AttrValue::Kind::String: return quoteString(v.getString());
  case AttrValue::Kind::Complex: return complexToString(v.getComplex());
  default: break;
  }
  std::string s = "[";
  auto sep = [&](size_t i) {
    if (i)
      s += ',';
  };
  switch (v.kind()) {
  case AttrValue::Kind::IntList:
    for (size_t i = 0; i < v.getIntList().size(); ++i)
      sep(i), s += std::to_string(v.getIntList()[i]);
    break;
  case AttrValue::Kind::FloatList:
    for (size_t i = 0; i < v.getFloatList().size(); ++i)
      sep(i), s += formatDouble(v.getFloatList()[i]);
    break;
  case AttrValue::Kind::StringList:
    for (size_t i = 0; i < v.getStringList().size(); ++i)
      sep(i), s += quoteString(v.getStringList()[i]);
    break;
  case AttrValue::Kind::ComplexList:
    for (size_t i = 0; i < v.getComplexList().size(); ++i)
      sep(i), s += complexToString(v.getComplexList()[i]);
    break;
  default:
    break;
  }
  return s + "]";
}

//===----------------------------------------------------------------------===//

Attrs::Attrs(std::initializer_list<Entry> init) {
  for (auto &e : init)
    set(e.first, e.second);
}

static auto lowerBound(std::vector<Attrs::Entry> &v, llvm::StringRef key) {
  return std::lower_bound(v.begin(), v.end(), key,
                          [](const Attrs::Entry &e, llvm::StringRef k) { return e.first < k; });
}

void Attrs::set(llvm::StringRef key, AttrValue value) {
  auto it = lowerBound(entries_, key);
  if (it != entries_.end() && it->first == key)
    it->second = std::move(value);
  else
    entries_.insert(it, {key.str(), std::move(value)});
}

bool Attrs::erase(llvm::StringRef key) {
  auto it = lowerBound(entries_, key);
  if (it == entries_.end() || it->first != key)
    return false;
  entries_.erase(it);
  return true;
}

const AttrValue *Attrs::find(llvm::StringRef key) const {
  auto it = lowerBound(const_cast<std::vector<Entry> &>(entries_), key);
  if (it == entries_.end() || it->first != key)
    return nullptr;
  return &it->second;
}

int64_t Attrs::getInt(llvm::StringRef key, int64_t dflt) const {
  const AttrValue *v = find(key);
  if (!v || v->isNone())
    return dflt;
  auto l = v->asIntVector();
  return l.empty() ? dflt : l[0];
}

double Attrs::getFloat(llvm::StringRef key, double dflt) const {
  const AttrValue *v = find(key);
  if (!v || !v->isNumber())
    return dflt;
  return v->getNumber();
}

bool Attrs::getBool(llvm::StringRef key, bool dflt) const {
  const AttrValue *v = find(key);
  if (!v)
    return dflt;
  if (v->isBool())
    return v->getBool();
  if (v->isInt())
    return v->getInt() != 0;
  return dflt;
}

std::string Attrs::getString(llvm::StringRef key, llvm::StringRef dflt) const {
  const AttrValue *v = find(key);
  if (!v || !v->isString())
    return dflt.str();
  return v->getString();
}

std::vector<int64_t> Attrs::getInts(llvm::StringRef key, std::vector<int64_t> dflt) const {
  const AttrValue *v = find(key);
  if (!v || v->isNone())
    return dflt;
  return v->asIntVector();
}

std::vector<double> Attrs::getFloats(llvm::StringRef key, std::vector<double> dflt) const {
  const AttrValue *v = find(key);
  if (!v || v->isNone())
    return dflt;
  return v->asFloatVector();
}

} // namespace kc
