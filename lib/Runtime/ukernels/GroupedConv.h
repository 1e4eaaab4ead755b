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

/// One tile's `rows` output channels (weights kt) at NV vectors of
/// positions: in and out point at the first.
template <class T, int NV>
KC_UK_INLINE void gconvBlock(const float *in, const int64_t *offsets, int64_t taps, const float *kt,
                             int64_t rows, float *out, int64_t ldo) {
  using V = typename T::V;
  constexpr int L = T::kLanes, O = int(kGroupedOutputs);
  V acc[O][NV];
  for (int o = 0; o < O; ++o)
    for (int j = 0; j < NV; ++j)
      acc[o][j] = T::zero();
  const float *w = kt;
  for (int64_t t = 0; t < taps; ++t, w += O) {
    const float *p = in + offsets[t];
    V v[NV];
    for (int j = 0; j < NV; ++j)
      v[j] = T::load(p + j * L);
    for (int o = 0; o < O; ++o) {
      const V wo = T::broadcast(w + o);
      for (int j = 0; j < NV; ++j)
        acc[o][j] = T::fma(wo, v[j], acc[o][j]);
    }
  }
  for (int64_t o = 0; o < rows; ++o)
    for (int j = 0; j < NV; ++j)
      T::store(out + o * ldo + j * L, acc[o][j]);
}

/// GroupedConvFn with Blocks vectors of positions per block, and a last
/// block of the vectors left: a 14x14 plane's 224 flattened positions are
/// 14 vectors, which whole blocks of 4 computed as 16.
template <class T, int Blocks>
void f32_gconv(const float *in, const int64_t *offsets, int64_t taps, const float *k,
               int64_t outputs, float *out, int64_t ldo) {
  constexpr int L = T::kLanes, O = int(kGroupedOutputs);
  const int64_t whole = ldo / (Blocks * L) * (Blocks * L);
  const int64_t tail = (ldo - whole) / L;
  for (int64_t o0 = 0; o0 < outputs; o0 += O) {
    const float *kt = k + (o0 / O) * taps * O;
    const int64_t rows = minOf<int64_t>(O, outputs - o0);
    float *o = out + o0 * ldo;
    for (int64_t q0 = 0; q0 < whole; q0 += Blocks * L)
      gconvBlock<T, Blocks>(in + q0, offsets, taps, kt, rows, o + q0, ldo);
    withWidth<Blocks - 1>(tail, [&](auto nv) {
      gconvBlock<T, nv>(in + whole, offsets, taps, kt, rows, o + whole, ldo);
    });
  }
}

} // namespace kc::uk::KC_UK_ISA
