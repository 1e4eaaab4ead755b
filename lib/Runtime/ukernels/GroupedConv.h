//===- GroupedConv.h - f32_gconv: one group of a grouped layer --*- C++ -*-===//
//
// A group of a grouped convolution without a patch matrix. The caller lays
// the group's input out so that every tap of every output reads at the
// output's position plus a fixed offset: zero-padded planes, flattened over
// their padded row width (at stride s, each plane split first into its s×s
// phases, so that a tap steps by one position per output again). A vector
// of consecutive outputs is then one load per tap; positions that are no
// output (the ends of flattened rows) are computed and not stored.
//
// A block holds kGroupedOutputs output channels by `Blocks` vectors of
// positions in registers and takes a step per tap: the vectors loaded
// once, the channels' weights broadcast from consecutive floats.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "MicroKernels.h"
#include "Unroll.h"

namespace kc::uk::KC_UK_ISA {

/// GroupedConvFn with Blocks vectors of positions per block.
template <class T, int Blocks>
void f32_gconv(const float *in, const int64_t *offsets, int64_t taps, const float *k,
               int64_t outputs, float *out, int64_t ldo) {
  using V = typename T::V;
  constexpr int L = T::kLanes, O = int(kGroupedOutputs);
  for (int64_t o0 = 0; o0 < outputs; o0 += O) {
    const float *kt = k + (o0 / O) * taps * O;
    const int64_t rows = minOf<int64_t>(O, outputs - o0);
    for (int64_t q0 = 0; q0 < ldo; q0 += Blocks * L) {
      V acc[O][Blocks];
      for (int o = 0; o < O; ++o)
        for (int j = 0; j < Blocks; ++j)
          acc[o][j] = T::zero();
      const float *w = kt;
      for (int64_t t = 0; t < taps; ++t, w += O) {
        const float *p = in + offsets[t] + q0;
        V v[Blocks];
        for (int j = 0; j < Blocks; ++j)
          v[j] = T::load(p + j * L);
        for (int o = 0; o < O; ++o) {
          const V wo = T::broadcast(w + o);
          for (int j = 0; j < Blocks; ++j)
            acc[o][j] = T::fma(wo, v[j], acc[o][j]);
        }
      }
      for (int64_t o = 0; o < rows; ++o)
        for (int j = 0; j < Blocks; ++j)
          T::store(out + (o0 + o) * ldo + q0 + j * L, acc[o][j]);
    }
  }
}

} // namespace kc::uk::KC_UK_ISA
