//===- fuzz_model.cpp - libFuzzer driver for kc::fuzz::model ----------------===//
#include "FuzzTargets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return kc::fuzz::model(data, size);
}
