//===- PoolNd.h - Pooling over 1 to 3 spatial dims --------------*- C++ -*-===//
#pragma once

#include "CallInfo.h"

namespace kc::rt {

/// A pooling window over `n` dims as the attributes give it: kernel_size,
/// stride (kernel_size when absent), padding (0) and dilation (1).
struct PoolWindow {
  std::vector<int64_t> k, s, p, d;
};

/// The window of `c`, or an error when a list has not `n` entries.
inline llvm::Expected<PoolWindow> poolWindow(const CallNode &c, size_t n) {
  PoolWindow w{intsN(c, "kernel_size", n, {}), {}, {}, {}};
  w.s = intsN(c, "stride", n, w.k);
  if (w.s.empty())
    w.s = w.k;
  w.p = intsN(c, "padding", n, std::vector<int64_t>(n, 0));
  w.d = intsN(c, "dilation", n, std::vector<int64_t>(n, 1));
  if (w.k.size() != n || w.s.size() != n || w.p.size() != n || w.d.size() != n)
    return kernelError(c, "malformed kernel_size/stride/padding/dilation");
  return w;
}

/// The general pooling kernel (any of 1 to 3 spatial dims, max with
/// indices, average, LP, adaptive), for the calls the 2-d kernels of
/// Pool.cpp leave to it (return_indices).
llvm::Expected<std::unique_ptr<OpKernel>> makePoolNd(const CallNode &c,
                                                     const KernelBuildContext &ctx);

} // namespace kc::rt
