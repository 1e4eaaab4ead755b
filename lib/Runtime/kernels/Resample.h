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

enum class ResampleMode { Nearest, NearestExact, Linear, Cubic };

/// The taps of one spatial dim: output index o reads the T input indices
/// idx[o*T ...] with weights w[o*T ...] (T: 1 nearest, 2 linear, 4 cubic).
struct ResampleAxis {
  int T = 1;
  std::vector<int64_t> idx;
  std::vector<float> w;
};

/// One dim of `in` resampled to `out` with PyTorch's source-index rules
/// (Resample.cpp); `scaleFactor` 0 when none is given.
ResampleAxis resampleAxis(ResampleMode mode, int64_t in, int64_t out, bool align,
                          double scaleFactor);

/// nn.Upsample / F.interpolate in every mode (nearest, nearest-exact,
/// linear, bilinear, trilinear, bicubic) over 1 to 3 spatial dims, for the
/// calls the 2-d nearest and bilinear kernel of Upsample.cpp leaves to it.
llvm::Expected<std::unique_ptr<OpKernel>> makeResample(const CallNode &c, const CallShapes &io);

} // namespace kc::rt
