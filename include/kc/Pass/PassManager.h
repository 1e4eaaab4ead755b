//===- kc/Pass/PassManager.h - Pipelines and instrumentation ----*- C++ -*-===//
///
/// \file
/// A PassManager runs a pipeline of passes over a Module, re-infers types
/// after each pass (types are derived data), and provides the instrumentation
/// of `kc-opt`: IR printing before/after passes, verification after each
/// pass, timing and statistics.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Pass/Pass.h"

#include "llvm/Support/raw_ostream.h"

#include <set>

namespace kc {

struct PassInstrumentation {
  bool verifyEach = true;
  bool printAfterAll = false;
  bool printBeforeAll = false;
  std::set<std::string> printBefore; ///< pass names
  std::set<std::string> printAfter;
  bool timing = false;
  bool statistics = false;
  /// Where IR dumps, timing and statistics go.
  llvm::raw_ostream *out = &llvm::errs();
};

class PassManager {
public:
  PassManager() = default;
  void addPass(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  /// Parses a pipeline such as `fold-constants,simplify-expr{max-iterations=2},cse`
  /// and appends its passes.
  llvm::Error addPipeline(llvm::StringRef pipeline);
  size_t size() const { return passes_.size(); }
  llvm::ArrayRef<std::unique_ptr<Pass>> passes() const { return passes_; }

  PassInstrumentation &instrumentation() { return instr_; }

  /// Runs every pass in order; stops at the first error, which names the pass.
  llvm::Error run(Module &m);

private:
  std::vector<std::unique_ptr<Pass>> passes_;
  PassInstrumentation instr_;
};

/// The default optimizing pipeline run by `kc-opt -O` and `kc-run -O`.
llvm::StringRef defaultPipeline();

} // namespace kc
