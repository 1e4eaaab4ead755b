//===- kc/IR/Printer.h - kc's textual IR ------------------------*- C++ -*-===//
///
/// \file
/// Prints a module in kc's text form (docs/ir.md): one node per line, SSA
/// names, a type on every line, attributes in braces, weights by name and
/// type. The Parser reads it back; print → parse → print is exact.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kc {

void printModule(const Module &m, llvm::raw_ostream &os);
std::string printModule(const Module &m);
void printFunction(const Function &f, llvm::raw_ostream &os);

/// `name` as it appears after `%` or `@`: bare when it is made of letters,
/// digits, `_` and `.`, else quoted.
std::string printableName(llvm::StringRef name);
/// A scalar literal: `2.5:f32`, `3:i64`, `true:bool`, `none`, `"trunc"`.
std::string printLiteral(const ConstantNode &c);

} // namespace kc
