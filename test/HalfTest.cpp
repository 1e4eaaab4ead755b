//===- HalfTest.cpp - IEEE binary16 conversions ---------------------------===//
//
// kc/Support/Half.h against the x86 F16C instructions (vcvtph2ps,
// vcvtps2ph with round-to-nearest-even), an implementation independent of
// kc's: every one of the 65,536 halves widened, and narrowed back; floats
// near every half boundary, every power of two from 2^-30 to 2^20, and 2^22
// random bit patterns narrowed. Bit-exact, NaNs included. Skipped where the
// CPU has no F16C.
//
//===----------------------------------------------------------------------===//
#include "kc/Support/Half.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <immintrin.h>
#include <ios>
#include <random>

namespace {

__attribute__((target("f16c"))) float hardwareWiden(uint16_t h) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_set1_epi16(int16_t(h))));
}

__attribute__((target("f16c"))) uint16_t hardwareNarrow(float f) {
  return uint16_t(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT), 0));
}

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

} // namespace

TEST_CASE("half: widening and narrowing give the F16C instructions' bits") {
  if (!__builtin_cpu_supports("f16c")) {
    MESSAGE("skipped: this CPU has no F16C instructions to compare with");
    return;
  }
  int checked = 0;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float want = hardwareWiden(uint16_t(h));
    REQUIRE_MESSAGE(bitsOf(kc::halfToFloat(uint16_t(h))) == bitsOf(want), "half 0x" << std::hex
                                                                               << h);
    REQUIRE_MESSAGE(kc::floatToHalf(want) == hardwareNarrow(want), "half 0x" << std::hex << h);
    // The floats just around each half, and halfway to the next one.
    for (int32_t d : {-1, 1, 0x1000, 0x1000 - 1, 0x1000 + 1}) {
      float f = floatOf(bitsOf(want) + uint32_t(d));
      REQUIRE_MESSAGE(kc::floatToHalf(f) == hardwareNarrow(f), "float 0x" << std::hex
                                                                      << bitsOf(f));
      ++checked;
    }
  }
  for (int e = -30; e <= 20; ++e)
    for (float sign : {1.f, -1.f}) {
      float f = sign * std::ldexp(1.f, e);
      CHECK(kc::floatToHalf(f) == hardwareNarrow(f));
      ++checked;
    }
  std::mt19937 rng(7);
  for (int i = 0; i < (1 << 22); ++i) {
    float f = floatOf(rng());
    REQUIRE_MESSAGE(kc::floatToHalf(f) == hardwareNarrow(f), "float 0x" << std::hex << bitsOf(f));
    ++checked;
  }
  MESSAGE("65536 halves widened and narrowed back, " << checked << " floats narrowed");
  // The figures the header promises.
  CHECK(kc::floatToHalf(65504.f) == 0x7bff);
  CHECK(kc::floatToHalf(65520.f) == 0x7c00);
  CHECK(kc::halfToFloat(0x0001) == std::ldexp(1.f, -24));
}
