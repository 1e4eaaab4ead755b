//===- kc/IR/Specialize.h - A module at other input shapes ------*- C++ -*-===//
///
/// \file
/// A model converted at one input shape runs at any other its graph admits:
/// `specializeInputs` copies the module with @main's parameters retyped and
/// infers every other type again from them. The types the model declares
/// (PNNX `#` annotations, written for the shapes it was converted at) are
/// hints there, not checks; weights and literals keep theirs.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"

#include "llvm/Support/Error.h"

namespace kc {

/// A copy of `m` whose @main takes parameters of the types `inputs`, every
/// node's type inferred again from them. Constants and ops are shared with
/// `m`, every other node is new (each call of an expression function gets
/// its own copy of it), so `m` is left as it is. An input whose element
/// type or rank differs from the parameter's, or a shape some op cannot
/// take, is an error naming the parameter or the op and its line.
llvm::Expected<ModulePtr> specializeInputs(const Module &m, llvm::ArrayRef<Type> inputs);

} // namespace kc
