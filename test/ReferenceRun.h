//===- ReferenceRun.h - Run a PNNX model against PyTorch's outputs -*- C++ -*-===//
///
/// \file
/// What kc-run does with `-i in0.npy --expect out0.npy`, for the tests over
/// folders of real conversions (`model.pnnx.param`, `in<i>.npy`,
/// `out<i>.npy`): import, infer types, verify, optionally run the default
/// pipeline, compile, run, and compare every output with PyTorch's:
/// f32 and f16 within |a - b| <= atol + rtol * |b| elementwise, other
/// dtypes byte for byte.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "ScopedThreadCount.h"

#include "kc/IR/TypeInference.h"
#include "kc/IR/Verifier.h"
#include "kc/Import/Importer.h"
#include "kc/Pass/PassManager.h"
#include "kc/Runtime/Interpreter.h"
#include "kc/Support/Half.h"
#include "kc/Support/Npy.h"

#include "llvm/Support/FileSystem.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace kc::test {

/// `dir/<prefix>0.npy`, `dir/<prefix>1.npy`, ... while they exist.
inline std::vector<std::string> numberedNpy(const std::string &dir, const char *prefix) {
  std::vector<std::string> r;
  for (int i = 0;; ++i) {
    std::string p = dir + "/" + prefix + std::to_string(i) + ".npy";
    if (!llvm::sys::fs::exists(p))
      return r;
    r.push_back(p);
  }
}

inline rt::Tensor tensorOf(const NpyArray &a) {
  rt::Tensor t = rt::Tensor::empty(a.dtype, a.shape);
  std::memcpy(t.raw(), a.data.data(), t.nbytes());
  return t;
}

struct RunConfig {
  bool optimize = false;
  int threads = 0; ///< 0: the default
};

inline std::string describe(const RunConfig &c) {
  std::string s = c.optimize ? "-O" : "no passes";
  if (c.threads)
    s += ", " + std::to_string(c.threads) + " thread(s)";
  return s;
}

/// The module of `param` imported, typed, verified and (with -O) optimized;
/// the error text of the first step that fails.
inline llvm::Expected<ModulePtr> loadForRun(const std::string &param, const RunConfig &cfg) {
  auto m = importPnnx(param, "", ImportOptions{});
  if (!m)
    return m.takeError();
  if (auto e = inferTypes(**m))
    return e;
  if (auto e = verifyModule(**m))
    return e;
  if (cfg.optimize) {
    PassManager pm;
    if (auto e = pm.addPipeline(defaultPipeline()))
      return e;
    if (auto e = pm.run(**m))
      return e;
  }
  return m;
}

/// The outcome of one output's comparison.
struct OutputCheck {
  bool ok = true;
  double worst = 0; ///< the largest |a - b| (f32), or 0/inf (others)
  std::string why;  ///< the first failure
};

inline OutputCheck compareOutput(const rt::Tensor &got, const NpyArray &want, double atol,
                                 double rtol) {
  OutputCheck r;
  if (llvm::ArrayRef<int64_t>(want.shape) != got.shape() || want.dtype != got.dtype()) {
    r.ok = false;
    r.worst = INFINITY;
    r.why = "got " + dtypeName(got.dtype()).str() + rt::shapeToString(got.shape()) +
            ", PyTorch gave " + dtypeName(want.dtype).str() + rt::shapeToString(want.shape);
    return r;
  }
  if (got.dtype() != DType::F32 && got.dtype() != DType::F16) {
    r.ok = got.nbytes() == want.data.size() &&
           std::memcmp(got.raw(), want.data.data(), got.nbytes()) == 0;
    r.worst = r.ok ? 0 : INFINITY;
    if (!r.ok)
      r.why = "the " + dtypeName(got.dtype()).str() + " values differ";
    return r;
  }
  // f16 is compared as the f32 values it holds.
  std::vector<float> wideGot, wideWant;
  const float *a = got.dtype() == DType::F32 ? got.data<float>() : nullptr;
  const float *b = reinterpret_cast<const float *>(want.data.data());
  if (!a) {
    wideGot.resize(size_t(got.numel()));
    wideWant.resize(size_t(got.numel()));
    halfToFloat(got.data<uint16_t>(), wideGot.data(), wideGot.size());
    halfToFloat(reinterpret_cast<const uint16_t *>(want.data.data()), wideWant.data(),
                wideWant.size());
    a = wideGot.data();
    b = wideWant.data();
  }
  int64_t bad = 0, first = -1;
  for (int64_t k = 0; k < got.numel(); ++k) {
    double d = std::fabs(double(a[k]) - double(b[k]));
    if ((std::isnan(a[k]) && std::isnan(b[k])) || a[k] == b[k]) // NaN, infinities
      d = 0;
    if (!(d <= atol + rtol * std::fabs(double(b[k])))) {
      if (first < 0)
        first = k;
      ++bad;
    }
    r.worst = std::max(r.worst, std::isnan(d) ? INFINITY : d);
  }
  if (bad) {
    std::ostringstream os;
    os << bad << " of " << got.numel() << " elements outside " << atol << " + " << rtol
       << "*|b|; the first, element " << first << ": " << a[first] << " vs " << b[first];
    r.ok = false;
    r.why = os.str();
  }
  return r;
}

/// Runs `dir/model.pnnx.param` on `dir/in*.npy` and compares with
/// `dir/out*.npy`; one check per output, or an error where kc fails first.
inline llvm::Expected<std::vector<OutputCheck>>
runAgainstReference(const std::string &dir, const RunConfig &cfg, double atol, double rtol) {
  auto m = loadForRun(dir + "/model.pnnx.param", cfg);
  if (!m)
    return m.takeError();
  ScopedThreadCount restore;
  rt::CompileOptions opts;
  opts.numThreads = cfg.threads;
  auto cm = rt::CompiledModel::compile(**m, opts);
  if (!cm)
    return cm.takeError();
  std::vector<rt::Tensor> inputs;
  for (const std::string &p : numberedNpy(dir, "in")) {
    auto a = readNpy(p);
    if (!a)
      return a.takeError();
    inputs.push_back(tensorOf(*a));
  }
  auto outs = (*cm)->run(inputs);
  if (!outs)
    return outs.takeError();
  auto expected = numberedNpy(dir, "out");
  if (expected.size() != outs->size())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "kc gives " + std::to_string(outs->size()) +
                                       " outputs, PyTorch " + std::to_string(expected.size()));
  std::vector<OutputCheck> checks;
  for (size_t i = 0; i < outs->size(); ++i) {
    auto want = readNpy(expected[i]);
    if (!want)
      return want.takeError();
    checks.push_back(compareOutput((*outs)[i], *want, atol, rtol));
  }
  return checks;
}

} // namespace kc::test
