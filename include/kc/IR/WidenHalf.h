//===- kc/IR/WidenHalf.h - f16 models computed in f32 -----------*- C++ -*-===//
///
/// \file
/// kc computes a model whose tensors are f16 in f32 (kc/Support/Half.h for
/// the conversions): the compiled model takes and returns f16 where the
/// model does, and runs `widenHalf`'s copy of it, in which nothing is f16
/// but the ops' weights, which kernels widen once, when they are built.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"

#include "llvm/Support/Error.h"

namespace kc {

/// True if a parameter, a constant, a call's type or a `dtype` attribute of
/// `m` is f16.
bool mentionsHalf(const Module &m);

/// A copy of `m` (types inferred) with every f16 parameter f32, every f16
/// constant but the ops' weights converted to f32, every `dtype` attribute
/// naming f16 naming f32, and every other type inferred again from those.
llvm::Expected<ModulePtr> widenHalf(const Module &m);

} // namespace kc
