//===- ConformanceTest.cpp - Every shared model agrees with PyTorch -------===//
//
// Runs each model of $KC_MODELS_DIR (default ../shared/models) on its
// in*.npy and compares with PyTorch's out*.npy, without passes and after the
// default -O pipeline. Tolerance: |a - b| <= 1e-4 + 1e-4 * |b| elementwise.
// Each model's worst absolute error is printed.
//
//===----------------------------------------------------------------------===//
#include "ScopedThreadCount.h"
#include "TestPaths.h"

#include "kc/IR/TypeInference.h"
#include "kc/IR/Verifier.h"
#include "kc/Import/Importer.h"
#include "kc/Pass/PassManager.h"
#include "kc/Runtime/Interpreter.h"
#include "kc/Runtime/KernelIsa.h"
#include "kc/Support/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>

using namespace kc;

namespace {

constexpr double kAtol = 1e-4, kRtol = 1e-4;

std::vector<std::string> numbered(const std::string &dir, const char *prefix) {
  std::vector<std::string> r;
  for (int i = 0;; ++i) {
    std::string p = dir + "/" + prefix + std::to_string(i) + ".npy";
    if (!llvm::sys::fs::exists(p))
      return r;
    r.push_back(p);
  }
}

rt::Tensor toTensor(const NpyArray &a) {
  rt::Tensor t = rt::Tensor::empty(a.dtype, a.shape);
  if (t.nbytes())
    std::memcpy(t.raw(), a.data.data(), t.nbytes());
  return t;
}

/// Runs one model on `threads` threads (0: the default); returns the worst
/// |a-b| over all outputs, failing the test case where the tolerance is
/// exceeded.
double runModel(const std::string &dir, bool optimize, int threads = 0) {
  auto m = importPnnx(dir + "/model.pnnx.param", "", ImportOptions{});
  REQUIRE_MESSAGE(bool(m), (m ? "" : llvm::toString(m.takeError())));
  REQUIRE(!inferTypes(**m));
  if (optimize) {
    PassManager pm;
    REQUIRE(!pm.addPipeline(defaultPipeline()));
    llvm::Error e = pm.run(**m);
    REQUIRE_MESSAGE(!e, llvm::toString(std::move(e)));
  }
  // Kernels pick algorithms by thread count (Winograd's threshold, row
  // blocks), so one thread is a configuration of its own.
  test::ScopedThreadCount restore;
  rt::CompileOptions opts;
  opts.numThreads = threads;
  auto cm = rt::CompiledModel::compile(**m, opts);
  REQUIRE_MESSAGE(bool(cm), (cm ? "" : llvm::toString(cm.takeError())));
  std::vector<rt::Tensor> inputs;
  for (const std::string &p : numbered(dir, "in")) {
    auto a = readNpy(p);
    REQUIRE(bool(a));
    inputs.push_back(toTensor(*a));
  }
  auto outs = (*cm)->run(inputs);
  REQUIRE_MESSAGE(bool(outs), (outs ? "" : llvm::toString(outs.takeError())));
  auto expected = numbered(dir, "out");
  REQUIRE(expected.size() == outs->size());
  double worst = 0;
  for (size_t i = 0; i < outs->size(); ++i) {
    auto want = readNpy(expected[i]);
    REQUIRE(bool(want));
    const rt::Tensor &got = (*outs)[i];
    REQUIRE(llvm::ArrayRef<int64_t>(want->shape) == got.shape());
    REQUIRE(want->dtype == DType::F32);
    REQUIRE(got.dtype() == DType::F32);
    const float *a = got.data<float>();
    const float *b = reinterpret_cast<const float *>(want->data.data());
    int64_t bad = 0;
    for (int64_t k = 0; k < got.numel(); ++k) {
      if (std::isnan(a[k]) && std::isnan(b[k])) // PyTorch's mean of nothing
        continue;
      double d = std::fabs(double(a[k]) - double(b[k]));
      if (!(d <= kAtol + kRtol * std::fabs(double(b[k]))))
        ++bad;
      worst = std::max(worst, std::isnan(d) ? INFINITY : d);
    }
    CHECK_MESSAGE(bad == 0, "output " << i << ": " << bad << " of " << got.numel()
                                      << " elements outside the tolerance");
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
    double plain = runModel(dir, false);
    double optimized = runModel(dir, true);
    double oneThread = runModel(dir, true, 1);
    MESSAGE(name << ": worst |a-b| = " << plain << " (no passes), " << optimized << " (-O), "
                 << oneThread << " (-O, 1 thread); " << std::string(rt::kernelIsa()) << " kernels");
  }
}

TEST_CASE("conformance: zero-size fixtures match PyTorch, with and without -O") {
  // test/fixtures/zero-size/make.py made them with pnnx from PyTorch 1.13.1.
  std::string root = std::string(KC_SOURCE_DIR) + "/test/fixtures/zero-size";
  std::error_code ec;
  std::vector<std::string> dirs;
  for (llvm::sys::fs::directory_iterator it(root, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::sys::fs::exists(it->path() + "/model.pnnx.param"))
      dirs.push_back(it->path());
  std::sort(dirs.begin(), dirs.end());
  REQUIRE(dirs.size() >= 48);
  for (const std::string &dir : dirs) {
    INFO("fixture " << llvm::sys::path::filename(dir).str());
    CHECK(runModel(dir, false) <= kAtol);
    CHECK(runModel(dir, true) <= kAtol);
    CHECK(runModel(dir, true, 1) <= kAtol);
  }
}
