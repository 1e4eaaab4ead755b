//===- TestFiles.h - Reading the files tests are driven by ------*- C++ -*-===//
///
/// \file
/// A typed module loaded from a file, and the lines of a list file
/// (expectations, pairs): trimmed, blank lines and `#` comment lines left
/// out, each with its line number. Both stop the test case, naming the
/// file, when it cannot be read.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/TypeInference.h"
#include "kc/Import/ModuleLoader.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>

namespace kc::test {

/// The model of `path` (.pnnx.param or .kc), its types inferred.
inline ModulePtr loadTyped(const std::string &path) {
  auto m = loadModule(path);
  REQUIRE_MESSAGE(bool(m), (m ? "" : llvm::toString(m.takeError())));
  llvm::Error e = inferTypes(**m);
  REQUIRE_MESSAGE(!e, llvm::toString(std::move(e)));
  return *m;
}

/// The significant lines of a list file.
class ListFile {
public:
  explicit ListFile(const std::string &path) : path_(path) {
    auto buf = llvm::MemoryBuffer::getFile(path);
    REQUIRE_MESSAGE(bool(buf), path << ": cannot read");
    buffer_ = std::move(*buf);
    llvm::SmallVector<llvm::StringRef, 0> lines;
    buffer_->getBuffer().split(lines, '\n');
    for (size_t i = 0; i < lines.size(); ++i) {
      llvm::StringRef line = lines[i].trim();
      if (!line.empty() && !line.startswith("#"))
        lines_.push_back({i + 1, line});
    }
  }
  struct Line {
    size_t number;
    llvm::StringRef text;
  };
  const std::string &path() const { return path_; }
  llvm::ArrayRef<Line> lines() const { return lines_; }

private:
  std::string path_;
  std::unique_ptr<llvm::MemoryBuffer> buffer_;
  llvm::SmallVector<Line, 0> lines_;
};

} // namespace kc::test
