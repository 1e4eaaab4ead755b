//===- GridCoords.h - F.grid_sample's source coordinates --------*- C++ -*-===//
///
/// \file
/// Where PyTorch 1.13's grid sampler reads for one grid coordinate, along
/// one input dim. It has two CPU implementations that differ where the
/// coordinate is NaN, infinite or huge, and kc follows each:
///
/// - 4-d inputs (GridSamplerKernel.cpp, vectorized): clipping sends NaN to
///   0; reflection folds with trunc in float; an index is converted as x86
///   does (INT32_MIN when out of int32's range, so outside the input), and
///   interpolation weights keep a NaN, which makes the sample NaN.
/// - 5-d inputs (GridSampler.h, scalar): clipping sends NaN to size - 1;
///   reflection folds with fmod and the parity of floor(x / span) as int32
///   (x86: INT32_MIN, even, beyond its range); a coordinate beyond int32 or
///   not finite becomes -100, outside the input.
///
/// Where a finite coordinate is far beyond the input (say 1e30), where
/// reflection lands depends on the rounding of the unnormalization, which
/// kc's build (contracting to FMA) may do otherwise than PyTorch's: such a
/// sample reads some element of the input, defined but not always
/// PyTorch's.
///
/// No conversion here is undefined for any float (kc/Support/FloatToInt.h).
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Support/FloatToInt.h"

#include <cmath>
#include <cstdint>

namespace kc::rt {

enum class GridPad { Zeros, Border, Reflection };

/// An index as the vectorized sampler converts a float that holds an
/// integer: truncation, INT32_MIN when it does not fit.
inline int64_t gridIndex(float v) { return torchCast<int32_t>(v); }

/// One input dim of `size` elements under the 4-d (vectorized) sampler.
struct GridAxis2d {
  int64_t size;
  GridPad pad;
  bool align;

  float unnormalize(float x) const {
    return align ? (x + 1) * (float(size - 1) / 2) : (x + 1) * (float(size) / 2) - 0.5f;
  }
  /// Into [0, size - 1]; NaN goes to 0.
  float clip(float x) const { return x > 0 ? std::min(x, float(size - 1)) : 0.f; }
  float reflect(float x) const {
    float low = align ? 0.f : -0.5f, twiceSpan = float(align ? 2 * (size - 1) : 2 * size);
    if (align && size <= 1)
      return 0;
    float in = std::fabs(x - low);
    float extra = in - std::trunc(in / twiceSpan) * twiceSpan;
    float folded = twiceSpan - extra;
    // The vectorized minimum propagates NaN.
    return (std::isnan(extra) ? extra : std::min(extra, folded)) + low;
  }
  /// The padding applied to an unnormalized coordinate.
  float compute(float x) const {
    if (pad == GridPad::Border)
      return clip(x);
    if (pad == GridPad::Reflection)
      return clip(reflect(x));
    return x;
  }
};

/// One input dim of `size` elements under the 5-d (scalar) sampler.
struct GridAxis3d {
  int64_t size;
  GridPad pad;
  bool align;

  float unnormalize(float x) const {
    return align ? (x + 1) / 2 * float(size - 1) : ((x + 1) * float(size) - 1) / 2;
  }
  /// std::min(size - 1, std::max(x, 0)): NaN goes to size - 1.
  float clip(float x) const {
    float lo = x < 0 ? 0.f : x;
    return float(size - 1) < lo || std::isnan(lo) ? float(size - 1) : lo;
  }
  float reflect(float x) const {
    int64_t twiceLow = align ? 0 : -1, twiceHigh = align ? 2 * (size - 1) : 2 * size - 1;
    if (twiceLow == twiceHigh)
      return 0;
    float lo = float(twiceLow) / 2, span = float(twiceHigh - twiceLow) / 2;
    x = std::fabs(x - lo);
    float extra = std::fmod(x, span);
    int32_t flips = torchCast<int32_t>(std::floor(x / span));
    return flips % 2 == 0 ? extra + lo : span - extra + lo;
  }
  /// The padding, then PyTorch's safe_downgrade_to_int_range.
  float compute(float x) const {
    if (pad == GridPad::Border)
      x = clip(x);
    else if (pad == GridPad::Reflection)
      x = clip(reflect(x));
    if (!std::isfinite(x) || x > float(INT32_MAX - 1) || x < float(INT32_MIN))
      return -100.f;
    return x;
  }
};

} // namespace kc::rt
