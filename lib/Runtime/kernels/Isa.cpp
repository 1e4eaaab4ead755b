//===- Isa.cpp - Choosing AVX-512 kernels at run time ---------------------===//
#include "Isa.h"

#include <cstdlib>
#include <cstring>

namespace kc::rt {

bool useAvx512() {
#ifdef KC_HAVE_AVX512_KERNELS
  // __builtin_cpu_supports also checks that the OS saves the AVX-512 state.
  static const bool use = [] {
    const char *isa = std::getenv("KC_ISA");
    if (isa && std::strcmp(isa, "avx2") == 0)
      return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  }();
  return use;
#else
  return false;
#endif
}

const char *kernelIsa() {
#if defined(__AVX2__) && defined(__FMA__)
  return useAvx512() ? "avx512" : "avx2";
#else
  return "scalar";
#endif
}

} // namespace kc::rt
