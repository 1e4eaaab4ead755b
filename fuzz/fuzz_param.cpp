//===- fuzz_param.cpp - libFuzzer driver for kc::fuzz::param ----------------===//
#include "FuzzTargets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return kc::fuzz::param(data, size);
}
