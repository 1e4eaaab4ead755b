//===- kc/IR/Summary.h - What a model holds and computes --------*- C++ -*-===//
///
/// \file
/// Op counts, parameters, FLOPs (kc/IR/OpCost.h) and intermediate memory of
/// a module's `main`, as `kc-opt --summary` prints them.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kc {

struct OpTypeSummary {
  std::string op; ///< the op's name; `(expression)` for expression functions
  int64_t calls = 0;
  double flops = 0;         ///< over the calls whose FLOPs are known
  int64_t unknownFlops = 0; ///< calls without a FLOP count (dynamic shapes, opaque ops)
};

struct ModuleSummary {
  std::vector<OpTypeSummary> ops; ///< by FLOPs, then calls, then name
  int64_t calls = 0;
  /// Elements and bytes of the constant tensors: weights, buffers, literals.
  int64_t parameters = 0;
  uint64_t parameterBytes = 0;
  double flops = 0;
  int64_t unknownFlops = 0;
  /// Bytes of every call's result: the activation memory without reuse.
  uint64_t intermediateBytes = 0;
};

ModuleSummary summarizeModule(const Module &m);

/// The summary as text, one fact per line.
void printSummary(const ModuleSummary &s, llvm::raw_ostream &os);

} // namespace kc
