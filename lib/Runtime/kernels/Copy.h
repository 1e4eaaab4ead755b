//===- Copy.h - Copies of short rows ----------------------------*- C++ -*-===//
#pragma once

#include <cstdint>
#include <cstring>

namespace kc::rt {

/// Copies n floats by fixed-size copies the compiler makes inline vector
/// moves, the last one overlapping the one before it: for the rows of 7 to
/// 56 floats of small planes, a memcpy call costs more than the copy, and
/// masked stores are slow on some cores.
inline void copyShortRow(float *dst, const float *src, int64_t n) {
  constexpr size_t kEight = 8 * sizeof(float), kFour = 4 * sizeof(float);
  if (n >= 8) {
    for (int64_t i = 0; i + 8 < n; i += 8)
      std::memcpy(dst + i, src + i, kEight);
    std::memcpy(dst + n - 8, src + n - 8, kEight);
    return;
  }
  if (n >= 4) {
    std::memcpy(dst, src, kFour);
    std::memcpy(dst + n - 4, src + n - 4, kFour);
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    dst[i] = src[i];
}

/// Copies `rows` rows of n floats, srcStride and dstStride floats apart:
/// a plane into the middle of a zero-bordered one. Its arguments are
/// locals, which the stores cannot clobber, so nothing is reloaded per row
/// as it would be from a lambda's captures.
inline void copyRows(float *dst, int64_t dstStride, const float *src, int64_t srcStride,
                     int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r)
    copyShortRow(dst + r * dstStride, src + r * srcStride, n);
}

/// even[j] = s[2j] and odd[j] = s[2j + 1] for j < n: a row's columns split
/// by parity, for stride-2 layers. Four pairs a step by one 8-float load
/// and two shuffles, the last step overlapping the one before it; rows of
/// small planes are a few steps, where a loop the compiler vectorized
/// spent more on its alias checks and scalar tail than on the copy.
inline void splitPairs(const float *s, float *even, float *odd, int64_t n) {
  typedef float Eight __attribute__((vector_size(32)));
  typedef float Four __attribute__((vector_size(16)));
  auto step = [&](int64_t j) {
    Eight v;
    std::memcpy(&v, s + 2 * j, sizeof v);
    Four e = __builtin_shufflevector(v, v, 0, 2, 4, 6);
    Four o = __builtin_shufflevector(v, v, 1, 3, 5, 7);
    std::memcpy(even + j, &e, sizeof e);
    std::memcpy(odd + j, &o, sizeof o);
  };
  if (n >= 4) {
    for (int64_t j = 0; j + 4 < n; j += 4)
      step(j);
    step(n - 4);
    return;
  }
  for (int64_t j = 0; j < n; ++j) {
    even[j] = s[2 * j];
    odd[j] = s[2 * j + 1];
  }
}

} // namespace kc::rt
