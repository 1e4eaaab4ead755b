//===- kc/Support/FloatToInt.h - Floating to integer conversion -*- C++ -*-===//
///
/// \file
/// Every conversion of a floating value to an integer in kc goes through
/// here. In C++ the plain cast is undefined behaviour when the value is NaN,
/// infinite or out of range; these functions are defined for every input.
///
/// `torchCast` gives what PyTorch 1.13 gives on x86-64 (the reference
/// platform) for `Tensor.to`: truncation toward zero when the value fits,
/// and otherwise the x86 conversion's "integer indefinite" value: INT64_MIN
/// for int64, INT32_MIN for int32. The narrower types convert through
/// int32 and keep its low bits (so NaN, infinities and values beyond int32
/// give 0), and bool is `v != 0` (NaN is true). Measured with torch 1.13.1
/// for float32 and float64 sources, scalar and vectorized sizes alike
/// (test/FloatToIntTest.cpp pins the table).
///
//===----------------------------------------------------------------------===//
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>

namespace kc {

/// v truncated toward zero if the result fits in int64, else nullopt (NaN,
/// infinities, |v| >= 2^63 except -2^63 itself).
inline std::optional<int64_t> truncToInt64(double v) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
    return std::nullopt;
  return int64_t(v);
}

/// v as an int64 if it is an integer that int64 holds exactly, else nullopt.
inline std::optional<int64_t> exactInt64(double v) {
  auto t = truncToInt64(v);
  if (!t || double(*t) != v)
    return std::nullopt;
  return t;
}

/// v truncated toward zero and saturated to int64's range; NaN gives 0. For
/// attribute values, where PyTorch would have refused a float.
inline int64_t saturatingInt64(double v) {
  if (std::isnan(v))
    return 0;
  if (auto t = truncToInt64(v))
    return *t;
  return v < 0 ? INT64_MIN : INT64_MAX;
}

/// PyTorch's `Tensor.to(T)` of one floating value (see the file comment).
template <typename T> T torchCast(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0; // NaN != 0
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return truncToInt64(v).value_or(INT64_MIN);
  } else {
    static_assert(std::is_integral_v<T> && sizeof(T) <= 4, "an integer type of at most 32 bits");
    int32_t w = v > -2147483649.0 && v < 2147483648.0 ? int32_t(v) : INT32_MIN;
    return T(w); // the low bits, as the narrowing store keeps them
  }
}

} // namespace kc
