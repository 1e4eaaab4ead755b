//===- Scalar.cpp - The portable micro-kernels ----------------------------===//
//
// Lanes<8>: plain loops with the AVX2 kernels' tiles, compiled with the
// build's own flags. The reference the other forms are tested against.
//
//===----------------------------------------------------------------------===//
#define KC_UK_ISA scalar
#include "../Lanes.h"
#include "../Table.h"

namespace kc::uk::scalar {
const MicroKernels &table() {
  static const MicroKernels t = buildTable<Lanes<8, false>>("scalar");
  return t;
}
} // namespace kc::uk::scalar
