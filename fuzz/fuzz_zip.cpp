//===- fuzz_zip.cpp - libFuzzer driver for kc::fuzz::zip ----------------===//
#include "FuzzTargets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return kc::fuzz::zip(data, size);
}
