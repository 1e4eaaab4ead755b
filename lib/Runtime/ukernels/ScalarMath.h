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

/// tanh without a library call, so loops over it vectorize: an odd
/// polynomial below 0.25 (its first omitted term < 3e-9 there), else
/// 1 - 2 / (exp(2|x|) + 1) with the sign of x (within 3.1e-7 relative of
/// PyTorch's over [-12, 12]; -0 stays -0, NaN NaN, +-inf gives +-1).
static inline __attribute__((always_inline)) float tanhApprox(float x) {
  float a = x < 0 ? -x : x;
  if (a < 0.25f) {
    float x2 = x * x;
    return x * (1.f + x2 * (-1.f / 3 + x2 * (2.f / 15 + x2 * (-17.f / 315 + x2 * (62.f / 2835)))));
  }
  float r = 1.f - 2.f / (expApprox(2.f * a) + 1.f);
  return x < 0 ? -r : r;
}

/// erf's polynomial of Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7):
/// erfc(|z|) = q(t) exp(-z^2), t = 1 / (1 + kErfP |z|).
constexpr float kErfP = 0.3275911f;
constexpr float kErfQ[5] = {1.061405429f, -1.453152027f, 1.421413741f, -0.284496736f, 0.254829592f};

/// nn.GELU: x (1 + erf(x / sqrt 2)) / 2, as x (2 - q) / 2 for x > 0 and
/// x q / 2 otherwise, q = erfc(|x| / sqrt 2). Within 1.5e-7 |x| / 2 and a
/// rounding of the exact value; +inf gives +inf, -inf NaN (-inf times 0,
/// as in PyTorch), NaN NaN.
static inline __attribute__((always_inline)) float geluErf(float x) {
  float z = x * 0.70710678118654752f, a = z < 0 ? -z : z;
  float t = 1.f / (1.f + kErfP * a);
  float q = kErfQ[0];
  for (int i = 1; i < 5; ++i)
    q = q * t + kErfQ[i];
  q = q * t * expApprox(-a * a);
  return z > 0 ? 0.5f * x * (2.f - q) : 0.5f * x * q;
}

/// nn.GELU(approximate="tanh"): x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2.
static inline __attribute__((always_inline)) float geluTanh(float x) {
  return 0.5f * x * (1.f + tanhApprox(0.79788456080286536f * (x + 0.044715f * x * x * x)));
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
  case Act::Gelu:
    return geluErf(x);
  case Act::GeluTanh:
    return geluTanh(x);
  }
  return x;
}

} // namespace kc::uk
