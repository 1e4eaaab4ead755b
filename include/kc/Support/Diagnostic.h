//===- kc/Support/Diagnostic.h - Where a message is located -----*- C++ -*-===//
///
/// \file
/// Messages of kc's errors read `FILE[:LINE[:COL]]: error: MESSAGE`. Readers
/// that know the line write it so; others say only what went wrong, and the
/// caller that knows the file (the tools, the Python module) places them
/// there with locateMessage.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>

namespace kc {

/// `message` located at `file`: one that starts with its own location
/// (`model.pnnx.param:4:14: error: ...`, `in0.npy: error: ...`) stays as it
/// is; one that starts with `file: ` gets `KIND: ` after it; any other
/// becomes `file: KIND: message` (or `KIND: message` when `file` is empty),
/// a leading `KIND: ` of its own not repeated.
std::string locateMessage(llvm::StringRef file, llvm::StringRef message,
                          llvm::StringRef kind = "error");

} // namespace kc
