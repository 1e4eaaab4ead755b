//===- PoolNd.h - Pooling over 1 to 3 spatial dims --------------*- C++ -*-===//
#pragma once

#include "CallInfo.h"

#include "kc/IR/WindowAttrs.h"

namespace kc::rt {

/// The window of pool `c` over `n` dims (kernel_size, stride, padding,
/// dilation), read as the type rule reads it.
inline llvm::Expected<WindowAttrs> poolWindow(const CallNode &c, size_t n) {
  auto w = WindowAttrs::from(c, n, WindowOp::Pool);
  if (!w)
    return kernelError(c, llvm::toString(w.takeError()));
  return w;
}

/// The general pooling kernel (any of 1 to 3 spatial dims, max with
/// indices, average, LP, adaptive), for the calls the 2-d kernels of
/// Pool.cpp leave to it (return_indices).
llvm::Expected<std::unique_ptr<OpKernel>> makePoolNd(const CallNode &c,
                                                     const KernelBuildContext &ctx);

} // namespace kc::rt
