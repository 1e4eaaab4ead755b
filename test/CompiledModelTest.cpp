//===- CompiledModelTest.cpp - What docs/api.md promises of a model -------===//
//
// A CompiledModel needs nothing of its Module once compiled; two compiled
// from one Module run at the same time on two threads and give, bit for
// bit, the outputs of one run alone; a model compiled for N threads runs on
// N threads from a thread that did not compile it.
//
//===----------------------------------------------------------------------===//
#include "ScopedThreadCount.h"
#include "TestFiles.h"
#include "TestPaths.h"

#include "kc/IR/TypeInference.h"
#include "kc/Import/ModuleLoader.h"
#include "kc/Runtime/Interpreter.h"

#include <doctest/doctest.h>
#include <omp.h>

#include <cstring>
#include <random>
#include <thread>

using namespace kc;
using test::loadTyped;

namespace {


std::unique_ptr<rt::CompiledModel> compile(const Module &m, int threads) {
  rt::CompileOptions opts;
  opts.numThreads = threads;
  auto cm = rt::CompiledModel::compile(m, opts);
  REQUIRE_MESSAGE(bool(cm), (cm ? "" : llvm::toString(cm.takeError())));
  return std::move(*cm);
}

/// Seeded normal inputs of the model's declared shapes (f32 only).
std::vector<rt::Tensor> randomInputs(const rt::CompiledModel &cm, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<rt::Tensor> inputs;
  for (const rt::TensorSpec &s : cm.inputSpecs()) {
    REQUIRE(s.dtype == DType::F32);
    rt::Tensor t = rt::Tensor::empty(s.dtype, s.shape);
    for (int64_t i = 0; i < t.numel(); ++i)
      t.data<float>()[i] = normal(rng);
    inputs.push_back(t);
  }
  return inputs;
}

bool sameBytes(const std::vector<rt::Tensor> &a, const std::vector<rt::Tensor> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].nbytes() != b[i].nbytes() || std::memcmp(a[i].raw(), b[i].raw(), a[i].nbytes()))
      return false;
  return true;
}

std::string bundled() {
  return std::string(KC_SOURCE_DIR) + "/examples/cnn_basic/model.pnnx.param";
}

/// Two models compiled from one module, each run `rounds` times on its own
/// thread at once, against one run of a third made alone.
void checkConcurrent(const std::string &path, int rounds) {
  CAPTURE(path);
  test::ScopedThreadCount restore;
  ModulePtr m = loadTyped(path);
  auto alone = compile(*m, 1);
  std::vector<rt::Tensor> inputs = randomInputs(*alone, 7);
  auto expected = alone->run(inputs);
  REQUIRE(bool(expected));
  auto a = compile(*m, 1), b = compile(*m, 1);
  int mismatches[2] = {0, 0};
  auto loop = [&](rt::CompiledModel &cm, int &bad) {
    for (int r = 0; r < rounds; ++r) {
      auto out = cm.run(inputs);
      bad += !out || !sameBytes(*out, *expected);
      if (!out)
        llvm::consumeError(out.takeError());
    }
  };
  std::thread first([&] { loop(*a, mismatches[0]); });
  std::thread second([&] { loop(*b, mismatches[1]); });
  first.join();
  second.join();
  CHECK(mismatches[0] == 0);
  CHECK(mismatches[1] == 0);
}

} // namespace

TEST_CASE("compiled model: runs after its module is gone") {
  test::ScopedThreadCount restore;
  ModulePtr m = loadTyped(bundled());
  auto cm = compile(*m, 1);
  std::vector<rt::Tensor> inputs = randomInputs(*cm, 3);
  auto before = cm->run(inputs);
  REQUIRE(bool(before));
  m.reset(); // the weights' mapped archive goes with it unless the kernels hold it
  auto after = cm->run(inputs);
  REQUIRE(bool(after));
  CHECK(sameBytes(*before, *after));
}

TEST_CASE("compiled model: a run's outputs are its caller's, untouched by later runs") {
  test::ScopedThreadCount restore;
  ModulePtr m = loadTyped(bundled());
  auto cm = compile(*m, 1);
  std::vector<rt::Tensor> a = randomInputs(*cm, 11), b = randomInputs(*cm, 12);
  auto outA = cm->run(a);
  REQUIRE(bool(outA));
  std::vector<rt::Tensor> copyA;
  for (const rt::Tensor &t : *outA)
    copyA.push_back(rt::Tensor::copyOf(t));
  // Other inputs, twice: memory the first run's outputs came from is
  // handed out again, and must not be theirs.
  for (int r = 0; r < 2; ++r) {
    auto outB = cm->run(b);
    REQUIRE(bool(outB));
    CHECK_FALSE(sameBytes(*outB, *outA));
  }
  CHECK(sameBytes(*outA, copyA));
}

TEST_CASE("compiled model: two compiled from one module run at once on two threads") {
  checkConcurrent(bundled(), 50);
  if (!test::haveDir(test::modelsDir()))
    return;
  // GEMM-heavy models: OpenBLAS and the packed kernels on both threads.
  for (const char *name : {"resnet18", "tiny_transformer"})
    checkConcurrent(test::modelsDir() + "/" + name + "/model.pnnx.param", 3);
}

TEST_CASE("compiled model: a run leaves its caller's thread count as it was") {
  test::ScopedThreadCount restore;
  ModulePtr m = loadTyped(bundled());
  auto cm = compile(*m, 1);
  std::vector<rt::Tensor> inputs = randomInputs(*cm, 5);
  // The run uses the count it was compiled for, on this thread's own
  // setting, and puts the caller's back.
  int before = 0, after = 0;
  std::thread t([&] {
    omp_set_num_threads(3);
    before = omp_get_max_threads();
    auto out = cm->run(inputs);
    REQUIRE(bool(out));
    after = omp_get_max_threads();
  });
  t.join();
  CHECK(before == 3);
  CHECK(after == 3);
}
