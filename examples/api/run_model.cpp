//===- run_model.cpp - kc's C++ API from end to end -----------------------===//
//
// Loads a PNNX model, optimizes it, compiles it with options, runs it
// repeatedly and from two threads at once, checks its outputs against expected
// .npy files and prints its profile:
//
//   kc-example-api MODEL.pnnx.param [--input in0.npy ...] [--expect out0.npy ...]
//
// docs/api.md explains it part by part; its C++ blocks, in order, are this
// file below this comment (lit-tests/docs/snippets.test checks).
//
//===----------------------------------------------------------------------===//
#include "kc/IR/TypeInference.h"
#include "kc/IR/Verifier.h"
#include "kc/Import/ModuleLoader.h"
#include "kc/Pass/PassManager.h"
#include "kc/Runtime/Interpreter.h"
#include "kc/Support/Npy.h"
#include "kc/Support/Version.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using kc::rt::CompiledModel;
using kc::rt::Tensor;
using kc::rt::TensorSpec;

/// Prints `error` (every message it holds) after `where`; returns 1.
static int fail(llvm::StringRef where, llvm::Error error) {
  llvm::errs() << "kc-example-api: " << where << ": error: " << llvm::toString(std::move(error))
               << "\n";
  return 1;
}

/// A model file (`.pnnx.param`, its weights read from the `.pnnx.bin`
/// beside it; or kc text), its types inferred and checked.
static llvm::Expected<kc::ModulePtr> load(llvm::StringRef path) {
  auto module = kc::loadModule(path);
  if (!module)
    return module.takeError();
  if (llvm::Error e = kc::inferTypes(**module))
    return e;
  if (llvm::Error e = kc::verifyModule(**module))
    return e;
  return module;
}

/// The default pipeline (what `kc-opt -O` runs), then any other passes by
/// name, with options: "cse,simplify-expr{max-iterations=4}".
static llvm::Error optimize(kc::Module &module, llvm::StringRef morePasses = "") {
  kc::PassManager pm;
  pm.instrumentation().verifyEach = false; // verification after each pass
  if (llvm::Error e = pm.addPipeline(kc::defaultPipeline()))
    return e;
  if (!morePasses.empty())
    if (llvm::Error e = pm.addPipeline(morePasses))
      return e;
  return pm.run(module);
}

/// An input read from a .npy file, checked against what the model takes.
/// The tensor uses the array's bytes where they are, kept alive with it.
static llvm::Expected<Tensor> readInput(const std::string &path, const TensorSpec &spec) {
  auto array = kc::readNpy(path);
  if (!array)
    return array.takeError();
  if (array->dtype != spec.dtype ||
      llvm::ArrayRef<int64_t>(array->shape) != llvm::ArrayRef<int64_t>(spec.shape))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "%" + llvm::Twine(spec.name) + " takes " + kc::dtypeName(spec.dtype) +
            kc::rt::shapeToString(spec.shape) + ", the file holds " + kc::dtypeName(array->dtype) +
            kc::rt::shapeToString(array->shape));
  auto owner = std::make_shared<kc::NpyArray>(std::move(*array));
  return Tensor::view(owner->dtype, owner->shape, owner->data.data(), owner);
}

/// The largest |got - want| over two f32 tensors of one shape (infinity if
/// the shapes differ).
static double maxAbsDiff(const Tensor &got, const kc::NpyArray &want) {
  if (got.dtype() != kc::DType::F32 || want.dtype != kc::DType::F32 ||
      got.shape() != llvm::ArrayRef<int64_t>(want.shape))
    return INFINITY;
  const float *a = got.data<float>();
  const float *b = reinterpret_cast<const float *>(want.data.data());
  double worst = 0;
  for (int64_t i = 0; i < got.numel(); ++i)
    worst = std::max(worst, double(std::fabs(a[i] - b[i])));
  return worst;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    llvm::errs() << "usage: kc-example-api MODEL.pnnx.param [--input X.npy ...] "
                    "[--expect Y.npy ...]\n";
    return 2;
  }
  std::string modelPath = argv[1];
  std::vector<std::string> inputPaths, expectPaths;
  for (int i = 2; i + 1 < argc; i += 2)
    (std::strcmp(argv[i], "--input") == 0 ? inputPaths : expectPaths).push_back(argv[i + 1]);
  llvm::outs() << "kc " << kc::version() << "\n";

  // Load and optimize.
  auto module = load(modelPath);
  if (!module)
    return fail(modelPath, module.takeError());
  if (llvm::Error e = optimize(**module))
    return fail(modelPath, std::move(e));

  // Compile: kernels chosen and weights packed once, activation memory planned.
  kc::rt::CompileOptions options;
  options.numThreads = 1;                   // 0: OMP_NUM_THREADS, or every core
  options.profile = true;                   // time each step (see profile() below)
  options.maxMemoryBytes = size_t(1) << 30; // refuse plans above 1 GiB
  auto model = CompiledModel::compile(**module, options);
  if (!model)
    return fail(modelPath, model.takeError());

  // Inspect the shapes.
  for (const TensorSpec &s : (*model)->inputSpecs())
    llvm::outs() << "input %" << s.name << ": " << kc::dtypeName(s.dtype)
                 << kc::rt::shapeToString(s.shape) << "\n";
  for (const TensorSpec &s : (*model)->outputSpecs())
    llvm::outs() << "output " << s.name << ": " << kc::dtypeName(s.dtype)
                 << kc::rt::shapeToString(s.shape) << "\n";
  llvm::outs() << "activation memory: " << (*model)->arenaBytes() << " bytes in "
               << (*model)->numSteps() << " steps\n";

  // Inputs: the .npy files given, or zeros of the declared shapes.
  std::vector<Tensor> inputs;
  llvm::ArrayRef<TensorSpec> specs = (*model)->inputSpecs();
  for (size_t i = 0; i < specs.size(); ++i) {
    if (i >= inputPaths.size()) {
      inputs.push_back(Tensor::empty(specs[i].dtype, specs[i].shape));
      continue;
    }
    auto t = readInput(inputPaths[i], specs[i]);
    if (!t)
      return fail(inputPaths[i], t.takeError());
    inputs.push_back(std::move(*t));
  }

  // Run repeatedly: each run returns new output tensors.
  std::vector<Tensor> outputs;
  auto start = std::chrono::steady_clock::now();
  const int runs = 10;
  for (int r = 0; r < runs; ++r) {
    auto result = (*model)->run(inputs);
    if (!result)
      return fail(modelPath, result.takeError());
    outputs = std::move(*result);
  }
  std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
  llvm::outs() << runs << " runs, " << llvm::format("%.3f", elapsed.count() / runs) << " ms each\n";

  // Concurrently: one CompiledModel runs on this thread and a second one at
  // the same time, each run with its own activations and scratch.
  std::vector<Tensor> fromThread;
  llvm::Error threadError = llvm::Error::success();
  std::thread worker([&] {
    auto result = (*model)->run(inputs);
    if (!result) {
      threadError = result.takeError();
      return;
    }
    fromThread = std::move(*result);
  });
  auto here = (*model)->run(inputs);
  worker.join();
  if (threadError)
    return fail("second thread", std::move(threadError));
  if (!here)
    return fail(modelPath, here.takeError());
  for (size_t i = 0; i < outputs.size(); ++i)
    if (std::memcmp(outputs[i].raw(), fromThread[i].raw(), outputs[i].nbytes()) != 0 ||
        std::memcmp(outputs[i].raw(), (*here)[i].raw(), outputs[i].nbytes()) != 0)
      return fail("second thread",
                  llvm::createStringError(llvm::inconvertibleErrorCode(),
                                          "output " + std::to_string(i) + " differs"));

  // Check against expected outputs.
  int status = 0;
  for (size_t i = 0; i < expectPaths.size() && i < outputs.size(); ++i) {
    auto want = kc::readNpy(expectPaths[i]);
    if (!want)
      return fail(expectPaths[i], want.takeError());
    double diff = maxAbsDiff(outputs[i], *want);
    bool ok = diff <= 1e-4;
    llvm::outs() << "output " << i << " vs " << expectPaths[i]
                 << ": max |a-b| = " << llvm::format("%.3g", diff) << (ok ? ", ok" : ", MISMATCH")
                 << "\n";
    if (!ok)
      status = 1;
  }

  // The profile: per step, its shapes, FLOPs and time over the runs so far.
  for (const kc::rt::OpProfile &p : (*model)->profile()) {
    double ms = p.totalMs / double(std::max<int64_t>(p.calls, 1));
    llvm::outs() << llvm::format("%-28s %-14s %-20s %8.4f ms", p.op.c_str(), p.name.c_str(),
                                 p.outputShapes.c_str(), ms);
    if (p.flops && ms > 0)
      llvm::outs() << llvm::format("  %7.2f GFLOP/s", *p.flops / (ms * 1e6));
    llvm::outs() << "\n";
  }

  // Errors are values: a run with the wrong inputs reports what it expected.
  auto wrong = (*model)->run({});
  if (!wrong)
    llvm::outs() << "a run without inputs: " << llvm::toString(wrong.takeError()) << "\n";
  return status;
}
