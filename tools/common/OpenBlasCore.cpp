//===- OpenBlasCore.cpp - Point OpenBLAS at kernels for this core ---------===//
#include "OpenBlasCore.h"

#include <cstdlib>
#include <cstring>
#include <unistd.h>

extern "C" char *openblas_get_corename(void);

namespace kc::tools {

void reexecForOpenBlasCore(char **argv) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (std::getenv("OPENBLAS_CORETYPE") || std::strcmp(openblas_get_corename(), "Prescott") != 0)
    return;
  __builtin_cpu_init();
  const char *core = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512cd"))
    core = "SkylakeX"; // Cooperlake and Sapphire Rapids share its sgemm
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    core = "Haswell";
  // Set even when not re-executing, so that a second attempt cannot loop.
  if (!core || setenv("OPENBLAS_CORETYPE", core, 0) != 0)
    return;
  execv("/proc/self/exe", argv);
#else
  (void)argv;
#endif
}

} // namespace kc::tools
