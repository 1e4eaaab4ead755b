//===- kc/Support/NumberText.h - Numbers written as text --------*- C++ -*-===//
///
/// \file
/// The number words kc reads: in `.pnnx.param` files, in kc's own text and
/// in `rpn` programs. Integers in decimal with an optional sign, reals as
/// C's strtod reads them plus `inf` and `nan` (with a sign, and PNNX's
/// `nan.0`), complex numbers `a+bj` (and PNNX's `a+-bj`). Each reader takes
/// the whole word or nothing. Words such as `True` or `None` are left to
/// the format that has them.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <complex>
#include <cstdint>
#include <optional>

namespace kc {

/// A decimal integer that fits int64.
std::optional<int64_t> parseIntText(llvm::StringRef s);
/// A real number (any integer text too).
std::optional<double> parseRealText(llvm::StringRef s);
/// `a+bj`, `a-bj` or `a+-bj`.
std::optional<std::complex<double>> parseComplexText(llvm::StringRef s);
/// Digits with an optional sign: text that can only mean an integer, which
/// must then fit int64 rather than turn into a real (it would print as
/// 1e+23 and never read back as what was written).
bool isIntegerText(llvm::StringRef s);

} // namespace kc
