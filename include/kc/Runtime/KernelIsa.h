//===- KernelIsa.h - The instruction set of the kernels ---------*- C++ -*-===//
#pragma once

namespace kc::rt {

/// The instruction set of the micro-kernels this process uses: "avx512" on
/// cores with AVX-512 F, DQ, BW and VL, "avx2" on cores with AVX2 and FMA,
/// else "scalar"; the environment variable KC_ISA ("scalar", "avx2",
/// "avx512") picks a narrower one. Fixed at the first call.
const char *kernelIsa();

} // namespace kc::rt
