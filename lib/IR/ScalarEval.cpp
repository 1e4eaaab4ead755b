//===- ScalarEval.cpp - Evaluate expression ops on scalars ----------------===//
#include "kc/IR/ScalarEval.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>

namespace kc {

static int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static std::optional<AttrValue> evalUnary(llvm::StringRef op, const AttrValue &x) {
  if (x.isInt() || x.isBool()) {
    int64_t v = x.isBool() ? x.getBool() : x.getInt();
    if (op == "neg") return AttrValue::integer(-v);
    if (op == "abs") return AttrValue::integer(v < 0 ? -v : v);
    if (op == "sign") return AttrValue::integer((v > 0) - (v < 0));
    if (op == "square") return AttrValue::integer(v * v);
    if (op == "int" || op == "torch.long" || op == "ceil" || op == "floor" || op == "trunc" ||
        op == "round")
      return AttrValue::integer(v);
    if (op == "torch.float") return AttrValue::real(double(v));
    if (op == "torch.bool") return AttrValue::boolean(v != 0);
  }
  if (!x.isNumber())
    return std::nullopt;
  double v = x.getNumber();
  using F = double (*)(double);
  F f = llvm::StringSwitch<F>(op)
            .Case("sqrt", [](double a) { return std::sqrt(a); })
            .Case("rsqrt", [](double a) { return 1.0 / std::sqrt(a); })
            .Case("reciprocal", [](double a) { return 1.0 / a; })
            .Case("exp", [](double a) { return std::exp(a); })
            .Case("expm1", [](double a) { return std::expm1(a); })
            .Case("log", [](double a) { return std::log(a); })
            .Case("log10", [](double a) { return std::log10(a); })
            .Case("log1p", [](double a) { return std::log1p(a); })
            .Case("erf", [](double a) { return std::erf(a); })
            .Case("sin", [](double a) { return std::sin(a); })
            .Case("cos", [](double a) { return std::cos(a); })
            .Case("tan", [](double a) { return std::tan(a); })
            .Case("asin", [](double a) { return std::asin(a); })
            .Case("acos", [](double a) { return std::acos(a); })
            .Case("atan", [](double a) { return std::atan(a); })
            .Case("sinh", [](double a) { return std::sinh(a); })
            .Case("cosh", [](double a) { return std::cosh(a); })
            .Case("tanh", [](double a) { return std::tanh(a); })
            .Case("asinh", [](double a) { return std::asinh(a); })
            .Case("acosh", [](double a) { return std::acosh(a); })
            .Case("atanh", [](double a) { return std::atanh(a); })
            .Case("neg", [](double a) { return -a; })
            .Case("abs", [](double a) { return std::fabs(a); })
            .Case("sign", [](double a) { return double((a > 0) - (a < 0)); })
            .Case("square", [](double a) { return a * a; })
            .Case("torch.float", [](double a) { return a; })
            .Default(nullptr);
  if (f)
    return AttrValue::real(f(v));
  // Rounding to an integer gives a Python int, as torch/pnnx fold them.
  if (op == "ceil") return AttrValue::integer(int64_t(std::ceil(v)));
  if (op == "floor") return AttrValue::integer(int64_t(std::floor(v)));
  if (op == "trunc" || op == "int" || op == "torch.long") return AttrValue::integer(int64_t(v));
  if (op == "round") return AttrValue::integer(int64_t(std::nearbyint(v)));
  if (op == "torch.bool") return AttrValue::boolean(v != 0);
  return std::nullopt;
}

static std::optional<AttrValue> evalBinary(llvm::StringRef op, const AttrValue &a,
                                           const AttrValue &b) {
  auto isIntLike = [](const AttrValue &v) { return v.isInt() || v.isBool(); };
  auto asInt = [](const AttrValue &v) { return v.isBool() ? int64_t(v.getBool()) : v.getInt(); };
  if (isIntLike(a) && isIntLike(b)) {
    int64_t x = asInt(a), y = asInt(b);
    if (op == "add") return AttrValue::integer(x + y);
    if (op == "sub") return AttrValue::integer(x - y);
    if (op == "mul") return AttrValue::integer(x * y);
    if (op == "max" || op == "maximum") return AttrValue::integer(std::max(x, y));
    if (op == "min" || op == "minimum") return AttrValue::integer(std::min(x, y));
    if (op == "and") return AttrValue::integer(x & y);
    if (op == "or") return AttrValue::integer(x | y);
    if (op == "xor") return AttrValue::integer(x ^ y);
    if (op == "lshift" && y >= 0 && y < 63) return AttrValue::integer(x << y);
    if (op == "rshift" && y >= 0 && y < 63) return AttrValue::integer(x >> y);
    if (op == "floor_divide")
      return y == 0 ? std::nullopt : std::optional<AttrValue>(AttrValue::integer(floorDiv(x, y)));
    if (op == "remainder")
      return y == 0 ? std::nullopt
                    : std::optional<AttrValue>(AttrValue::integer(x - floorDiv(x, y) * y));
    if (op == "pow" && y >= 0) {
      int64_t r = 1;
      for (int64_t i = 0; i < y && i < 64; ++i)
        r *= x;
      return AttrValue::integer(r);
    }
  }
  if (!a.isNumber() && !a.isBool())
    return std::nullopt;
  if (!b.isNumber() && !b.isBool())
    return std::nullopt;
  double x = a.isBool() ? a.getBool() : a.getNumber();
  double y = b.isBool() ? b.getBool() : b.getNumber();
  if (op == "add") return AttrValue::real(x + y);
  if (op == "sub") return AttrValue::real(x - y);
  if (op == "mul") return AttrValue::real(x * y);
  if (op == "div") return AttrValue::real(x / y);
  if (op == "pow") return AttrValue::real(std::pow(x, y));
  if (op == "atan2") return AttrValue::real(std::atan2(x, y));
  if (op == "fmod") return AttrValue::real(std::fmod(x, y));
  if (op == "floor_divide") return AttrValue::real(std::floor(x / y));
  if (op == "remainder") {
    double r = std::fmod(x, y);
    return AttrValue::real((r != 0 && ((r < 0) != (y < 0))) ? r + y : r);
  }
  if (op == "max" || op == "maximum")
    return AttrValue::real(std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y));
  if (op == "min" || op == "minimum")
    return AttrValue::real(std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y));
  if (op == "logaddexp") {
    double m = std::max(x, y);
    return AttrValue::real(std::isinf(m) ? m : m + std::log(std::exp(x - m) + std::exp(y - m)));
  }
  return std::nullopt;
}

std::optional<AttrValue> evalScalarOp(llvm::StringRef op, llvm::ArrayRef<AttrValue> args) {
  if (args.size() == 1)
    return evalUnary(op, args[0]);
  if (args.size() == 2)
    return evalBinary(op, args[0], args[1]);
  return std::nullopt;
}

} // namespace kc
