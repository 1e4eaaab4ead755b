//===- Scalar.cpp - The portable micro-kernels ------------------------------===//
//
// Lanes<8>: plain loops with the AVX2 kernels' tiles, compiled with the
// build's own flags. The reference the other forms are tested against.
//
//===----------------------------------------------------------------------===//
#define KC_UK_ISA scalar
#define KC_UK_ISA_NAME "scalar"
#include "../Lanes.h"
#include "../Table.h"

KC_UK_DEFINE_TABLE((Lanes<8, false>))
