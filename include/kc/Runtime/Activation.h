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

/// Gelu is nn.GELU's exact form (with erf), GeluTanh its approximate="tanh".
enum class Act : uint8_t { None, Relu, Relu6, Silu, Sigmoid, Hardswish, LeakyRelu, Gelu, GeluTanh };
constexpr int kNumActs = 9;

/// An activation and its parameter (LeakyReLU's negative slope).
struct Activation {
  Act kind = Act::None;
  float slope = 0.f;
};

} // namespace kc::rt
