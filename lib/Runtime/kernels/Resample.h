//===- Resample.h - Interpolation over 1 to 3 spatial dims ------*- C++ -*-===//
#pragma once

#include "Operands.h"

namespace kc::rt {

/// Refuses antialias=True (PyTorch's antialiased downsampling), which no
/// resampling kernel implements.
inline llvm::Error refuseAntialias(const CallNode &c) {
  return refuseAttr(c, "antialias", AttrValue::boolean(false),
                    "an antialiasing filter when downsampling; kc resamples without one");
}

/// nn.Upsample / F.interpolate in every mode (nearest, nearest-exact,
/// linear, bilinear, trilinear, bicubic) over 1 to 3 spatial dims, for the
/// calls the 2-d nearest and bilinear kernel of Upsample.cpp leaves to it.
llvm::Expected<std::unique_ptr<OpKernel>> makeResample(const CallNode &c, const CallShapes &io);

} // namespace kc::rt
