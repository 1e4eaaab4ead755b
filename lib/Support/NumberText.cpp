//===- NumberText.cpp - Numbers written as text ---------------------------===//
#include "kc/Support/NumberText.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace kc {

namespace {
/// Text that is a number as a writer prints one (no hex, no words).
bool looksNumeric(llvm::StringRef s) {
  if (s.empty())
    return false;
  llvm::StringRef body = s;
  if (body.front() == '-' || body.front() == '+')
    body = body.drop_front();
  if (body == "inf" || body == "nan" || body == "nan.0")
    return true;
  if (body.empty() || !(llvm::isDigit(body.front()) || body.front() == '.'))
    return false;
  for (char c : body)
    if (!(llvm::isDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'))
      return false;
  return true;
}
} // namespace

std::optional<double> parseRealText(llvm::StringRef s) {
  if (!looksNumeric(s))
    return std::nullopt;
  bool neg = s.startswith("-");
  llvm::StringRef body = s.ltrim("+-");
  if (body == "inf")
    return neg ? -INFINITY : INFINITY;
  if (body == "nan" || body == "nan.0")
    return neg ? -NAN : NAN;
  std::string z = s.str();
  char *end = nullptr;
  double d = std::strtod(z.c_str(), &end);
  if (end != z.c_str() + z.size())
    return std::nullopt;
  return d;
}

std::optional<int64_t> parseIntText(llvm::StringRef s) {
  int64_t v;
  llvm::StringRef t = s.startswith("+") ? s.drop_front() : s;
  if (t.empty() || t.getAsInteger(10, v))
    return std::nullopt;
  return v;
}

std::optional<std::complex<double>> parseComplexText(llvm::StringRef s) {
  if (!s.endswith("j") || s.size() < 4)
    return std::nullopt;
  llvm::StringRef body = s.drop_back();
  for (size_t i = 1; i < body.size(); ++i) {
    char c = body[i], p = body[i - 1];
    if ((c == '+' || c == '-') && p != 'e' && p != 'E' && p != '+') {
      llvm::StringRef re = body.take_front(i), im = body.drop_front(i);
      if (im.startswith("+"))
        im = im.drop_front(1); // `+b` and PNNX's `+-b`
      auto r = parseRealText(re), m = parseRealText(im);
      if (r && m)
        return std::complex<double>(*r, *m);
      return std::nullopt;
    }
  }
  return std::nullopt;
}

bool isIntegerText(llvm::StringRef s) {
  if (s.startswith("-") || s.startswith("+"))
    s = s.drop_front();
  return !s.empty() && llvm::all_of(s, llvm::isDigit);
}

} // namespace kc
