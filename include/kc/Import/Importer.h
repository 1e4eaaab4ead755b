//===- kc/Import/Importer.h - PNNX model to kc IR ---------------*- C++ -*-===//
///
/// \file
/// Builds a Module from a `.pnnx.param` file and its `.pnnx.bin` archive:
/// `main` takes one Var per `pnnx.Input`; each operator becomes a Call of the
/// registered op (unknown types become opaque ops), weights become named
/// Constants whose bytes stay in the memory-mapped archive, `pnnx.Attribute`
/// becomes a Constant, each `pnnx.Expression` a primitive Function, operators
/// with several outputs are read through TupleGetItem, and
/// `prim::TupleConstruct` feeding `pnnx.Output` becomes main's Tuple result.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"
#include "kc/Import/ExpressionParser.h"
#include "kc/Import/PnnxParam.h"

#include "llvm/Support/Error.h"

namespace kc {

class ZipReader;

struct ImportOptions {
  /// Fail when the archive is absent (otherwise weights import without data).
  bool requireWeights = false;
  /// Largest element count of one tensor (weights and annotations).
  int64_t maxElements = int64_t(1) << 34;
  ParamLimits paramLimits;
  ExpressionLimits exprLimits;
};

/// Imports `paramPath`; the weights come from `binPath`, or when it is empty
/// from the `.bin` beside the `.param` (`x.pnnx.param` → `x.pnnx.bin`).
llvm::Expected<ModulePtr> importPnnx(llvm::StringRef paramPath, llvm::StringRef binPath = "",
                                     const ImportOptions &opts = {});

/// Imports from memory; `weights` may be null (no archive).
llvm::Expected<ModulePtr> importPnnxFromBuffer(llvm::StringRef paramText,
                                               llvm::StringRef fileName, const ZipReader *weights,
                                               const ImportOptions &opts = {});

/// The `.bin` path that belongs to a `.param` path.
std::string weightPathFor(llvm::StringRef paramPath);

} // namespace kc
