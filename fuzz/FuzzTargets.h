//===- FuzzTargets.h - The bodies of kc's fuzz targets ----------*- C++ -*-===//
///
/// \file
/// Each function feeds hostile bytes to one reader and must return without
/// crashing, aborting, leaking or tripping a sanitizer, whatever the bytes.
/// The libFuzzer drivers (fuzz/*.cpp) and the regression test
/// (test/FuzzRegressionTest.cpp) share these bodies.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Parser.h"
#include "kc/IR/Printer.h"
#include "kc/IR/TypeInference.h"
#include "kc/IR/Verifier.h"
#include "kc/Import/ExpressionParser.h"
#include "kc/Import/Importer.h"
#include "kc/Import/PnnxParam.h"
#include "kc/Pass/PassManager.h"
#include "kc/Support/Npy.h"
#include "kc/Support/ZipArchive.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace kc::fuzz {

inline llvm::StringRef text(const uint8_t *data, size_t size) {
  return llvm::StringRef(reinterpret_cast<const char *>(data), size);
}

/// The .param reader.
inline int param(const uint8_t *data, size_t size) {
  auto pf = parseParamFile(text(data, size), "fuzz.param");
  if (!pf)
    llvm::consumeError(pf.takeError());
  return 0;
}

/// The .bin zip reader: open, then read and checksum every entry.
inline int zip(const uint8_t *data, size_t size) {
  auto z = ZipReader::fromBuffer(llvm::ArrayRef<uint8_t>(data, size), "fuzz.bin");
  if (!z) {
    llvm::consumeError(z.takeError());
    return 0;
  }
  for (const ZipEntry &e : (*z)->entries()) {
    auto bytes = (*z)->data(e);
    volatile uint8_t sink = bytes.empty() ? 0 : bytes.back();
    (void)sink;
    if (auto err = (*z)->verifyCrc(e))
      llvm::consumeError(std::move(err));
  }
  return 0;
}

/// The .npy reader; what it accepts must encode and read back unchanged
/// (a mismatch aborts, which libFuzzer reports as a crash).
inline int npy(const uint8_t *data, size_t size) {
  auto a = readNpyBuffer(llvm::ArrayRef<uint8_t>(data, size), "fuzz.npy");
  if (!a) {
    llvm::consumeError(a.takeError());
    return 0;
  }
  auto bytes = writeNpyBuffer(*a);
  if (!bytes) {
    // bf16 and c32 have no descriptor, so an accepted file always encodes.
    llvm::consumeError(bytes.takeError());
    std::abort();
  }
  auto back = readNpyBuffer(*bytes, "fuzz.npy (re-encoded)");
  if (!back) {
    llvm::consumeError(back.takeError());
    std::abort();
  }
  if (back->dtype != a->dtype || back->shape != a->shape || back->data != a->data)
    std::abort();
  return 0;
}

/// The pnnx.Expression parser, with four typed operands.
inline int expression(const uint8_t *data, size_t size) {
  std::vector<Var> params;
  for (int i = 0; i < 4; ++i)
    params.push_back(var(std::to_string(i), tensorType(DType::F32, {2, 3})));
  auto e = parseExpression(text(data, size), params);
  if (!e)
    llvm::consumeError(e.takeError());
  return 0;
}

/// kc's text parser; what parses must print.
inline int kcText(const uint8_t *data, size_t size) {
  auto m = parseModule(text(data, size), "fuzz.kc");
  if (!m) {
    llvm::consumeError(m.takeError());
    return 0;
  }
  (void)printModule(**m);
  return 0;
}

/// A whole model: import, infer, verify, then the -O pipeline.
inline int model(const uint8_t *data, size_t size) {
  ImportOptions opts;
  opts.maxElements = int64_t(1) << 24;
  auto m = importPnnxFromBuffer(text(data, size), "fuzz.param", nullptr, opts);
  if (!m) {
    llvm::consumeError(m.takeError());
    return 0;
  }
  if (auto e = inferTypes(**m)) {
    llvm::consumeError(std::move(e));
    return 0;
  }
  if (auto e = verifyModule(**m)) {
    llvm::consumeError(std::move(e));
    return 0;
  }
  PassManager pm;
  if (auto e = pm.addPipeline(defaultPipeline())) {
    llvm::consumeError(std::move(e));
    return 0;
  }
  if (auto e = pm.run(**m))
    llvm::consumeError(std::move(e));
  return 0;
}

} // namespace kc::fuzz
