//===- PaddedConv.h - Convolutions with a padding_mode ----------*- C++ -*-===//
#pragma once

#include "KernelUtils.h"

namespace kc::rt {

/// True if `c` (a convolution) pads in a mode other than zeros.
bool hasPaddingMode(const CallNode &c);

/// A convolution with padding_mode reflect, replicate or circular, run as
/// PyTorch defines it: F.pad in that mode, then the same convolution with
/// no padding (whose kernel comes from the op's own factory).
llvm::Expected<std::unique_ptr<OpKernel>> makePaddedConv(const CallNode &c,
                                                         const KernelBuildContext &ctx);

} // namespace kc::rt
