//===- kc/IR/Verifier.h - IR invariants -------------------------*- C++ -*-===//
///
/// \file
/// Checks a module's invariants: `main` exists; every Var used in a function
/// is one of its parameters; calls match their op's schema (number of data
/// inputs, required weights, attribute kinds, expression arity); tuple
/// indices are in range; called functions belong to the module. Cycles cannot
/// be built (nodes are immutable and refer only to existing nodes).
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"

#include "llvm/Support/Error.h"

namespace kc {

llvm::Error verifyModule(const Module &m);

} // namespace kc
