//===- MeanVariance.h - Statistics of a run of floats -----------*- C++ -*-===//
#pragma once

#include <cstdint>
#include <utility>

namespace kc::rt {

/// Mean and (biased) variance of n floats, summed in double (Norm.cpp).
std::pair<double, double> meanVariance(const float *x, int64_t n);

} // namespace kc::rt
