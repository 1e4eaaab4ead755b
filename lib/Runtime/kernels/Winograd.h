//===- Winograd.h - Winograd convolution ------------------------*- C++ -*-===//
#pragma once

#include "KernelUtils.h"

namespace kc::rt {

/// A 3x3, stride 1, dilation 1, ungrouped convolution of (N, C, H, W) into
/// (N, OC, OH, OW) with zero padding (PH, PW), by Winograd F(4x4, 3x3).
/// `weight` is (OC, C, 3, 3); it is transformed on the first run and then
/// let go, and the pages of `mapped` (the .bin bytes it may view, or null)
/// released.
std::unique_ptr<OpKernel> makeWinograd43(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OC,
                                         int64_t OH, int64_t OW, int64_t PH, int64_t PW,
                                         Tensor weight, Tensor bias, TensorDataPtr mapped);

} // namespace kc::rt
