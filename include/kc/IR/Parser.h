//===- kc/IR/Parser.h - Reads kc's textual IR -------------------*- C++ -*-===//
///
/// \file
/// Parses the text that the Printer writes (grammar in docs/ir.md) back into
/// a Module. print → parse → print is exact. Weights are named in the text
/// but their bytes are not; pass a PNNX archive to bind them by name.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"

#include "llvm/Support/Error.h"

namespace kc {

class ZipReader;

/// Parses `text`; diagnostics read `bufferName:line:col: error: ...`.
/// Tensor constants take their bytes from `weights` when it holds an entry
/// of the same name and size.
llvm::Expected<ModulePtr> parseModule(llvm::StringRef text, llvm::StringRef bufferName,
                                      const ZipReader *weights = nullptr);

} // namespace kc
