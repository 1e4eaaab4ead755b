//===- kc/IR/Module.h - A compilation unit ----------------------*- C++ -*-===//
///
/// \file
/// A Module holds named functions: `main` (the model graph) and the primitive
/// functions of its expressions. Functions are kept in definition order; a
/// function is defined before any function that calls it, so printing in
/// order gives text that parses in one pass.
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
  Function main() const { return lookup("main"); }
  llvm::ArrayRef<Function> functions() const { return functions_; }

  /// The file the module was read from, for diagnostics (may be empty).
  const std::string &sourceName() const { return sourceName_; }
  void setSourceName(std::string s) { sourceName_ = std::move(s); }

  /// Installs a rewritten `main` and re-registers, by name, every function it
  /// calls (a pass that rewrote an expression function through main's calls
  /// thereby updates the module's copy too); drops functions no longer called.
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
