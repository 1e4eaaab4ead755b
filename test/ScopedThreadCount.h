//===- ScopedThreadCount.h - Restores the thread count after a test -------===//
//
// Compiling a model with CompileOptions::numThreads sets the process-wide
// OpenMP thread count; tests that choose one put the old count back.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Runtime/Interpreter.h"

#include <omp.h>

namespace kc::test {

class ScopedThreadCount {
public:
  ScopedThreadCount() : saved_(omp_get_max_threads()) {}
  ~ScopedThreadCount() { rt::setNumThreads(saved_); }
  ScopedThreadCount(const ScopedThreadCount &) = delete;
  ScopedThreadCount &operator=(const ScopedThreadCount &) = delete;

private:
  int saved_;
};

} // namespace kc::test
