//===- FuseOps.h - The fuse-ops pass on a test's module ---------*- C++ -*-===//
///
/// \file
/// Tests of fused kernels build main by hand; the fuse-ops pass groups its
/// calls as -O would, so that the interpreter joins them.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Pass/PassManager.h"

#include <doctest/doctest.h>

namespace kc::test {

inline void fuseOps(Module &m) {
  PassManager pm;
  if (llvm::Error e = pm.addPipeline("fuse-ops"))
    FAIL(llvm::toString(std::move(e)));
  if (llvm::Error e = pm.run(m))
    FAIL(llvm::toString(std::move(e)));
}

} // namespace kc::test
