//===- ScalarMath.h - exp and the activations on one float ------*- C++ -*-===//
//
// The scalar forms, for kernels and for the micro-kernels' tails. The
// functions have internal linkage, so a copy compiled into a per-ISA file
// is never the one another file calls.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Runtime/Activation.h"

#include <cstdint>
#include <cstring>

namespace kc::uk {

// exp(x) = 2^k · e^r with x = k·ln2 + r (Cody-Waite, ln2 in two parts) and
// Cephes' degree-6 polynomial for e^r; inputs clamped to where the result
// stays a normal float.
constexpr float kExpMin = -87.33654f, kExpMax = 88.37626f;
constexpr float kLog2e = 1.44269504088896341f, kExpRound = 12582912.f; // 1.5·2^23
constexpr float kLn2Hi = 0.693359375f, kLn2Lo = 2.12194440e-4f;
constexpr float kExpPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                               4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

/// exp(x) in float without a library call, so loops over it vectorize
/// (within 2 ulp of std::exp; kernel tests pin the bound).
static inline __attribute__((always_inline)) float expApprox(float x0) {
  // NaN passes the clamp (and gives NaN); k is kept finite for the int
  // conversion below, which NaN would make undefined.
  float x = x0 < kExpMin ? kExpMin : x0 > kExpMax ? kExpMax : x0;
  // Round x·log2(e) to an integer by the 1.5·2^23 trick (no rint call).
  float k = ((x == x ? x : 0.f) * kLog2e + kExpRound) - kExpRound;
  float r = x - k * kLn2Hi + k * kLn2Lo;
  float p = kExpPoly[0];
  for (int i = 1; i < 6; ++i)
    p = p * r + kExpPoly[i];
  p = p * r * r + r + 1.f;
  int32_t bits = (int32_t(k) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return x0 > kExpMax ? __builtin_inff() : p * scale;
}

static inline __attribute__((always_inline)) float applyAct(rt::Act a, float x, float slope) {
  using rt::Act;
  switch (a) {
  case Act::None: return x;
  case Act::Relu: return x < 0 ? 0 : x; // NaN stays NaN, as in PyTorch
  case Act::Relu6: return x < 0.f ? 0.f : x > 6.f ? 6.f : x;
  case Act::Silu: return x / (1.f + expApprox(-x));
  case Act::Sigmoid: return 1.f / (1.f + expApprox(-x));
  case Act::Hardswish: {
    float t = x + 3.f;
    t = t < 0.f ? 0.f : t > 6.f ? 6.f : t;
    return x * t / 6.f;
  }
  case Act::LeakyRelu: return x > 0 ? x : x * slope;
  }
  return x;
}

} // namespace kc::uk
