//===- ModelFiles.h - The real PNNX files the unit tests read ---*- C++ -*-===//
///
/// \file
/// Lists the op fixtures of test/ops, the reference models (`modelsDir()/<name>/model.pnnx.param`, each
/// with its `.bin`) and every `.param` of the old-pnnx corpus (recursively;
/// the `.bin` beside `X.pnnx.param` is `X.pnnx.bin`, and many are absent).
/// Sorted, so failures are reported in a stable order.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "TestPaths.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace kc::test {

struct ModelFile {
  std::string param;
  std::string bin; ///< empty when the weights are absent
};

/// The `.bin` that belongs to `param` if it exists, else "".
inline std::string binBeside(llvm::StringRef param) {
  std::string bin = param.endswith(".param") ? (param.drop_back(6) + ".bin").str()
                                             : (param + ".bin").str();
  return llvm::sys::fs::exists(bin) ? bin : std::string();
}

/// Every `<dir>/<name>/model.pnnx.param`, sorted.
inline std::vector<ModelFile> modelsIn(const std::string &dir) {
  std::vector<ModelFile> out;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    llvm::SmallString<256> p(it->path());
    llvm::sys::path::append(p, "model.pnnx.param");
    if (llvm::sys::fs::exists(p))
      out.push_back({std::string(p), binBeside(p)});
  }
  std::sort(out.begin(), out.end(),
            [](const ModelFile &a, const ModelFile &b) { return a.param < b.param; });
  return out;
}

/// The reference models of the models folder.
inline std::vector<ModelFile> referenceModels() { return modelsIn(modelsDir()); }

/// The op fixtures of the project, test/ops/fixtures.
inline std::vector<ModelFile> opFixtures() {
  return modelsIn(std::string(KC_SOURCE_DIR) + "/test/ops/fixtures");
}

/// Every `*.param` under the corpus folder, recursively.
inline std::vector<ModelFile> corpusFiles() {
  std::vector<ModelFile> out;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(corpusDir(), ec), end; !ec && it != end;
       it.increment(ec)) {
    llvm::StringRef p = it->path();
    if (p.endswith(".param") && !llvm::sys::fs::is_directory(p))
      out.push_back({p.str(), binBeside(p)});
  }
  std::sort(out.begin(), out.end(),
            [](const ModelFile &a, const ModelFile &b) { return a.param < b.param; });
  return out;
}

/// The bytes of `path` (empty if it cannot be read).
inline std::vector<uint8_t> readBytes(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return {};
  llvm::StringRef s = (*buf)->getBuffer();
  return std::vector<uint8_t>(s.bytes_begin(), s.bytes_end());
}

} // namespace kc::test
