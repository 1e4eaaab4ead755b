//===- Resample.h - Interpolation over 1 to 3 spatial dims ------*- C++ -*-===//
#pragma once

#include "CallInfo.h"

namespace kc::rt {

/// nn.Upsample / F.interpolate in every mode (nearest, nearest-exact,
/// linear, bilinear, trilinear, bicubic) over 1 to 3 spatial dims, for the
/// calls the 2-d nearest and bilinear kernel of Upsample.cpp leaves to it.
llvm::Expected<std::unique_ptr<OpKernel>> makeResample(const CallNode &c, const CallShapes &io);

} // namespace kc::rt
