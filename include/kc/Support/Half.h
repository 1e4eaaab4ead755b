//===- kc/Support/Half.h - IEEE binary16 conversions ------------*- C++ -*-===//
///
/// \file
/// kc computes models whose tensors are f16 in f32 (docs/ops.md, "Element
/// types"): their weights are widened once at load, their f16 inputs on
/// entry and their f16 outputs narrowed on exit. These are the only two
/// conversions it needs, written out in integer arithmetic so that they
/// give the IEEE results on every machine: widening is exact, narrowing
/// rounds to nearest, ties to even, keeps infinities and signed zeros, gives
/// a quiet NaN for a NaN (sign and the payload's top bits kept, as the x86
/// F16C instructions do) and infinity past the largest half (65504).
///
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>

namespace kc {

float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);

/// `n` halves from `src`, which may be unaligned (an archive's bytes).
void halfToFloat(const void *src, float *dst, size_t n);
void floatToHalf(const float *src, uint16_t *dst, size_t n);

} // namespace kc
