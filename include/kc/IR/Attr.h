//===- kc/IR/Attr.h - Typed attribute values --------------------*- C++ -*-===//
///
/// \file
/// Attribute values of operators: every PNNX parameter kind (None, bool, int,
/// float, string, int/float/string lists, complex and complex lists) as one
/// small tagged value, and Attrs, a key-sorted attribute dictionary.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Support/DType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/StringRef.h"

#include <complex>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kc {

class AttrValue {
public:
  enum class Kind : uint8_t {
    None,
    Bool,
    Int,
    Float,
    String,
    IntList,
    FloatList,
    StringList,
    Complex,
    ComplexList,
  };

  AttrValue() = default; // None
  static AttrValue none() { return AttrValue(); }
  static AttrValue boolean(bool b);
  static AttrValue integer(int64_t i);
  static AttrValue real(double d);
  static AttrValue string(std::string s);
  static AttrValue intList(std::vector<int64_t> v);
  static AttrValue floatList(std::vector<double> v);
  static AttrValue stringList(std::vector<std::string> v);
  static AttrValue complex(std::complex<double> c);
  static AttrValue complexList(std::vector<std::complex<double>> v);

  Kind kind() const { return kind_; }
  bool isNone() const { return kind_ == Kind::None; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isInt() const { return kind_ == Kind::Int; }
  bool isFloat() const { return kind_ == Kind::Float; }
  bool isString() const { return kind_ == Kind::String; }
  bool isIntList() const { return kind_ == Kind::IntList; }
  bool isFloatList() const { return kind_ == Kind::FloatList; }
  bool isStringList() const { return kind_ == Kind::StringList; }
  /// An int or a float.
  bool isNumber() const { return kind_ == Kind::Int || kind_ == Kind::Float; }

  bool getBool() const { return b_; }
  /// An int; a bool as 0 or 1; a float or a one-element list as by
  /// asIntVector (others: 0).
  int64_t getInt() const;
  double getFloat() const { return d_; }
  /// An int or float as double.
  double getNumber() const { return kind_ == Kind::Int ? double(i_) : d_; }
  const std::string &getString() const { return s_; }
  llvm::ArrayRef<int64_t> getIntList() const { return ints_; }
  llvm::ArrayRef<double> getFloatList() const { return floats_; }
  llvm::ArrayRef<std::string> getStringList() const { return strings_; }
  std::complex<double> getComplex() const { return complexes_.empty() ? 0.0 : complexes_[0]; }
  llvm::ArrayRef<std::complex<double>> getComplexList() const { return complexes_; }

  /// A scalar int or a list of ints: PNNX writes `dim=1` and `dim=(1)` alike.
  /// A float that is an integer (2.0) reads as one; any other float (1.5,
  /// NaN, 1e300) is no integer: it reads truncated and saturated (NaN as
  /// 0) and is reported to the IntAttrCheck open on this thread.
  std::vector<int64_t> asIntVector() const;
  /// A scalar number or a list of numbers, as doubles.
  std::vector<double> asFloatVector() const;

  llvm::StringRef kindName() const;

  friend bool operator==(const AttrValue &a, const AttrValue &b);
  /// Consistent with ==: every NaN hashes alike, 0.0 and -0.0 differ.
  friend llvm::hash_code hash_value(const AttrValue &v);
  friend bool operator!=(const AttrValue &a, const AttrValue &b) { return !(a == b); }

private:
  Kind kind_ = Kind::None;
  bool b_ = false;
  int64_t i_ = 0;
  double d_ = 0;
  std::string s_;
  std::vector<int64_t> ints_;
  std::vector<double> floats_;
  std::vector<std::string> strings_;
  std::vector<std::complex<double>> complexes_;
};

/// Catches attribute values read as integers that are none. Type inference
/// and the kernel builder open one around each op's type rule and kernel
/// factory, which read attributes through the getters above without an
/// error path of their own, and refuse the call, naming the op and the
/// attribute, when a read hit a fraction, NaN, an infinity or a value
/// beyond int64 (PyTorch would have refused the float). Checks nest; each
/// thread has its own.
class IntAttrCheck {
public:
  IntAttrCheck();
  ~IntAttrCheck();
  IntAttrCheck(const IntAttrCheck &) = delete;
  IntAttrCheck &operator=(const IntAttrCheck &) = delete;

  /// The message for the first non-integer read while this check was the
  /// innermost, naming its key in `attrs` when it is one of them
  /// ("attribute 'dim' must be an integer, got 1.5"); "" when none was.
  std::string failure(const class Attrs &attrs) const;

  /// Called by the getters: `v` was read as an integer and is none.
  static void report(const AttrValue &v);

private:
  IntAttrCheck *outer_;
  const AttrValue *bad_ = nullptr;
  std::string badText_;
};

/// Whether the scalar `v` (a bool, int or float) is exactly a value of
/// `dtype`: for integer types an integer within the type's range (no NaN,
/// infinity or fraction), for bool 0, 1, true or false, for floating types
/// any number. Literals that do not fit are refused rather than converted.
bool literalFits(const AttrValue &v, DType dtype);

/// kc's textual form of a value: `none`, `true`, `3`, `1e-05`, `"zeros"`,
/// `[1,2]`, `[1.5,2.0]`, `["a","b"]`, `(1.0+2.0j)`. Floats print in the shortest
/// form that reads back to the same double, always with a `.` or exponent.
std::string attrToString(const AttrValue &v);
/// A string in kc text: in double quotes, with `\"`, `\\`, `\n` and `\xHH`
/// (two hex digits) for the other control bytes; the parser reads it back
/// to the same bytes, NUL included.
std::string quoteString(llvm::StringRef s);
/// Shortest round-trip text of a double, with `.0` appended when it would
/// otherwise read as an integer; `inf`, `-inf`, `nan`.
std::string formatDouble(double d);

/// An attribute dictionary, kept sorted by key (byte order, as PNNX writes).
class Attrs {
public:
  using Entry = std::pair<std::string, AttrValue>;

  Attrs() = default;
  Attrs(std::initializer_list<Entry> init);

  /// Sets (or replaces) `key`.
  void set(llvm::StringRef key, AttrValue value);
  bool erase(llvm::StringRef key);
  const AttrValue *find(llvm::StringRef key) const;
  bool has(llvm::StringRef key) const { return find(key) != nullptr; }

  /// Typed getters with a fallback for absent (or None) values.
  int64_t getInt(llvm::StringRef key, int64_t dflt) const;
  double getFloat(llvm::StringRef key, double dflt) const;
  bool getBool(llvm::StringRef key, bool dflt) const;
  std::string getString(llvm::StringRef key, llvm::StringRef dflt) const;
  std::vector<int64_t> getInts(llvm::StringRef key, std::vector<int64_t> dflt = {}) const;
  std::vector<double> getFloats(llvm::StringRef key, std::vector<double> dflt = {}) const;

  llvm::ArrayRef<Entry> entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  friend bool operator==(const Attrs &a, const Attrs &b) { return a.entries_ == b.entries_; }
  friend bool operator!=(const Attrs &a, const Attrs &b) { return !(a == b); }

private:
  std::vector<Entry> entries_;
};

} // namespace kc
