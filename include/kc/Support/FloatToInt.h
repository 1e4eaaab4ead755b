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

#include "kc/Support/DType.h"

#include <algorithm>
#include <cfloat>
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

/// v truncated toward zero and clamped to [lo, hi]; NaN gives lo. For a
/// position computed in floating point (a resampling source, a window)
/// that indexes a dim of known extent, however far outside it lies.
inline int64_t clampedIndex(double v, int64_t lo, int64_t hi) {
  if (std::isnan(v))
    return lo;
  return std::clamp(saturatingInt64(v), lo, hi);
}

/// Whether PyTorch 1.13 takes the number v as a scalar of `dtype` (fill_,
/// masked_fill, full): an integer type takes v truncated when that fits
/// (not NaN, an infinity or a value beyond the type: "value cannot be
/// converted to type int64_t without overflow"), bool any value, float32
/// any but a finite value beyond its range, float64 any.
inline bool scalarFits(double v, DType dtype) {
  auto t = truncToInt64(v);
  switch (dtype) {
  case DType::Bool:
  case DType::F64:
    return true;
  case DType::F32:
    return !std::isfinite(v) || std::fabs(v) <= double(FLT_MAX);
  case DType::I64:
    return t.has_value();
  case DType::I32:
    return t && *t >= INT32_MIN && *t <= INT32_MAX;
  case DType::I16:
    return t && *t >= INT16_MIN && *t <= INT16_MAX;
  case DType::I8:
    return t && *t >= INT8_MIN && *t <= INT8_MAX;
  case DType::U8:
    return t && *t >= 0 && *t <= UINT8_MAX;
  default:
    return true; // other floating types: PyTorch rounds
  }
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
