//===- Rebind.h - Kernels of ops that are other ops in disguise -*- C++ -*-===//
///
/// \file
/// Many PNNX op types are another op with some attributes fixed or renamed
/// (nn.ReflectionPad2d is F.pad with mode 'reflect', nn.Softmax2d is
/// nn.Softmax over dim -3, torch.t is a transpose). They are separate ops in
/// the IR, so that a printed or exported model says what the file said; at
/// load time their kernel is the other op's kernel, built for a call with
/// the same operands, result type, name and line.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "CallInfo.h"

namespace kc::rt {

/// The kernel the registered op `opName` has for a call of it with `args`
/// (keyed by `keys`) and `attrs`, and `c`'s name, line and result type (or
/// `resultType`). Errors name `c` as written. The kernel reads its inputs
/// by position: an argument may be replaced by a Var of another shape of
/// the same bytes (a reshape the interpreter need not run).
llvm::Expected<std::unique_ptr<OpKernel>> kernelAs(const CallNode &c, llvm::StringRef opName,
                                                   llvm::ArrayRef<Expr> args,
                                                   llvm::ArrayRef<ArgKey> keys, Attrs attrs,
                                                   const KernelBuildContext &ctx,
                                                   Type resultType = nullptr);

/// The same with `c`'s own operands.
inline llvm::Expected<std::unique_ptr<OpKernel>>
kernelAs(const CallNode &c, llvm::StringRef opName, Attrs attrs, const KernelBuildContext &ctx) {
  return kernelAs(c, opName, c.args(), c.keys(), std::move(attrs), ctx);
}

} // namespace kc::rt
