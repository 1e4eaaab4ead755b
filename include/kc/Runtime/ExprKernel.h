//===- kc/Runtime/ExprKernel.h - Expression programs at run time -*- C++ -*-===//
///
/// \file
/// Runs a primitive expression function (a `pnnx.Expression`) as its
/// reverse-Polish program on a stack machine, block by block: each block of
/// output elements goes through the whole program in cache-sized scratch
/// rows, with NumPy broadcasting of the operands, instead of one temporary
/// tensor per operator.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Runtime/OpKernel.h"

namespace kc::rt {

/// A kernel for `call`, whose callee is the primitive function `fn`.
llvm::Expected<std::unique_ptr<OpKernel>> makeExprKernel(const CallNode &call,
                                                         const FunctionNode &fn,
                                                         const KernelBuildContext &ctx);

} // namespace kc::rt
