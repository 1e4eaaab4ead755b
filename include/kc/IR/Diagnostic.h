//===- kc/IR/Diagnostic.h - Errors that point into the input ----*- C++ -*-===//
///
/// \file
/// Every error about a module (type inference, the verifier) names the file
/// the module was read from and the line and column of the node, in the
/// same `file:line:col: error: ...` form as the readers' errors, and quotes
/// names from the input bounded by kc/Support/Quote.h.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"

#include "llvm/Support/Error.h"

#include <string>

namespace kc {

/// How a diagnostic names a call: `nn.Conv2d 'conv1'` (the op or function,
/// then the PNNX operator name if any), both bounded.
std::string describeCall(const CallNode &c);
/// A call as describeCall does, any other node by its kind.
std::string describeNode(const ExprNode &e);

/// `file:line:col: error: msg`, or `file: error: msg` when `loc` is not
/// valid; `file` is the module's source name, `<module>` if it has none.
llvm::Error moduleError(const Module &m, SourceLoc loc, const llvm::Twine &msg);

} // namespace kc
