//===- fuzz_kcText.cpp - libFuzzer driver for kc::fuzz::kcText ----------------===//
#include "FuzzTargets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return kc::fuzz::kcText(data, size);
}
