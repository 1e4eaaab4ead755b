//===- ConformanceTest.cpp - Every shared model agrees with PyTorch -------===//
//
// Runs each model of $KC_MODELS_DIR (default ../shared/models) on its
// in*.npy and compares with PyTorch's out*.npy, without passes and after the
// default -O pipeline. Tolerance: |a - b| <= 1e-4 + 1e-4 * |b| elementwise.
// Each model's worst absolute error is printed.
//
//===----------------------------------------------------------------------===//
#include "ReferenceRun.h"
#include "TestPaths.h"

#include "kc/Runtime/KernelIsa.h"

#include "llvm/Support/Path.h"

#include <doctest/doctest.h>

using namespace kc;

namespace {

constexpr double kAtol = 1e-4, kRtol = 1e-4;

/// Runs one model; returns the worst |a-b| over all outputs, failing the
/// test case where the tolerance is exceeded.
double runModel(const std::string &dir, test::RunConfig cfg) {
  auto checks = test::runAgainstReference(dir, cfg, kAtol, kRtol);
  REQUIRE_MESSAGE(bool(checks), (checks ? "" : llvm::toString(checks.takeError())));
  double worst = 0;
  for (size_t i = 0; i < checks->size(); ++i) {
    const test::OutputCheck &c = (*checks)[i];
    CHECK_MESSAGE(c.ok, "output " << i << ": " << c.why);
    worst = std::max(worst, c.worst);
  }
  return worst;
}

} // namespace

TEST_CASE("conformance: every shared model matches PyTorch, with and without -O, on 1 thread") {
  KC_SKIP_UNLESS_DIR(test::modelsDir(), "KC_MODELS_DIR");
  std::error_code ec;
  std::vector<std::string> dirs;
  for (llvm::sys::fs::directory_iterator it(test::modelsDir(), ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::fs::exists(it->path() + "/model.pnnx.param"))
      dirs.push_back(it->path());
  std::sort(dirs.begin(), dirs.end());
  REQUIRE(dirs.size() >= 9);
  for (const std::string &dir : dirs) {
    std::string name = llvm::sys::path::filename(dir).str();
    INFO("model " << name);
    // Kernels pick algorithms by thread count (Winograd's threshold, row
    // blocks), so one thread is a configuration of its own.
    double plain = runModel(dir, {false, 0});
    double optimized = runModel(dir, {true, 0});
    double oneThread = runModel(dir, {true, 1});
    MESSAGE(name << ": worst |a-b| = " << plain << " (no passes), " << optimized << " (-O), "
                 << oneThread << " (-O, 1 thread); " << std::string(rt::kernelIsa()) << " kernels");
  }
}
