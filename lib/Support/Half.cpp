//===- Half.cpp - IEEE binary16 conversions -------------------------------===//
#include "kc/Support/Half.h"

#include <cstring>

namespace kc {

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

} // namespace

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0x1f) // infinity, or NaN: quiet, the payload moved up
    return floatOf(sign | 0x7f800000u | (mantissa ? 0x400000u | mantissa << 13 : 0));
  if (exponent != 0)
    return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0)
    return floatOf(sign);
  // A subnormal half is a normal float: shift the leading 1 into place.
  int shift = 0;
  while (!(mantissa & 0x400)) {
    mantissa <<= 1;
    ++shift;
  }
  return floatOf(sign | uint32_t(113 - shift) << 23 | (mantissa & 0x3ff) << 13);
}

uint16_t floatToHalf(float f) {
  uint32_t u = bitsOf(f);
  uint16_t sign = uint16_t((u >> 16) & 0x8000);
  uint32_t exponent = (u >> 23) & 0xff, mantissa = u & 0x7fffff;
  if (exponent == 0xff) {
    if (mantissa == 0)
      return sign | 0x7c00;
    // NaN: quiet, with the payload's top bits.
    return sign | 0x7e00 | uint16_t(mantissa >> 13);
  }
  if (exponent == 0)
    return sign; // float subnormals are far below half's smallest step
  int e = int(exponent) - 127; // unbiased
  if (e > 15)
    return sign | 0x7c00; // 65520 and beyond round to infinity
  uint32_t significand = mantissa | 0x800000;
  // Bits of the 24-bit significand below the result's last place: 13 for
  // a normal half, more below 2^-14, where the step is 2^-24.
  int drop = e >= -14 ? 13 : -1 - e;
  if (drop > 25)
    return sign; // below half the smallest subnormal: rounds to zero
  uint32_t kept = significand >> drop;
  uint32_t rest = significand & ((uint32_t(1) << drop) - 1), halfway = uint32_t(1) << (drop - 1);
  if (rest > halfway || (rest == halfway && (kept & 1)))
    ++kept; // may carry into the exponent, or up to infinity: both right
  if (e >= -14)
    return sign | uint16_t(((uint32_t(e + 15) << 10) + (kept - 0x400)));
  return sign | uint16_t(kept);
}

void halfToFloat(const void *src, float *dst, size_t n) {
  const auto *bytes = static_cast<const uint8_t *>(src);
  for (size_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, bytes + 2 * i, 2);
    dst[i] = halfToFloat(h);
  }
}

void floatToHalf(const float *src, uint16_t *dst, size_t n) {
  for (size_t i = 0; i < n; ++i)
    dst[i] = floatToHalf(src[i]);
}

} // namespace kc
