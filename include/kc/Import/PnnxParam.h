//===- kc/Import/PnnxParam.h - The .pnnx.param text format ------*- C++ -*-===//
///
/// \file
/// A faithful syntax-level reader of `.pnnx.param` files: one `ParamOp` per
/// operator line, with parameters typed element by element, weight
/// declarations, `$` argument names matched positionally and `#` operand
/// annotations. Nothing is resolved here; the importer builds IR from it.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Attr.h"
#include "kc/Support/DType.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace kc {

/// A `(d0,d1,...)dtype` declaration; dims of -1 are `?`.
struct ShapeDecl {
  DType dtype = DType::Unknown;
  std::vector<int64_t> dims;
  /// The declaration as PNNX writes it: `(1,3,?,?)f32`.
  std::string text() const;
};

/// A `#operand=(...)dtype` annotation and the column where it starts.
struct Annotation {
  std::string operand;
  ShapeDecl decl;
  unsigned col = 0;
};

struct ParamOp {
  std::string type, name;
  std::vector<std::string> inputs, outputs;
  /// `$` names per input position ("" when positional).
  std::vector<std::string> inputNames;
  std::vector<std::pair<std::string, AttrValue>> params;
  std::vector<std::pair<std::string, ShapeDecl>> weights; ///< `@key=(...)dtype`
  std::vector<Annotation> annotations; ///< `#operand=(...)dtype`, in line order
  unsigned line = 0;
  /// Column of each input/output operand token, for diagnostics.
  std::vector<unsigned> inputCols, outputCols;
  const AttrValue *param(llvm::StringRef key) const;
};

struct ParamFile {
  int64_t declaredOps = 0, declaredOperands = 0;
  std::vector<ParamOp> ops;
};

/// Limits that keep hostile files from costing time or memory.
struct ParamLimits {
  /// Reading is linear in the line's length, so this only bounds what one
  /// line may hold: an operator with 100,000 annotated operands (about 2.4
  /// MB as pnnx writes it) fits.
  size_t maxLineBytes = size_t(8) << 20;
  size_t maxOps = 1000000;
};

/// Parses the text of a `.param` file; `fileName` prefixes every diagnostic
/// (`file:line:col: error: ...`).
llvm::Expected<ParamFile> parseParamFile(llvm::StringRef text, llvm::StringRef fileName,
                                         const ParamLimits &limits = {});

/// Parses one parameter value the way PNNX's writer meant it (see
/// docs/pnnx.md): None, bools, ints, floats (incl. inf/nan/nan.0), complex,
/// lists typed element by element, strings. An integer that int64 cannot
/// hold is an error (never a float).
llvm::Expected<AttrValue> parseParamValue(llvm::StringRef value);

/// Parses `(d0,...)dtype`; `allowDynamic` accepts `?` dims.
llvm::Expected<ShapeDecl> parseShapeDecl(llvm::StringRef text, bool allowDynamic);

} // namespace kc
