//===- OpenBlasCore.h - Point OpenBLAS at kernels for this core -*- C++ -*-===//
#pragma once

namespace kc::tools {

/// Debian 12's OpenBLAS (0.3.21, built for every x86 core) picks its
/// kernels by CPU model when it is loaded and takes cores newer than it
/// knows (Xeons of family 6, model 207, for one) for a Prescott: SSE3
/// kernels, sgemm at 33 GFLOP/s where its SkylakeX kernels reach 154 on
/// the same core. Its only other input is OPENBLAS_CORETYPE, read while it
/// loads, before main. So when OpenBLAS has fallen back to Prescott on a
/// core with AVX-512 (or AVX2), and the variable is unset, this sets it to
/// SkylakeX (or Haswell) and executes the program again, with the same
/// arguments; otherwise, or if that fails, it returns. Call it first thing
/// in main.
void reexecForOpenBlasCore(char **argv);

} // namespace kc::tools
