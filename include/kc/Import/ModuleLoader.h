//===- kc/Import/ModuleLoader.h - Load a module from any input --*- C++ -*-===//
///
/// \file
/// What the tools share: a `.pnnx.param` file (with its `.bin`) or kc text
/// (`.kc`, or `-` for standard input) becomes a Module.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"

#include "llvm/Support/Error.h"

namespace kc {

/// Loads `path` by its kind: PNNX (`.param`) or kc text (anything else).
/// `weightsPath` overrides the archive (`.pnnx.bin`) to read weights from.
llvm::Expected<ModulePtr> loadModule(llvm::StringRef path, llvm::StringRef weightsPath = "");

/// Parses kc text held in memory (`name` is used in diagnostics); a text that
/// starts with the PNNX magic is imported as PNNX without weights.
llvm::Expected<ModulePtr> loadModuleFromText(llvm::StringRef text, llvm::StringRef name);

} // namespace kc
