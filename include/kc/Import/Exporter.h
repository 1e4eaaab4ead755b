//===- kc/Import/Exporter.h - kc IR to PNNX files ---------------*- C++ -*-===//
///
/// \file
/// Writes a Module back in the real PNNX format: a `.pnnx.param` text and a
/// `.pnnx.bin` ZIP64 archive of stored entries named `<op>.<attr>`. Every
/// primitive function becomes a `pnnx.Expression` whose `expr=` is rebuilt
/// from its AST (or its RPN program), tensor constants used as values become
/// `pnnx.Attribute`, and a tuple result becomes one multi-input `pnnx.Output`.
/// Importing what this writes prints the same kc IR as the original.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kc {

struct ExportedPnnx {
  std::string param;
  /// The archive, or nullopt when some weight has no bytes (the module was
  /// imported without its `.bin`): the `.param` alone is then written.
  std::optional<std::vector<uint8_t>> bin;
  /// The first weight without bytes, for diagnostics.
  std::string missingWeight;
};

/// Renders `m` as PNNX. What PNNX cannot hold exactly is refused, naming
/// the node and its line, rather than written changed or unreadable: a name
/// or value with whitespace (PNNX has no quoting), a value the reader would
/// type differently (the string "1", a list item with a comma), an
/// operator name given to two calls. A call without a name gets one
/// (`op_0`), as PNNX needs one.
llvm::Expected<ExportedPnnx> exportPnnx(const Module &m);

/// Writes `paramPath` and, when every weight has bytes, `binPath` (default:
/// beside the param, `x.pnnx.param` → `x.pnnx.bin`): both or, on any
/// failure, neither.
llvm::Error exportPnnx(const Module &m, llvm::StringRef paramPath, llvm::StringRef binPath = "");
/// The same for a rendering already made.
llvm::Error writePnnx(const ExportedPnnx &r, llvm::StringRef paramPath,
                      llvm::StringRef binPath = "");

/// A primitive function's body as `pnnx.Expression` text (`add(@0,mul(@1,2.0))`).
llvm::Expected<std::string> expressionText(const FunctionNode &fn);

} // namespace kc
