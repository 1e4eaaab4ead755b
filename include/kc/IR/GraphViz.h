//===- kc/IR/GraphViz.h - Graphviz export -----------------------*- C++ -*-===//
///
/// \file
/// Writes a module's `main` as a Graphviz digraph: one box per operator
/// labelled with its op, PNNX name and output type; inputs and outputs as
/// ellipses; weights are listed inside their operator's box.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"

#include "llvm/Support/raw_ostream.h"

namespace kc {

void writeGraphViz(const Module &m, llvm::raw_ostream &os);

} // namespace kc
