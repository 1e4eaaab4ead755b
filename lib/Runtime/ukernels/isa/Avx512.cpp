//===- Avx512.cpp - The AVX-512 micro-kernels -----------------------------===//
//
// Compiled with -mavx512f -mavx512dq -mavx512bw -mavx512vl -mfma
// (CMakeLists.txt); only called on cores that have them.
//
//===----------------------------------------------------------------------===//
#define KC_UK_ISA avx512
#include "../Avx512.h"
#include "../Table.h"

namespace kc::uk::avx512 {
const MicroKernels &table() {
  static const MicroKernels t = buildTable<Avx512>("avx512");
  return t;
}
} // namespace kc::uk::avx512
