//===- EmulatedAvx512.h - The micro-kernels on emulated 16 lanes -*- C++ -*-===//
#pragma once

#include "ukernels/MicroKernels.h"

namespace kc::test {

/// The micro-kernel templates over Lanes<16, true>: AVX-512's tiles and
/// masks in portable code (MicroKernelTest.cpp).
const uk::MicroKernels &emulatedAvx512();

/// Runs whole models on the emulated AVX-512 table for its lifetime.
struct ScopedEmulatedAvx512 {
  ScopedEmulatedAvx512() { uk::setMicroKernelsForTesting(&emulatedAvx512()); }
  ~ScopedEmulatedAvx512() { uk::setMicroKernelsForTesting(nullptr); }
};

} // namespace kc::test
