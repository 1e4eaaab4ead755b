//===- PoolNd.h - Pooling over 1 to 3 spatial dims --------------*- C++ -*-===//
#pragma once

#include "CallInfo.h"

namespace kc::rt {

/// The general pooling kernel (any of 1 to 3 spatial dims, max with
/// indices, average, LP, adaptive), for the calls the 2-d kernels of
/// Pool.cpp leave to it (return_indices).
llvm::Expected<std::unique_ptr<OpKernel>> makePoolNd(const CallNode &c,
                                                     const KernelBuildContext &ctx);

} // namespace kc::rt
