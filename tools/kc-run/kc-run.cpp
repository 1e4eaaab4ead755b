//===- kc-run.cpp - Execute a model ---------------------------------------===//
//
// Loads a PNNX model (or kc text), optionally optimizes it, runs it on .npy
// inputs (or seeded random ones of the declared shapes) and prints, checks,
// saves, times or profiles the outputs.
//
//===----------------------------------------------------------------------===//
#include "../common/Diagnostics.h"
#include "../common/InputShape.h"
#include "../common/OpenBlasCore.h"
#include "../common/ToolVersion.h"
#include "kc/IR/Op.h"
#include "kc/IR/TypeInference.h"
#include "kc/IR/Verifier.h"
#include "kc/Import/ModuleLoader.h"
#include "kc/Pass/PassManager.h"
#include "kc/Runtime/Interpreter.h"
#include "kc/Runtime/KernelIsa.h"
#include "kc/Support/Npy.h"
#include "kc/Support/OutputFile.h"
#include "kc/Support/Quote.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <new>
#include <random>

using namespace kc;
namespace cl = llvm::cl;

static cl::OptionCategory runCat("kc-run options");
static cl::opt<bool> listOps("list-ops",
                             cl::desc("Print the op coverage table (Markdown) and exit"),
                             cl::cat(runCat));
static cl::opt<std::string> coverageFile(
    "coverage",
    cl::desc("Count the op types listed in this file (one a line) that kc-run runs, print the "
             "count and the others, and exit"),
    cl::value_desc("op-types.txt"), cl::cat(runCat));
static cl::opt<std::string> modelPath(cl::Positional,
                                      cl::desc("<model .pnnx.param or .kc>"), cl::cat(runCat));
static cl::list<std::string> inputFiles("input", cl::desc("Input .npy, one per model input, in order"),
                                        cl::value_desc("file.npy"), cl::cat(runCat));
static cl::alias inputAlias("i", cl::desc("Alias for --input"), cl::aliasopt(inputFiles),
                            cl::cat(runCat));
static cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Shape of the random input, one per model input, e.g. 2x3x224x224 (default: the "
             "declared shape)"),
    cl::value_desc("AxBx..."), cl::cat(runCat));
static cl::list<std::string> expectFiles("expect", cl::desc("Expected output .npy, one per output"),
                                         cl::value_desc("file.npy"), cl::cat(runCat));
static cl::opt<double> relTol("rtol", cl::desc("Relative tolerance of --expect"), cl::init(1e-4),
                            cl::cat(runCat));
static cl::opt<double> absTol("atol", cl::desc("Absolute tolerance of --expect"), cl::init(1e-4),
                            cl::cat(runCat));
static cl::opt<std::string> outputDir("output-dir", cl::desc("Write out0.npy, out1.npy, ... here"),
                                      cl::value_desc("dir"), cl::cat(runCat));
static cl::opt<bool> optimize("O", cl::desc("Run the default optimizing pipeline first"),
                              cl::cat(runCat));
static cl::opt<std::string> pipeline("p", cl::desc("Pass pipeline to run first"),
                                     cl::value_desc("pipeline"), cl::cat(runCat));
static cl::opt<unsigned> threads("threads", cl::desc("Threads (default: all cores)"), cl::init(0),
                            cl::cat(runCat));
static cl::opt<unsigned> benchRuns("bench", cl::desc("Time N runs and print min/median/max"),
                              cl::init(0), cl::value_desc("N"), cl::cat(runCat));
static cl::opt<unsigned> warmup("warmup", cl::desc("Untimed runs before --bench"), cl::init(3),
                           cl::value_desc("M"), cl::cat(runCat));
static cl::opt<bool> profileOps("profile", cl::desc("Print a per-op time table"), cl::cat(runCat));
static cl::opt<bool> checkNan("check-nan", cl::desc("Fail if an op produces NaN"), cl::cat(runCat));
static cl::opt<unsigned> seed("seed", cl::desc("Seed of the random inputs"), cl::init(0),
                              cl::cat(runCat));
static cl::opt<unsigned> maxMemoryMiB(
    "max-memory", cl::desc("Most activation memory a model may plan, in MiB (default: all RAM)"),
    cl::value_desc("MiB"), cl::init(0), cl::cat(runCat));
static cl::opt<bool> quiet("q", cl::desc("Print only errors and the bench line"), cl::cat(runCat));
static cl::list<std::string> plugins("load-pass-plugin",
                                     cl::desc("Load passes from a shared library (for -p)"),
                                     cl::value_desc("path"), cl::cat(runCat));

/// More threads than any machine kc runs on has cores; OpenMP would try to
/// start every one of them.
constexpr unsigned kMaxThreads = 1024;

static constexpr const char *kTool = "kc-run";

/// An error about the model (or about the file the message names itself).
static int fail(llvm::Error e) { return tools::reportError(kTool, modelPath, std::move(e)); }
static int fail(const llvm::Twine &msg) { return tools::reportError(kTool, modelPath, msg); }
/// A mistake in the command line itself, which concerns no file.
static int usageError(const llvm::Twine &msg) { return tools::reportError(kTool, "", msg); }

static double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

static size_t peakRssBytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return size_t(std::stoull(line.substr(6))) * 1024;
  return 0;
}

static llvm::Expected<rt::Tensor> tensorFromNpy(const std::string &path, const rt::TensorSpec &spec,
                                                size_t index) {
  auto a = readNpy(path);
  if (!a)
    return a.takeError();
  // Any size of the declared element type and rank: other sizes than the
  // declared ones run on a plan of their own.
  if (a->dtype != spec.dtype || a->shape.size() != spec.shape.size())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        path + ": error: input " + std::to_string(index) + " (%" + spec.name + ") must be " +
            dtypeName(spec.dtype).str() + " of rank " + std::to_string(spec.shape.size()) +
            " (the model declares " + typeToString(tensorType(spec.dtype, spec.shape)) +
            "), the file holds " + dtypeName(a->dtype).str() +
            clipInput(rt::shapeToString(a->shape)));
  rt::Tensor t = rt::Tensor::empty(a->dtype, a->shape);
  if (t.nbytes()) // an empty array's data may be a null pointer
    std::memcpy(t.raw(), a->data.data(), t.nbytes());
  return t;
}

static rt::Tensor randomTensor(const rt::TensorSpec &spec, std::mt19937 &rng) {
  rt::Tensor t = rt::Tensor::empty(spec.dtype, spec.shape);
  std::normal_distribution<float> normal;
  int64_t n = t.numel();
  switch (spec.dtype) {
  case DType::F32:
    for (int64_t i = 0; i < n; ++i)
      t.data<float>()[i] = normal(rng);
    break;
  case DType::I64:
    for (int64_t i = 0; i < n; ++i)
      t.data<int64_t>()[i] = int64_t(rng() % 10);
    break;
  default:
    break; // zeros
  }
  return t;
}

/// Compares with max |a-b| <= atol + rtol*|b|; returns the worst excess.
static bool compare(const rt::Tensor &got, const NpyArray &want, double &maxAbs, std::string &why) {
  if (llvm::ArrayRef<int64_t>(want.shape) != got.shape()) {
    why = "shape " + rt::shapeToString(got.shape()) + " vs expected " +
          clipInput(rt::shapeToString(want.shape));
    return false;
  }
  if (got.dtype() != DType::F32 || want.dtype != DType::F32) {
    bool same = got.nbytes() == want.data.size() &&
                (got.nbytes() == 0 || std::memcmp(got.raw(), want.data.data(), got.nbytes()) == 0);
    maxAbs = same ? 0 : INFINITY;
    if (!same)
      why = "values differ";
    return same;
  }
  const float *a = got.data<float>();
  const float *b = reinterpret_cast<const float *>(want.data.data());
  bool ok = true;
  maxAbs = 0;
  for (int64_t i = 0, n = got.numel(); i < n; ++i) {
    double d = std::fabs(double(a[i]) - double(b[i]));
    if (std::isnan(a[i]) != std::isnan(b[i]))
      d = INFINITY;
    maxAbs = std::max(maxAbs, std::isnan(d) ? 0.0 : d);
    if (d > absTol + relTol * std::fabs(double(b[i])) && ok) {
      ok = false;
      why = "element " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs expected " +
            std::to_string(b[i]);
    }
  }
  return ok;
}

/// One line per op: its shapes, time per run, GFLOP/s, GB/s (of its
/// inputs and outputs) and share of the total; columns as wide as their
/// longest entry.
static void printProfile(const std::vector<rt::OpProfile> &prof, llvm::raw_ostream &os) {
  double totalMs = 0, totalFlops = 0, totalBytes = 0;
  bool allFlops = true;
  size_t opW = 2, nameW = 4, inW = 5, outW = 6;
  for (const rt::OpProfile &p : prof) {
    totalMs += p.totalMs;
    totalFlops += p.flops.value_or(0);
    totalBytes += p.bytes;
    allFlops = allFlops && p.flops;
    opW = std::max(opW, p.op.size());
    nameW = std::max(nameW, p.name.size());
    inW = std::max(inW, p.inputShapes.size());
    outW = std::max(outW, p.outputShapes.size());
  }
  int64_t runs = prof.empty() ? 1 : std::max<int64_t>(prof[0].calls, 1);
  auto gflops = [&](std::optional<double> flops, double ms) -> std::string {
    if (!flops || ms <= 0)
      return "-";
    return llvm::formatv("{0:F2}", *flops / (ms * 1e6)).str();
  };
  auto gbs = [&](double bytes, double ms) -> std::string {
    return ms > 0 ? llvm::formatv("{0:F1}", bytes / (ms * 1e6)).str() : "-";
  };
  auto row = [&](llvm::StringRef op, llvm::StringRef name, llvm::StringRef in, llvm::StringRef out,
                 llvm::StringRef ms, llvm::StringRef gf, llvm::StringRef gb,
                 llvm::StringRef share) {
    std::string line;
    llvm::raw_string_ostream ls(line);
    ls << llvm::left_justify(op, opW) << "  " << llvm::left_justify(name, nameW) << "  "
       << llvm::left_justify(in, inW) << "  " << llvm::left_justify(out, outW) << "  "
       << llvm::right_justify(ms, 9) << "  " << llvm::right_justify(gf, 8) << "  "
       << llvm::right_justify(gb, 6) << "  " << llvm::right_justify(share, 6);
    os << llvm::StringRef(ls.str()).rtrim() << "\n";
  };
  row("op", "name", "input", "output", "ms/run", "GFLOP/s", "GB/s", "share");
  for (const rt::OpProfile &p : prof) {
    double ms = p.totalMs / runs;
    row(p.op, p.name, p.inputShapes, p.outputShapes, llvm::formatv("{0:F3}", ms).str(),
        gflops(p.flops, ms), gbs(p.bytes, ms),
        llvm::formatv("{0:F1}%", totalMs > 0 ? 100.0 * p.totalMs / totalMs : 0.0).str());
  }
  row("total", "", "", "", llvm::formatv("{0:F3}", totalMs / runs).str(),
      gflops(allFlops ? std::optional<double>(totalFlops) : std::nullopt, totalMs / runs),
      gbs(totalBytes, totalMs / runs), "");
}

static int runTool(int argc, char **argv) {
  tools::setVersionPrinter(kTool);
  cl::HideUnrelatedOptions(runCat);
  tools::parseCommandLine(argc, argv,
                          "kc-run: execute a PNNX model with kc's interpreter\n\n"
                          "  kc-run model.pnnx.param                     random inputs\n"
                          "  kc-run model.pnnx.param -i in0.npy --expect out0.npy\n"
                          "  kc-run model.pnnx.param -O --bench 50 --threads 2\n"
                          "  kc-run model.pnnx.param --load-pass-plugin=P.so -p my-pass\n");
  for (const std::string &p : plugins)
    if (auto e = loadPassPlugin(p))
      return tools::reportError(kTool, p, std::move(e));
  auto &os = llvm::outs();
  // Counts are unsigned (cl::opt refuses a sign); tolerances are checked
  // here: a negative or NaN one would make every comparison fail or pass.
  for (const cl::opt<double> *tol : {&relTol, &absTol})
    if (!(tol->getValue() >= 0 && std::isfinite(tol->getValue())))
      return usageError("--" + tol->ArgStr + " must be a non-negative number, got " +
                  llvm::formatv("{0}", tol->getValue()).str());
  if (threads > kMaxThreads)
    return usageError("--threads=" + llvm::Twine(threads.getValue()) + " is more than the limit of " +
                llvm::Twine(kMaxThreads));
  if (listOps) {
    os << "| op | also imported as | runs in kc-run |\n|---|---|---|\n";
    for (const OpDef *d : OpRegistry::global().all()) {
      if (d->isOpaque() || d->is(OpFlags::ExprOp) || d->name() == "rpn")
        continue;
      os << "| `" << d->name() << "` | ";
      for (size_t i = 0; i < d->aliases().size(); ++i)
        os << (i ? ", " : "") << "`" << d->aliases()[i] << "`";
      os << " | " << (rt::KernelRegistry::global().lookup(d) ? "yes" : "no (import and passes only)")
         << " |\n";
    }
    return 0;
  }
  if (!coverageFile.empty()) {
    auto buf = llvm::MemoryBuffer::getFile(coverageFile);
    if (!buf)
      return tools::reportError(kTool, coverageFile, "cannot read: " + buf.getError().message());
    llvm::SmallVector<llvm::StringRef, 0> lines;
    (*buf)->getBuffer().split(lines, '\n');
    std::vector<std::string> missing;
    size_t total = 0;
    for (llvm::StringRef line : lines) {
      line = line.trim();
      if (line.empty() || line.startswith("#"))
        continue;
      ++total;
      // Aliases resolve to their op, which runs if it has a kernel.
      if (!rt::KernelRegistry::global().lookup(OpRegistry::global().lookup(line)))
        missing.push_back(line.str());
    }
    os << "kc-run runs " << total - missing.size() << " of the " << total << " op types of "
       << llvm::sys::path::filename(coverageFile) << " (aliases count for the names they cover).\n";
    for (const std::string &m : missing)
      os << "not run: " << m << "\n";
    return 0;
  }
  if (modelPath.empty())
    return tools::reportError(kTool, "", "no model given (kc-run MODEL.pnnx.param; see --help)");
  // The pipeline is part of the command line: checked before the model is read.
  PassManager pm;
  pm.instrumentation().verifyEach = false;
  if (optimize)
    if (auto e = pm.addPipeline(defaultPipeline()))
      return tools::reportError(kTool, "", std::move(e));
  if (!pipeline.empty())
    if (auto e = pm.addPipeline(pipeline))
      return tools::reportError(kTool, "", std::move(e));
  auto t0 = std::chrono::steady_clock::now();
  auto m = loadModule(modelPath);
  if (!m)
    return fail(m.takeError());
  if (auto e = inferTypes(**m))
    return fail(std::move(e));
  if (auto e = verifyModule(**m))
    return fail(std::move(e));
  double loadMs = msSince(t0);
  auto t1 = std::chrono::steady_clock::now();
  if (auto e = pm.run(**m))
    return fail(std::move(e));
  rt::CompileOptions copts;
  copts.numThreads = int(threads);
  copts.profile = profileOps;
  copts.checkNan = checkNan;
  copts.maxMemoryBytes = size_t(maxMemoryMiB) << 20;
  auto cm = rt::CompiledModel::compile(**m, copts);
  if (!cm)
    return fail(cm.takeError());
  double compileMs = msSince(t1);

  auto specs = (*cm)->inputSpecs();
  std::vector<rt::Tensor> inputs;
  if (!inputFiles.empty()) {
    if (inputFiles.size() != specs.size())
      return fail("the model takes " + llvm::Twine(specs.size()) + " input(s), " +
                  llvm::Twine(inputFiles.size()) + " --input given");
    for (size_t i = 0; i < specs.size(); ++i) {
      auto t = tensorFromNpy(inputFiles[i], specs[i], i);
      if (!t)
        return tools::reportError(kTool, inputFiles[i], t.takeError());
      inputs.push_back(std::move(*t));
    }
  } else {
    if (!inputShapes.empty() && inputShapes.size() != specs.size())
      return fail("the model takes " + llvm::Twine(specs.size()) + " input(s), " +
                  llvm::Twine(inputShapes.size()) + " --input-shape given");
    std::mt19937 rng(seed);
    for (size_t i = 0; i < specs.size(); ++i) {
      rt::TensorSpec s = specs[i];
      if (!inputShapes.empty()) {
        auto shape = tools::parseInputShape(inputShapes[i]);
        if (!shape)
          return fail(shape.takeError());
        s.shape = std::move(*shape);
      }
      if (llvm::any_of(s.shape, [](int64_t d) { return d < 0; }))
        return fail("input " + llvm::Twine(i) + " (%" + s.name + ") is declared " +
                    typeToString(tensorType(s.dtype, s.shape)) +
                    ": give its shape with --input-shape, or a file with --input");
      inputs.push_back(randomTensor(s, rng));
    }
  }

  // The first run at shapes other than the declared ones compiles a plan
  // for them; it is timed apart from the steady state.
  auto tFirst = std::chrono::steady_clock::now();
  auto outs = (*cm)->run(inputs);
  if (!outs)
    return fail(outs.takeError());
  double firstRunMs = msSince(tFirst);

  if (!quiet) {
    os << "model: " << modelPath << " (" << (*cm)->numSteps() << " steps, load "
       << llvm::format("%.1f", loadMs) << " ms, compile " << llvm::format("%.1f", compileMs)
       << " ms, " << rt::kernelIsa() << " kernels)\n";
    os << "activation memory: " << llvm::format("%.2f", (*cm)->arenaBytes() / 1048576.0)
       << " MiB planned (" << llvm::format("%.2f", (*cm)->unplannedBytes() / 1048576.0)
       << " MiB without reuse) + " << llvm::format("%.2f", (*cm)->workspaceBytes() / 1048576.0)
       << " MiB kernel scratch\n";
    for (size_t i = 0; i < outs->size(); ++i) {
      const rt::Tensor &t = (*outs)[i];
      os << "output " << i << ": " << dtypeName(t.dtype()) << rt::shapeToString(t.shape());
      if (t.dtype() == DType::F32 && t.numel()) {
        const float *p = t.data<float>();
        double sum = 0, mn = p[0], mx = p[0];
        for (int64_t k = 0; k < t.numel(); ++k)
          sum += p[k], mn = std::min<double>(mn, p[k]), mx = std::max<double>(mx, p[k]);
        os << "  min=" << llvm::format("%.6g", mn) << " max=" << llvm::format("%.6g", mx)
           << " mean=" << llvm::format("%.6g", sum / t.numel());
        // A class-score vector: show the top 5.
        int64_t classes = t.shape().empty() ? 0 : t.shape().back();
        if (t.numel() == classes && classes >= 5) {
          std::vector<int64_t> idx(classes);
          for (int64_t k = 0; k < classes; ++k)
            idx[k] = k;
          std::partial_sort(idx.begin(), idx.begin() + 5, idx.end(),
                            [&](int64_t a, int64_t b) { return p[a] > p[b]; });
          os << "\n  top-5:";
          for (int k = 0; k < 5; ++k)
            os << " " << idx[k] << " (" << llvm::format("%.4f", p[idx[k]]) << ")";
        }
      }
      os << "\n";
    }
  }

  int status = 0;
  if (!expectFiles.empty()) {
    if (expectFiles.size() != outs->size())
      return fail("the model has " + llvm::Twine(outs->size()) + " output(s), " +
                  llvm::Twine(expectFiles.size()) + " --expect given");
    for (size_t i = 0; i < outs->size(); ++i) {
      auto want = readNpy(expectFiles[i]);
      if (!want)
        return tools::reportError(kTool, expectFiles[i], want.takeError());
      double maxAbs = 0;
      std::string why;
      bool ok = compare((*outs)[i], *want, maxAbs, why);
      os << "output " << i << " vs " << llvm::sys::path::filename(expectFiles[i]) << ": "
         << (ok ? "ok" : "MISMATCH") << " (max |a-b| = " << llvm::format("%.3g", maxAbs)
         << ", tolerance " << llvm::format("%g", absTol.getValue()) << " + "
         << llvm::format("%g", relTol.getValue()) << "*|b|)" << (ok ? "" : ": " + why) << "\n";
      if (!ok)
        status = 1;
    }
  }

  if (!outputDir.empty()) {
    if (auto ec = llvm::sys::fs::create_directories(outputDir))
      return tools::reportError(kTool, outputDir, ec.message());
    for (size_t i = 0; i < outs->size(); ++i) {
      const rt::Tensor &t = (*outs)[i];
      NpyArray a;
      a.dtype = t.dtype();
      a.shape.assign(t.shape().begin(), t.shape().end());
      a.data.assign(static_cast<const uint8_t *>(t.raw()),
                    static_cast<const uint8_t *>(t.raw()) + t.nbytes());
      std::string path = (outputDir + "/out" + llvm::Twine(i) + ".npy").str();
      if (auto e = writeNpy(path, a))
        return tools::reportError(kTool, path, std::move(e));
    }
  }

  if (benchRuns > 0) {
    for (unsigned i = 0; i < warmup; ++i)
      if (auto r = (*cm)->run(inputs); !r)
        return fail(r.takeError());
    // The profile covers the timed runs only: the first run packs weights
    // (a small layer's packing outweighed ten of its runs).
    (*cm)->clearProfile();
    std::vector<double> times;
    for (unsigned i = 0; i < benchRuns; ++i) {
      auto s = std::chrono::steady_clock::now();
      auto r = (*cm)->run(inputs);
      if (!r)
        return fail(r.takeError());
      times.push_back(msSince(s));
    }
    std::sort(times.begin(), times.end());
    os << "load+compile_ms=" << llvm::format("%.1f", loadMs + compileMs)
       << " peak_rss_mb=" << llvm::format("%.1f", peakRssBytes() / 1048576.0)
       << " first_run_ms=" << llvm::format("%.1f", firstRunMs) << "\n";
    os << "latency_ms min=" << llvm::format("%.3f", times.front())
       << " median=" << llvm::format("%.3f", times[times.size() / 2])
       << " max=" << llvm::format("%.3f", times.back()) << "\n";
  }

  if (profileOps)
    printProfile((*cm)->profile(), os);
  return status;
}

int main(int argc, char **argv) {
  kc::tools::reexecForOpenBlasCore(argv);
  tools::checkStandardStreamsAtExit(kTool);
  // Plans are checked against the memory limit; this catches what is not
  // planned (inputs, outputs, weights) when the machine runs out.
  try {
    return runTool(argc, argv);
  } catch (const std::bad_alloc &) {
    return fail("out of memory");
  }
}
