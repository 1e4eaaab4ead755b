//===- KernelIsa.h - The instruction set of the kernels ---------*- C++ -*-===//
#pragma once

namespace kc::rt {

/// The instruction set the GEMM kernels use in this process: "avx512" on
/// cores with AVX-512 F, DQ, BW and VL, unless the environment variable
/// KC_ISA is "avx2"; "avx2" elsewhere; "scalar" in a portable build
/// (KC_NATIVE off). Fixed at the first call.
const char *kernelIsa();

} // namespace kc::rt
