//===- fuzz_npy.cpp - libFuzzer driver for kc::fuzz::npy -------------------===//
#include "FuzzTargets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return kc::fuzz::npy(data, size);
}
