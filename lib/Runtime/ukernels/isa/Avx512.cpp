//===- Avx512.cpp - The AVX-512 micro-kernels -------------------------------===//
//
// Compiled with -mavx512f -mavx512dq -mavx512bw -mavx512vl -mfma
// (CMakeLists.txt); only called on cores that have them.
//
//===----------------------------------------------------------------------===//
#define KC_UK_ISA avx512
#define KC_UK_ISA_NAME "avx512"
#include "../Avx512.h"
#include "../Table.h"

KC_UK_DEFINE_TABLE((Avx512))
