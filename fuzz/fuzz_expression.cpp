//===- fuzz_expression.cpp - libFuzzer driver for kc::fuzz::expression ----------------===//
#include "FuzzTargets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return kc::fuzz::expression(data, size);
}
