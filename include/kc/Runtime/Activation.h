//===- kc/Runtime/Activation.h - Activations kernels can fuse ---*- C++ -*-===//
///
/// \file
/// The activations a producer kernel (a convolution, a linear layer) can
/// apply in its epilogue instead of a separate pass over memory.
///
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace kc::rt {

enum class Act : uint8_t { None, Relu, Relu6, Silu, Sigmoid, Hardswish, LeakyRelu };
constexpr int kNumActs = 7;

/// An activation and its parameter (LeakyReLU's negative slope).
struct Activation {
  Act kind = Act::None;
  float slope = 0.f;
};

} // namespace kc::rt
