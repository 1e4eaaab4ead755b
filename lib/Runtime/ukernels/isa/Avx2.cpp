//===- Avx2.cpp - The AVX2 + FMA micro-kernels ------------------------------===//
//
// Compiled with -mavx2 -mfma (CMakeLists.txt), whatever the rest of the
// build targets.
//
//===----------------------------------------------------------------------===//
#define KC_UK_ISA avx2
#define KC_UK_ISA_NAME "avx2"
#include "../Avx2.h"
#include "../Table.h"

KC_UK_DEFINE_TABLE((Avx2))
