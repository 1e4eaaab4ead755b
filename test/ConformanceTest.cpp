//===- ConformanceTest.cpp - Every real model agrees with PyTorch ---------===//
//
// Runs each model on its in*.npy and compares with PyTorch's out*.npy: the
// reference models of $KC_MODELS_DIR (default ../shared/models), the zoo of
// $KC_ZOO_DIR (default ../shared-zoo) and the zoo miniatures in test/zoo
// (all made by the real pnnx; scripts/zoo.py makes the last two), after the
// default -O pipeline on the default thread count and on one, and (but for
// the zoo) without passes. Tolerance: |a - b| <= 1e-4 + 1e-4 * |b|
// elementwise, the 1e-4 term scaled by the largest output for the zoo, the
// miniatures and the runs without passes. Each model's worst absolute error is printed.
//
//===----------------------------------------------------------------------===//
#include "ScopedThreadCount.h"
#include "TestFiles.h"
#include "TestPaths.h"

#include "kc/IR/TypeInference.h"
#include "kc/IR/Verifier.h"
#include "kc/Import/Importer.h"
#include "kc/Pass/PassManager.h"
#include "kc/Runtime/Interpreter.h"
#include "kc/Runtime/KernelIsa.h"
#include "kc/Support/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <sstream>

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

/// What running one model gave against PyTorch's outputs.
struct Outcome {
  std::string error; ///< why it did not run (import, compile, run, output count or shape)
  double worst = 0;  ///< max |a-b| over all outputs
  double scale = 0;  ///< max |b| over all outputs
  int64_t bad = 0;   ///< elements outside the tolerance
};

/// How far from PyTorch an element may be: |a - b| <= atol + 1e-4 |b|, with
/// atol 1e-4, or 1e-4 times the largest |b| of the model's outputs (for
/// networks whose outputs are all far below 1, as torchvision's
/// classifiers with their N(0, 0.01) initialization give).
enum class Tolerance { Absolute, ScaledToOutput };

Outcome runModelOn(const std::string &dir, std::vector<rt::Tensor> inputs,
                   const std::string &expectedDir, bool optimize, int threads, Tolerance tol,
                   const std::string &param = "");

/// Runs one model on its in*.npy on `threads` threads (0: the default),
/// with the default -O pipeline first if `optimize`.
Outcome runModel(const std::string &dir, bool optimize, int threads = 0,
                 Tolerance tol = Tolerance::Absolute) {
  std::vector<rt::Tensor> inputs;
  for (const std::string &p : numbered(dir, "in")) {
    auto a = readNpy(p);
    if (!a) {
      Outcome r;
      r.error = llvm::toString(a.takeError());
      return r;
    }
    inputs.push_back(toTensor(*a));
  }
  return runModelOn(dir, std::move(inputs), dir, optimize, threads, tol);
}

/// Runs the model of `dir` (its .param, or `param` with the weights of
/// `dir`) on `inputs` and compares with the out*.npy of `expectedDir`.
Outcome runModelOn(const std::string &dir, std::vector<rt::Tensor> inputs,
                   const std::string &expectedDir, bool optimize, int threads, Tolerance tol,
                   const std::string &param) {
  Outcome r;
  auto failed = [&](llvm::Error e) {
    r.error = llvm::toString(std::move(e));
    return r;
  };
  auto m = param.empty() ? importPnnx(dir + "/model.pnnx.param", "", ImportOptions{})
                         : importPnnx(param, dir + "/model.pnnx.bin", ImportOptions{});
  if (!m)
    return failed(m.takeError());
  if (llvm::Error e = inferTypes(**m))
    return failed(std::move(e));
  if (optimize) {
    PassManager pm;
    if (llvm::Error e = pm.addPipeline(defaultPipeline()))
      return failed(std::move(e));
    if (llvm::Error e = pm.run(**m))
      return failed(std::move(e));
  }
  // Kernels pick algorithms by thread count (Winograd's threshold, row
  // blocks), so one thread is a configuration of its own.
  test::ScopedThreadCount restore;
  rt::CompileOptions opts;
  opts.numThreads = threads;
  auto cm = rt::CompiledModel::compile(**m, opts);
  if (!cm)
    return failed(cm.takeError());
  auto outs = (*cm)->run(inputs);
  if (!outs)
    return failed(outs.takeError());
  auto expected = numbered(expectedDir, "out");
  if (expected.size() != outs->size()) {
    r.error =
        std::to_string(outs->size()) + " outputs, PyTorch has " + std::to_string(expected.size());
    return r;
  }
  std::vector<NpyArray> wants;
  for (size_t i = 0; i < outs->size(); ++i) {
    auto want = readNpy(expected[i]);
    if (!want)
      return failed(want.takeError());
    const rt::Tensor &got = (*outs)[i];
    if (llvm::ArrayRef<int64_t>(want->shape) != got.shape() || want->dtype != DType::F32 ||
        got.dtype() != DType::F32) {
      r.error = "output " + std::to_string(i) + " is " + std::string(dtypeName(got.dtype())) +
                rt::shapeToString(got.shape()) + ", PyTorch's " +
                std::string(dtypeName(want->dtype)) + rt::shapeToString(want->shape);
      return r;
    }
    const float *b = reinterpret_cast<const float *>(want->data.data());
    for (int64_t k = 0; k < got.numel(); ++k)
      if (std::isfinite(b[k]))
        r.scale = std::max(r.scale, std::fabs(double(b[k])));
    wants.push_back(std::move(*want));
  }
  double atol = tol == Tolerance::ScaledToOutput ? kAtol * r.scale : kAtol;
  for (size_t i = 0; i < outs->size(); ++i) {
    const rt::Tensor &got = (*outs)[i];
    const float *a = got.data<float>();
    const float *b = reinterpret_cast<const float *>(wants[i].data.data());
    for (int64_t k = 0; k < got.numel(); ++k) {
      // PyTorch's mean of nothing (NaN), logsumexp of nothing (-inf).
      if ((std::isnan(a[k]) && std::isnan(b[k])) || a[k] == b[k])
        continue;
      double d = std::fabs(double(a[k]) - double(b[k]));
      if (!(d <= atol + kRtol * std::fabs(double(b[k]))))
        ++r.bad;
      r.worst = std::max(r.worst, std::isnan(d) ? INFINITY : d);
    }
  }
  return r;
}

/// Fails the test case where `o` ran or compared badly; returns its worst error.
double expectMatch(const Outcome &o, const std::string &config) {
  CHECK_MESSAGE(o.error.empty(), config << ": " << o.error);
  CHECK_MESSAGE(o.bad == 0, config << ": " << o.bad
                                   << " elements outside the tolerance (worst |a-b| = " << o.worst
                                   << ", largest |b| = " << o.scale << ")");
  return o.worst;
}

/// The folders under `root` that hold a model.pnnx.param, sorted.
std::vector<std::string> modelDirs(const std::string &root) {
  std::error_code ec;
  std::vector<std::string> dirs;
  for (llvm::sys::fs::directory_iterator it(root, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::sys::fs::exists(it->path() + "/model.pnnx.param"))
      dirs.push_back(it->path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

} // namespace

TEST_CASE("conformance: every shared model matches PyTorch, with and without -O, on 1 thread") {
  KC_SKIP_UNLESS_DIR(test::modelsDir(), "KC_MODELS_DIR");
  std::vector<std::string> dirs = modelDirs(test::modelsDir());
  REQUIRE(dirs.size() >= 9);
  for (const std::string &dir : dirs) {
    std::string name = llvm::sys::path::filename(dir).str();
    INFO("model " << name);
    // Without passes every activation is a step of its own, rounded apart
    // from the convolution before it: yolo_small's outputs (-7 to 248) then
    // differ by up to 2.4e-4 where they cancel near -1, so the 1e-4 term is
    // scaled by the largest output, as for the zoo.
    double plain = expectMatch(runModel(dir, false, 0, Tolerance::ScaledToOutput), "no passes");
    double optimized = expectMatch(runModel(dir, true), "-O");
    double oneThread = expectMatch(runModel(dir, true, 1), "-O, 1 thread");
    MESSAGE(name << ": worst |a-b| = " << plain << " (no passes), " << optimized << " (-O), "
                 << oneThread << " (-O, 1 thread); " << std::string(rt::kernelIsa()) << " kernels");
  }
}

// The zoo (scripts/zoo.py): torchvision models converted by the real pnnx,
// single layers cut from them (<zoo>/layers) and one model per operator
// family (<zoo>/ops, scripts/op_models.py), made outside the tree. A
// model with an op kc has no kernel for is reported and passed over (kc
// refuses it at compile time, naming the op: a coverage gap, not a wrong
// answer); any other failure to run and every answer outside the tolerance
// fails the test. -O only, at the default thread count and on 1 thread; the
// reference models and the miniatures cover the unoptimized path.
TEST_CASE("conformance: every zoo model present matches PyTorch, -O, default and 1 thread") {
  KC_SKIP_UNLESS_DIR(test::zooDir(), "KC_ZOO_DIR");
  std::vector<std::string> dirs = modelDirs(test::zooDir());
  for (const char *set : {"/layers", "/ops"}) {
    std::vector<std::string> more = modelDirs(test::zooDir() + set);
    dirs.insert(dirs.end(), more.begin(), more.end());
  }
  if (dirs.empty()) {
    MESSAGE("skipped: no models in " << test::zooDir() << " (make them with scripts/zoo.py make)");
    return;
  }
  std::vector<std::string> notRun;
  for (const std::string &dir : dirs) {
    std::string name = llvm::sys::path::filename(dir).str();
    INFO("zoo model " << name);
    Outcome o = runModel(dir, true, 0, Tolerance::ScaledToOutput);
    if (o.error.find("has no kernel in the interpreter") != std::string::npos) {
      notRun.push_back(name + " (" + o.error + ")");
      continue;
    }
    double optimized = expectMatch(o, "-O");
    Outcome one = runModel(dir, true, 1, Tolerance::ScaledToOutput);
    double oneThread = expectMatch(one, "-O, 1 thread");
    MESSAGE(name << ": worst |a-b| = " << optimized << " (-O), " << oneThread
                 << " (-O, 1 thread), largest |b| = " << o.scale << "; "
                 << std::string(rt::kernelIsa()) << " kernels");
  }
  for (const std::string &n : notRun)
    MESSAGE("not run, an op without a kernel: " << n);
}

// Miniatures of zoo architectures, committed (scripts/zoo.py fixtures), so
// that the zoo's layer kinds are checked where the zoo is absent, as in CI.
TEST_CASE("conformance: the zoo miniatures in test/zoo match PyTorch, with and without -O") {
  std::vector<std::string> dirs = modelDirs(std::string(KC_SOURCE_DIR) + "/test/zoo");
  REQUIRE(dirs.size() == 3);
  for (const std::string &dir : dirs) {
    std::string name = llvm::sys::path::filename(dir).str();
    INFO("model " << name);
    auto run = [&](bool optimize, int threads) {
      return runModel(dir, optimize, threads, Tolerance::ScaledToOutput);
    };
    double plain = expectMatch(run(false, 0), "no passes");
    double optimized = expectMatch(run(true, 0), "-O");
    Outcome one = run(true, 1);
    double oneThread = expectMatch(one, "-O, 1 thread");
    MESSAGE(name << ": worst |a-b| = " << plain << " (no passes), " << optimized << " (-O), "
                 << oneThread << " (-O, 1 thread), largest |b| = " << one.scale);
  }
}

/// Element i of input `salt` of a shapes pair: the values
/// test/shapes/make_pairs.py gives PyTorch, exactly (24-bit integers
/// scaled by a power of two).
rt::Tensor hashedInput(const rt::Shape &shape, uint64_t salt) {
  rt::Tensor t = rt::Tensor::empty(DType::F32, shape);
  float *p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint32_t h = uint32_t((uint64_t(i) + salt * 7919) * 2654435761u);
    p[i] = float(h >> 8) / float(1 << 23) - 1.f;
  }
  return t;
}

/// `2x3x224x224` as a shape.
rt::Shape parseShape(llvm::StringRef word) {
  rt::Shape shape;
  llvm::SmallVector<llvm::StringRef, 6> dims;
  word.split(dims, 'x');
  for (llvm::StringRef d : dims)
    shape.push_back(std::stoll(d.str()));
  return shape;
}

/// The model of `dir` (its .param, or `param`) on `inputs`, without passes
/// and after -O on one thread, against the out*.npy of `expectedDir`; the
/// worst errors, as a message.
std::string matchesAtShape(const std::string &dir, const std::vector<rt::Tensor> &inputs,
                           const std::string &expectedDir, const std::string &param = "") {
  auto run = [&](bool optimize, int threads) {
    return runModelOn(dir, inputs, expectedDir, optimize, threads, Tolerance::Absolute, param);
  };
  double plain = expectMatch(run(false, 0), "no passes");
  double optimized = expectMatch(run(true, 1), "-O, 1 thread");
  std::ostringstream os;
  os << "worst |a-b| = " << plain << " (no passes), " << optimized << " (-O, 1 thread)";
  return os.str();
}

TEST_CASE("conformance: reference models at other input shapes match PyTorch") {
  KC_SKIP_UNLESS_DIR(test::modelsDir(), "KC_MODELS_DIR");
  std::string root = std::string(KC_SOURCE_DIR) + "/test/shapes";
  test::ListFile list(root + "/pairs.txt");
  int pairs = 0;
  for (const test::ListFile::Line &line : list.lines()) {
    llvm::SmallVector<llvm::StringRef, 4> words;
    line.text.split(words, ' ', -1, false);
    REQUIRE(words.size() >= 2);
    std::string name = words[0].str(), pair = name;
    std::vector<rt::Tensor> inputs;
    for (size_t k = 1; k < words.size(); ++k) {
      inputs.push_back(hashedInput(parseShape(words[k]), k - 1));
      pair += "-" + words[k].str();
    }
    INFO("pair " << pair);
    MESSAGE(pair << ": "
                 << matchesAtShape(test::modelsDir() + "/" + name, inputs, root + "/" + pair));
    ++pairs;
  }
  CHECK(pairs >= 8);
}

// pnnx's own dynamic forms (`?` dims; reshapes whose shape is an
// expression of sizes, `[size(@0,0),size(@0,1),3,4,16]`), each model at
// every shape test/shapes/dynamic.txt lists, against PyTorch's outputs of
// the original module.
TEST_CASE("conformance: models converted with ? dims match PyTorch at several shapes") {
  KC_SKIP_UNLESS_DIR(test::modelsDir(), "KC_MODELS_DIR");
  std::string root = std::string(KC_SOURCE_DIR) + "/test/shapes";
  test::ListFile list(root + "/dynamic.txt");
  int models = 0;
  for (const test::ListFile::Line &line : list.lines()) {
    llvm::SmallVector<llvm::StringRef, 6> words;
    line.text.split(words, ' ', -1, false);
    REQUIRE(words.size() >= 5); // model, two conversion shapes, two run shapes at least
    std::string name = words[0].str(), param = root + "/dynamic/" + name + ".pnnx.param";
    for (size_t k = 3; k < words.size(); ++k) {
      std::string pair = name + "-" + words[k].str();
      INFO("model " << param << " at " << words[k].str());
      std::vector<rt::Tensor> inputs{hashedInput(parseShape(words[k]), 0)};
      MESSAGE(name << " (? dims) at " << words[k].str() << ": "
                   << matchesAtShape(test::modelsDir() + "/" + name, inputs, root + "/" + pair,
                                     param));
    }
    ++models;
  }
  CHECK(models >= 3);
}

TEST_CASE("conformance: zero-size fixtures match PyTorch, with and without -O") {
  // test/fixtures/zero-size/make.py made them with pnnx from PyTorch 1.13.1.
  std::vector<std::string> dirs =
      modelDirs(std::string(KC_SOURCE_DIR) + "/test/fixtures/zero-size");
  REQUIRE(dirs.size() >= 59);
  for (const std::string &dir : dirs) {
    INFO("fixture " << llvm::sys::path::filename(dir).str());
    expectMatch(runModel(dir, false), "no passes");
    expectMatch(runModel(dir, true), "-O");
    expectMatch(runModel(dir, true, 1), "-O, 1 thread");
  }
}
