//===- ScalarEval.cpp - Evaluate expression ops on scalars ----------------===//
#include "kc/IR/ScalarEval.h"
#include "kc/IR/ExprFunctions.h"
#include "kc/Support/FloatToInt.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

namespace kc {

using IntResult = std::optional<AttrValue>;

// x + y, x - y and x * y, or nullopt when the exact result does not fit in
// int64: such operations are left to the runtime instead of being folded.
static IntResult intAdd(int64_t x, int64_t y) {
  int64_t r;
  return llvm::AddOverflow(x, y, r) ? IntResult() : AttrValue::integer(r);
}
static IntResult intSub(int64_t x, int64_t y) {
  int64_t r;
  return llvm::SubOverflow(x, y, r) ? IntResult() : AttrValue::integer(r);
}
static IntResult intMul(int64_t x, int64_t y) {
  int64_t r;
  return llvm::MulOverflow(x, y, r) ? IntResult() : AttrValue::integer(r);
}

/// Python's a // b; b is neither 0 nor -1.
static int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// x ** y for y >= 0, or nullopt when it does not fit in int64.
static IntResult intPow(int64_t x, int64_t y) {
  if (x == 0 || x == 1)
    return AttrValue::integer(y == 0 ? 1 : x);
  if (x == -1)
    return AttrValue::integer(y % 2 ? -1 : 1);
  // |x| >= 2: 2 ** 63 already overflows.
  if (y >= 63)
    return std::nullopt;
  int64_t r = 1;
  for (int64_t i = 0; i < y; ++i)
    if (llvm::MulOverflow(r, x, r))
      return std::nullopt;
  return AttrValue::integer(r);
}

/// v rounded by `round` as an int64, or nullopt when v is NaN, infinite or
/// outside int64's range.
template <typename F> static IntResult roundToInt(double v, F round) {
  if (auto r = truncToInt64(round(v)))
    return AttrValue::integer(*r);
  return std::nullopt;
}

/// torch.<dtype>(x) of a number, where the value is kept exactly: floats to
/// f32 or f64, truncation to i64 or i32 within range, bool; other casts are
/// left to run time.
static std::optional<AttrValue> evalCast(DType to, const AttrValue &x) {
  if (!x.isNumber() && !x.isBool())
    return std::nullopt;
  double v = x.isBool() ? double(x.getBool()) : x.getNumber();
  switch (to) {
  case DType::Bool: return AttrValue::boolean(v != 0);
  case DType::F32: return AttrValue::real(double(float(v)));
  case DType::F64: return AttrValue::real(v);
  case DType::I64:
  case DType::I32: {
    if (x.isInt() || x.isBool())
      return to == DType::I32 && (v < INT32_MIN || v > INT32_MAX)
                 ? std::nullopt
                 : std::optional<AttrValue>(AttrValue::integer(x.isBool() ? x.getBool() : x.getInt()));
    double t = std::trunc(v);
    bool fits = to == DType::I64 ? t >= -9223372036854775808.0 && t < 9223372036854775808.0
                                 : t >= INT32_MIN && t <= INT32_MAX;
    return fits ? std::optional<AttrValue>(AttrValue::integer(int64_t(t))) : std::nullopt;
  }
  default: return std::nullopt;
  }
}

static std::optional<AttrValue> evalUnary(llvm::StringRef op, const AttrValue &x) {
  if (auto cast = parseTorchDType(op))
    return evalCast(*cast, x);
  const ExprFunction *f = findExprFunction(op);
  if (x.isInt() || x.isBool()) {
    int64_t v = x.isBool() ? x.getBool() : x.getInt();
    if (op == "neg") return intSub(0, v);
    if (op == "abs") return v < 0 ? intSub(0, v) : AttrValue::integer(v);
    if (op == "sign") return AttrValue::integer((v > 0) - (v < 0));
    if (op == "square") return intMul(v, v);
    if (f && f->is(exprfn::Rounding))
      return AttrValue::integer(v);
  }
  if (!x.isNumber())
    return std::nullopt;
  double v = x.getNumber();
  if (!f || f->arity != 1 || !f->value)
    return std::nullopt;
  // Rounding to an integer gives a Python int, as torch/pnnx fold them.
  if (f->is(exprfn::Rounding))
    return roundToInt(v, [&](double a) { return f->value(a, 0); });
  return AttrValue::real(f->value(v, 0));
}

static std::optional<AttrValue> evalBinary(llvm::StringRef op, const AttrValue &a,
                                           const AttrValue &b) {
  auto isIntLike = [](const AttrValue &v) { return v.isInt() || v.isBool(); };
  auto asInt = [](const AttrValue &v) { return v.isBool() ? int64_t(v.getBool()) : v.getInt(); };
  if (isIntLike(a) && isIntLike(b)) {
    int64_t x = asInt(a), y = asInt(b);
    if (op == "add") return intAdd(x, y);
    if (op == "sub") return intSub(x, y);
    if (op == "mul") return intMul(x, y);
    if (op == "max" || op == "maximum") return AttrValue::integer(std::max(x, y));
    if (op == "min" || op == "minimum") return AttrValue::integer(std::min(x, y));
    if (op == "and") return AttrValue::integer(x & y);
    if (op == "or") return AttrValue::integer(x | y);
    if (op == "xor") return AttrValue::integer(x ^ y);
    // x << y is x * 2**y, for negative x too (Python).
    if (op == "lshift" && y >= 0 && y < 63)
      return intMul(x, int64_t(1) << y);
    if (op == "rshift" && y >= 0 && y < 63)
      return AttrValue::integer(x >= 0 ? x >> y : ~(~x >> y));
    if (op == "floor_divide") {
      if (y == 0)
        return std::nullopt;
      return y == -1 ? intSub(0, x) : AttrValue::integer(floorDiv(x, y));
    }
    if (op == "remainder") {
      if (y == 0)
        return std::nullopt;
      // The sign of y (Python); x % -1 is 0 but overflows for INT64_MIN in C++.
      int64_t r = y == -1 ? 0 : x % y;
      return AttrValue::integer(r != 0 && (r < 0) != (y < 0) ? r + y : r);
    }
    if (op == "pow" && y >= 0)
      return intPow(x, y);
  }
  if (!a.isNumber() && !a.isBool())
    return std::nullopt;
  if (!b.isNumber() && !b.isBool())
    return std::nullopt;
  double x = a.isBool() ? a.getBool() : a.getNumber();
  double y = b.isBool() ? b.getBool() : b.getNumber();
  // And, or and xor are bitwise on integers, refused on numbers.
  const ExprFunction *f = findExprFunction(op);
  if (!f || f->arity != 2 || f->is(exprfn::Logical) || !f->value)
    return std::nullopt;
  return AttrValue::real(f->value(x, y));
}

std::optional<AttrValue> evalScalarOp(llvm::StringRef op, llvm::ArrayRef<AttrValue> args) {
  if (args.size() == 1)
    return evalUnary(op, args[0]);
  if (args.size() == 2)
    return evalBinary(op, args[0], args[1]);
  return std::nullopt;
}

} // namespace kc
