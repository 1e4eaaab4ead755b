//===- Table.h - One instruction set's micro-kernel table -------*- C++ -*-===//
#pragma once

#include "Depthwise3x3.h"
#include "DepthwiseKxK.h"
#include "DepthwisePacked.h"
#include "Epilogue.h"
#include "GemmPanel.h"
#include "GemmStrip.h"
#include "GroupedConv.h"
#include "MicroKernels.h"
#include "RowReduce.h"
#include "Winograd43.h"

#include <type_traits>

namespace kc::uk::KC_UK_ISA {

/// The micro-kernels instantiated for traits T (the 8-lane ones for
/// T::Narrow); the masked depthwise loops only where masks are fast.
template <class T> MicroKernels buildTable(const char *isa) {
  using N = typename T::Narrow;
  MicroKernels t{};
  t.isa = isa;
  t.lanes = T::kLanes;
  t.stripTileCols = 2 * T::kLanes;
  unroll<kNumActs>([&](auto a) {
    constexpr Act A = Act(decltype(a)::value);
    t.gemmStrip[a] = &f32_gemm_strip<T, A>;
    t.biasAct[a][0] = &f32_bias_act<T, A, false>;
    t.biasAct[a][1] = &f32_bias_act<T, A, true>;
  });
  t.panelsPerStep = T::kLanes >= 16 ? 2 : 1;
  t.panelBlockCols = kPanelMaxCols<T>;
  t.gemmPanel[0][0] = &f32_gemm_panel<T, false, false>;
  t.gemmPanel[0][1] = &f32_gemm_panel<T, false, true>;
  t.gemmPanel[1][0] = &f32_gemm_panel<T, true, false>;
  t.gemmPanel[1][1] = &f32_gemm_panel<T, true, true>;
  t.panelColumnBlocks = &f32_gemm_panel_column_blocks<T>;
  if constexpr (T::kFastMasks) {
    t.depthwiseMasked[0] = &f32_dwconv3x3_masked<T, 1>;
    t.depthwiseMasked[1] = &f32_dwconv3x3_masked<T, 2>;
    t.depthwiseSlide5[0] = &f32_dwconv5x5_slide<T, 1>;
    t.depthwiseSlide5[1] = &f32_dwconv5x5_slide<T, 2>;
  }
  if constexpr (!std::is_void_v<typename T::ShortMasked>) {
    t.depthwiseMaskedShort[0] = &f32_dwconv3x3_masked<typename T::ShortMasked, 1>;
    t.depthwiseMaskedShort[1] = &f32_dwconv3x3_masked<typename T::ShortMasked, 2>;
  }
  t.depthwisePad1[0] = &f32_dwconv3x3_pad1<N, 1>;
  t.depthwisePad1[1] = &f32_dwconv3x3_pad1<N, 2>;
  t.depthwisePadded[0] = &f32_dwconv3x3_padded<N, 1>;
  t.depthwisePadded[1] = &f32_dwconv3x3_padded<N, 2>;
  t.depthwiseKxK[0] = &f32_dwconv_padded<N, 1>;
  t.depthwiseKxK[1] = &f32_dwconv_padded<N, 2>;
  t.depthwisePacked[0] = &f32_dwconv_packed<T, 1>;
  t.depthwisePacked[1] = &f32_dwconv_packed<T, 2>;
  // Four vectors of positions on 16 lanes (16 accumulators), two on 8.
  constexpr int kGroupedBlocks = T::kLanes >= 16 ? 4 : 2;
  t.groupedConv = &f32_gconv<T, kGroupedBlocks>;
  t.groupedBlock = kGroupedBlocks * T::kLanes;
  t.winogradInput = &f32_winograd43_input<N>;
  t.winogradOutput = &f32_winograd43_output<N>;
  t.poolRow[0] = &f32_pool_row<N, false>;
  t.poolRow[1] = &f32_pool_row<N, true>;
  t.meanVariance = &f32_mean_variance<N>;
  t.expSum = &f32_exp_sum<T>;
  return t;
}

} // namespace kc::uk::KC_UK_ISA

#define KC_UK_UNPAREN(...) __VA_ARGS__

/// Defines kc::uk::KC_UK_ISA::table(): the table of traits TRAITS (in
/// parentheses if it holds a comma), built once.
#define KC_UK_DEFINE_TABLE(TRAITS)                                                                 \
  namespace kc::uk::KC_UK_ISA {                                                                    \
  const MicroKernels &table() {                                                                    \
    static const MicroKernels t = buildTable<KC_UK_UNPAREN TRAITS>(KC_UK_ISA_NAME);                              \
    return t;                                                                                      \
  }                                                                                                \
  }
