//===- MicroKernels.cpp - Choosing the micro-kernel table -----------------===//
//
// The one place that asks the CPU which instruction sets it has. The
// per-ISA tables that exist in this build are named by KC_UK_HAVE_AVX2 and
// KC_UK_HAVE_AVX512 (CMakeLists.txt).
//
//===----------------------------------------------------------------------===//
#include "MicroKernels.h"
#include "kc/Runtime/KernelIsa.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <utility>

namespace kc::uk {
namespace scalar {
const MicroKernels &table();
}
#ifdef KC_UK_HAVE_AVX2
namespace avx2 {
const MicroKernels &table();
}
#endif
#ifdef KC_UK_HAVE_AVX512
namespace avx512 {
const MicroKernels &table();
}
#endif

namespace {

enum class Isa { Scalar, Avx2, Avx512 };

/// The widest set the CPU and the OS support (__builtin_cpu_supports also
/// checks that the OS saves the registers).
Isa widestSupported() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return Isa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return Isa::Avx2;
#endif
  return Isa::Scalar;
}

/// The tables built, by Isa.
const MicroKernels *builtTable(Isa isa) {
#ifdef KC_UK_HAVE_AVX2
  if (isa == Isa::Avx2)
    return &avx2::table();
#endif
#ifdef KC_UK_HAVE_AVX512
  if (isa == Isa::Avx512)
    return &avx512::table();
#endif
  return isa == Isa::Scalar ? &scalar::table() : nullptr;
}

/// The table of `isa` if built and supported, else null.
const MicroKernels *tableOf(Isa isa) {
  return isa > widestSupported() ? nullptr : builtTable(isa);
}

bool parseIsa(const char *name, Isa &isa) {
  const std::pair<const char *, Isa> names[] = {
      {"scalar", Isa::Scalar}, {"avx2", Isa::Avx2}, {"avx512", Isa::Avx512}};
  for (auto [n, i] : names)
    if (name && std::strcmp(name, n) == 0) {
      isa = i;
      return true;
    }
  return false;
}

const MicroKernels &choose() {
  Isa wanted;
  if (parseIsa(std::getenv("KC_ISA"), wanted))
    if (const MicroKernels *t = tableOf(wanted))
      return *t;
  for (Isa isa : {Isa::Avx512, Isa::Avx2})
    if (const MicroKernels *t = tableOf(isa))
      return *t;
  return scalar::table();
}

const MicroKernels &chosen() {
  static const MicroKernels &t = choose();
  return t;
}

/// The table in use: chosen() unless a test set another.
std::atomic<const MicroKernels *> inUse{nullptr};

} // namespace

const MicroKernels &microKernels() {
  const MicroKernels *t = inUse.load(std::memory_order_relaxed);
  return t ? *t : chosen();
}

void setMicroKernelsForTesting(const MicroKernels *t) {
  inUse.store(t, std::memory_order_relaxed);
}

const MicroKernels *microKernelsFor(const char *isa) {
  Isa i;
  return parseIsa(isa, i) ? tableOf(i) : nullptr;
}

const float *zeroRow() {
  alignas(64) static const float zeros[kDepthwiseMaxWidth + 64 + 32] = {};
  return zeros + 32;
}

} // namespace kc::uk

namespace kc::rt {
const char *kernelIsa() { return uk::microKernels().isa; }
} // namespace kc::rt
