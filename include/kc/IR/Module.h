//===- kc/IR/Module.h - A compilation unit ----------------------*- C++ -*-===//
///
/// \file
/// A Module holds named functions: `main` (the model graph) and the primitive
/// functions of its expressions. Calls name functions through a GlobalVar;
/// the module maps the name to the function, so a pass that rewrites a
/// function replaces it with one `add` and every call sees the new one.
/// Functions are kept in definition order; a function is defined before any
/// function that calls it, so printing in order gives text that parses in
/// one pass.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Expr.h"

#include "llvm/ADT/StringMap.h"

#include <memory>
#include <string>
#include <vector>

namespace kc {

class Module {
public:
  Module() = default;

  /// Adds or replaces the function with `f->name()`; new names go last,
  /// replaced ones keep their place.
  void add(Function f);
  bool remove(llvm::StringRef name);
  Function lookup(llvm::StringRef name) const;
  /// The function a call calls, or null for an op call or an unknown name.
  const FunctionNode *callee(const CallNode &c) const;
  Function main() const { return lookup("main"); }
  llvm::ArrayRef<Function> functions() const { return functions_; }

  /// The file the module was read from, for diagnostics (may be empty).
  const std::string &sourceName() const { return sourceName_; }
  void setSourceName(std::string s) { sourceName_ = std::move(s); }

  /// Installs a rewritten `main` and drops the functions it no longer calls
  /// (directly or indirectly); callers add new functions first.
  void setMain(Function newMain);

  /// Removes functions that `main` no longer calls (directly or indirectly).
  void removeUnreferencedFunctions();
  /// A copy sharing every node (cheap): passes return new modules.
  std::shared_ptr<Module> clone() const { return std::make_shared<Module>(*this); }

private:
  std::vector<Function> functions_;
  llvm::StringMap<size_t> index_;
  std::string sourceName_;
};

using ModulePtr = std::shared_ptr<Module>;

} // namespace kc
