//===- kc/IR/InlineFused.h - Fused groups back into their calls -*- C++ -*-===//
///
/// \file
/// The fuse-ops pass groups calls into fused functions for the interpreter.
/// Where a module leaves kc (a PNNX file), each group becomes its calls
/// again.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"

namespace kc {

/// A copy of `m` (sharing its nodes) whose `main` calls, in place of each
/// fused function, that function's calls, with their types, places and
/// names.
ModulePtr inlineFusedCalls(const Module &m);

} // namespace kc
