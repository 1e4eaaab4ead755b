//===- ConcurrencyTest.cpp - One model run from many threads at once ------===//
//
// CompiledModel::run called from 4 threads at once, 200 runs each, on two
// models bundled with the project (examples/cnn_basic and the miniature
// MobileNetV3 of test/zoo, optimized with -O): each thread runs its own
// input (the model's input scaled by a factor of its own), and every output
// of every run must equal, byte for byte, what a run of that input alone
// gave before. Runs that shared activations, scratch or a half-packed
// weight would mix their threads' inputs. The models are compiled for 2
// OpenMP threads, so each run also opens teams of its own, and a fifth
// configuration gives each run its own thread count.
//
//===----------------------------------------------------------------------===//
#include "ReferenceRun.h"
#include "ScopedThreadCount.h"

#include "kc/Runtime/Interpreter.h"
#include "kc/Support/Npy.h"

#include <doctest/doctest.h>
#include <omp.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

using namespace kc;

namespace {

constexpr int kThreads = 4, kRuns = 200;

std::vector<rt::Tensor> scaledInputs(const std::string &dir, float factor) {
  std::vector<rt::Tensor> in;
  for (const std::string &p : test::numberedNpy(dir, "in")) {
    auto a = readNpy(p);
    REQUIRE_MESSAGE(bool(a), llvm::toString(a.takeError()));
    rt::Tensor t = test::tensorOf(*a);
    REQUIRE(t.dtype() == DType::F32);
    for (int64_t i = 0; i < t.numel(); ++i)
      t.data<float>()[i] *= factor;
    in.push_back(t);
  }
  return in;
}

bool sameBytes(const std::vector<rt::Tensor> &a, const std::vector<rt::Tensor> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].shape() != b[i].shape() || a[i].nbytes() != b[i].nbytes() ||
        std::memcmp(a[i].raw(), b[i].raw(), a[i].nbytes()) != 0)
      return false;
  return true;
}

/// How the caller's threads are made: std::thread, or the threads of an
/// OpenMP parallel region of its own (inside which every team kc opens
/// has one thread, and a worksharing loop kc runs outside a team of its
/// own would be shared out among the caller's threads).
enum class Callers { Threads, OmpRegion };

void runConcurrently(const std::string &dir, bool perRunThreads,
                     Callers callers = Callers::Threads) {
  INFO(dir << (perRunThreads ? ", threads per run" : "")
           << (callers == Callers::OmpRegion ? ", from an OpenMP region" : ""));
  test::ScopedThreadCount restore;
  auto m = test::loadForRun(dir + "/model.pnnx.param", test::RunConfig{true, 2});
  REQUIRE_MESSAGE(bool(m), llvm::toString(m.takeError()));
  rt::CompileOptions opts;
  opts.numThreads = 2;
  auto cm = rt::CompiledModel::compile(**m, opts);
  REQUIRE_MESSAGE(bool(cm), llvm::toString(cm.takeError()));
  rt::CompiledModel &model = **cm;

  // Each thread's input and what a run of it alone gives.
  std::vector<std::vector<rt::Tensor>> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(scaledInputs(dir, 1.f + 0.25f * float(t)));
    auto out = model.run(inputs.back());
    REQUIRE_MESSAGE(bool(out), llvm::toString(out.takeError()));
    expected.push_back(std::move(*out));
  }
  for (int t = 1; t < kThreads; ++t)
    REQUIRE(!sameBytes(expected[0], expected[t])); // the inputs tell the runs apart

  std::atomic<int> wrong{0}, failed{0}, leaked{0};
  const int runs = callers == Callers::OmpRegion ? kRuns / 10 : kRuns;
  auto caller = [&](int t) {
    omp_set_num_threads(3); // the caller's own setting, which runs must not change
    rt::RunOptions ro;
    for (int r = 0; r < runs; ++r) {
      if (perRunThreads)
        ro.numThreads = 1 + (r + t) % 2;
      auto out = model.run(inputs[size_t(t)], ro);
      if (!out) {
        llvm::consumeError(out.takeError());
        ++failed;
      } else if (!sameBytes(*out, expected[size_t(t)])) {
        ++wrong;
      }
      leaked += omp_get_max_threads() != 3;
    }
  };
  if (callers == Callers::OmpRegion) {
#pragma omp parallel num_threads(kThreads)
    caller(omp_get_thread_num());
  } else {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back(caller, t);
    for (std::thread &th : threads)
      th.join();
  }
  MESSAGE(dir << ": " << kThreads << " threads x " << runs << " runs, " << wrong.load()
              << " wrong, " << failed.load() << " failed");
  CHECK(failed.load() == 0);
  CHECK(wrong.load() == 0);
  CHECK(leaked.load() == 0);
}

} // namespace

TEST_CASE("concurrency: one model run from 4 threads at once") {
  for (const char *dir : {"/examples/cnn_basic", "/test/zoo/tiny_mobilenet_v3"})
    runConcurrently(std::string(KC_SOURCE_DIR) + dir, false);
  runConcurrently(std::string(KC_SOURCE_DIR) + "/examples/cnn_basic", true);
}

TEST_CASE("concurrency: one model run from the threads of the caller's OpenMP region") {
  // Kernels that share a loop out over their team (`omp for`) must share
  // it over a team of their own: bound to the caller's region, each
  // caller's run would do only its share of its own loop.
  for (const char *dir : {"/examples/cnn_basic", "/test/zoo/tiny_mobilenet_v3"})
    runConcurrently(std::string(KC_SOURCE_DIR) + dir, false, Callers::OmpRegion);
}
