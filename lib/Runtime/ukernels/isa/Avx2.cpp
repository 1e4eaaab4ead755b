//===- Avx2.cpp - The AVX2 + FMA micro-kernels ----------------------------===//
//
// Compiled with -mavx2 -mfma (CMakeLists.txt), whatever the rest of the
// build targets.
//
//===----------------------------------------------------------------------===//
#define KC_UK_ISA avx2
#include "../Avx2.h"
#include "../Table.h"

namespace kc::uk::avx2 {
const MicroKernels &table() {
  static const MicroKernels t = buildTable<Avx2>("avx2");
  return t;
}
} // namespace kc::uk::avx2
