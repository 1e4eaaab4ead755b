//===- Isa.h - Choosing AVX-512 kernels at run time -------------*- C++ -*-===//
//
// kc is built for x86-64-v3 (AVX2 + FMA) so that one binary runs on every
// current x86 server. The GEMM kernels that carry most of a model's work
// also have AVX-512 forms, compiled per function with a target attribute
// and chosen at run time on cores that have it: twice the lanes per fused
// multiply-add. KC_ISA=avx2 keeps the AVX2 kernels (to compare the two, and
// so tests cover both on one machine).
//
// Only functions with internal linkage carry KC_AVX512: an inline function
// or template with external linkage compiled for AVX-512 could be the copy
// the linker keeps for every caller, and fault on cores without it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Runtime/KernelIsa.h"

#if defined(__x86_64__) && defined(__GNUC__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define KC_HAVE_AVX512_KERNELS 1
#define KC_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl")))
#endif

namespace kc::rt {

/// Whether the AVX-512 kernels run: the core and the OS support AVX-512
/// F/DQ/BW/VL, and KC_ISA does not say avx2. Decided once per process.
bool useAvx512();

} // namespace kc::rt
