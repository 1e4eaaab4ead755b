//===- MicroKernels.h - The micro-kernel table ------------------*- C++ -*-===//
//
// Micro-kernels are the innermost loops of the runtime: plain functions
// over pointers and sizes, with no IR. Each is written once, as a template
// over a vector-traits type (Lanes.h, Avx2.h, Avx512.h), and compiled once
// per instruction set in a file that carries that set's compiler flags
// (isa/*.cpp). One table of function pointers per instruction set holds
// them; the table this process uses is chosen once, from the CPU and the
// environment variable KC_ISA (scalar, avx2 or avx512), and nothing outside
// the table asks which instruction set runs.
//
// This header is included by the per-ISA files too: it declares types,
// constants and functions, and defines no inline function, so it gives
// them nothing of vague linkage that another file could end up calling.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Runtime/Activation.h"

#include <cstddef>
#include <cstdint>

namespace kc::uk {

using rt::Act;
using rt::kNumActs;

/// Rows of A per strip of the strip kernel (f32_gemm_strip).
constexpr int64_t kStripRows = 6;
/// Columns of B handed to the strip kernel at a time, and the floats between
/// the rows of such a block (padded so that rows do not fall into a few
/// cache sets).
constexpr int64_t kStripBlockCols = 64;
constexpr int64_t kStripBlockLd = 80;

/// Rows per panel of a packed left operand (f32_gemm_panel).
constexpr int64_t kPanelRows = 16;
/// Columns of B per strip of its packed form.
constexpr int64_t kColumnStrip = 6;

/// Widest rows the 3x3 depthwise loops read in place: rows above and below
/// the plane read a row of zeros this long (zeroRow()).
constexpr int64_t kDepthwiseMaxWidth = 4096;
/// The most floats a vector of any table holds.
constexpr int64_t kMaxLanes = 16;

/// Where B's columns are for the panel kernel: row-major (column n at
/// base + n, rows ldb apart), or as strips of 6 columns (stripStride floats
/// apart, each K rows of 6, ldb = 6).
struct PanelColumns {
  const float *base;
  int64_t ldb, stripStride = 0;
};

/// Bytes to fetch into L2 while blocks run: from `from`, spread evenly over
/// a block's K steps (step k touches from + (k * step >> 16)); each next
/// block of a panel starts `advance` bytes further.
struct Prefetch {
  const char *from = nullptr;
  int64_t step = 0, advance = 0;
};

/// p[j] = act(p[j] + bias[PerElement ? j : 0]) for j < n.
using BiasActFn = void (*)(float *p, int64_t n, const float *bias, float slope);

/// The clamp [lo, hi] the depthwise loops apply before storing (ReLU,
/// ReLU6, or open); other activations run over the stored outputs, many
/// planes at a time (DepthwiseConv.cpp).
struct DepthwiseClamp {
  float lo, hi;
};

/// C[rows × cols] = act(A · B + bias + D): one strip of A (K groups of 6
/// floats, rows ≤ 6 of them used) times a block of B (K rows of cols ≤
/// kStripBlockCols floats, ldb apart; rows start on cache lines), bias per
/// row or null, D laid out as C (a residual) or null. Columns past `cols`
/// may hold anything: they are computed and never stored.
using GemmStripFn = void (*)(const float *a, const float *b, int64_t ldb, int64_t K,
                             const float *bias, float slope, float *c, int64_t ldc, int64_t rows,
                             int64_t cols, const float *d);

/// Rows [0, rows) of packed A at `a` (rows ≤ kPanelRows·panelsPerStep,
/// panels kPanelRows·K floats apart) times columns [n0, n1) of B, into C
/// at c (column n0's first output): C row-major (ldc), or with RowsOut
/// column j of the product as row j of C. With Fetch, `pf` is fetched
/// ahead meanwhile.
using GemmPanelFn = void (*)(const float *a, int64_t K, const PanelColumns &B, int64_t n0,
                             int64_t n1, float *c, int64_t ldc, int64_t rows, const Prefetch &pf);

/// One channel plane (H×W into OH×OW) of a 3x3 depthwise layer with
/// dilation 1, weights k[9], bias b; the stride is the table slot's.
/// Masked: any padding PH, PW ≤ 16, W ≤ kDepthwiseMaxWidth, rows
/// outside the plane read as zeros, loads leaving a row masked to it.
using DepthwiseMaskedFn = void (*)(const float *src, float *dst, int64_t H, int64_t W, int64_t OH,
                                   int64_t OW, int64_t PH, int64_t PW, const float *k, float b,
                                   const DepthwiseClamp &e);
/// One channel plane of a 5x5 depthwise layer with dilation 1 and padding
/// 2 columns (any rows PH), weights k[25], read in place like
/// DepthwiseMaskedFn; the stride is the table slot's.
using DepthwiseSlide5Fn = void (*)(const float *src, float *dst, int64_t H, int64_t W, int64_t OH,
                                   int64_t OW, int64_t PH, const float *k, float b,
                                   const DepthwiseClamp &e);
/// Padding 1 read in place, 24 ≤ W ≤ kDepthwiseMaxWidth.
using DepthwisePad1Fn = void (*)(const float *src, float *dst, int64_t H, int64_t W, int64_t OH,
                                 int64_t OW, const float *k, float b, const DepthwiseClamp &e);
/// From a zero-padded plane (rows PWt floats apart; reads may run up to 15
/// floats past the plane, and short rows' stores into the rows after them).
using DepthwisePaddedFn = void (*)(const float *pad, int64_t PWt, float *dst, int64_t OH,
                                   int64_t OW, const float *k, float b, const DepthwiseClamp &e);

/// The kernel and dilation of a depthwise layer the KxK loop runs.
struct DepthwiseShape {
  int64_t KH, KW, DH, DW;
};
/// From a zero-padded plane like DepthwisePaddedFn, any kernel size and
/// dilation: reads may run up to 2·lanes + (KW − 1)·DW floats past the
/// plane.
using DepthwiseKxKFn = void (*)(const float *pad, int64_t PWt, float *dst, int64_t OH, int64_t OW,
                                const DepthwiseShape &s, const float *k, float b,
                                const DepthwiseClamp &e);

/// A depthwise layer's shapes as the channel-packed loop reads them: the
/// input plane, the output plane, the kernel, strides, dilations, padding,
/// and the padded copy's row width PWt (positions).
struct DepthwisePackedShape {
  int64_t H, W, OH, OW, KH, KW, SH, SW, DH, DW, PH, PW, PWt;
};
/// `count` ≤ lanes channel planes (H×W, one after another) into as many
/// output planes at dst (OH×OW each), through `pad`, the block's padded
/// copy (paddedH·PWt positions of lanes floats), and `out`, OH·OW·lanes
/// floats. Weights k (KH·KW vectors, a tap's lanes channels together) and
/// biases b (a vector) are packed by channel block, zeros past the layer's
/// channels.
using DepthwisePackedFn = void (*)(const float *src, int64_t count, float *dst,
                                   const DepthwisePackedShape &s, const float *k, const float *b,
                                   const DepthwiseClamp &e, float *pad, float *out);

/// Output channels per block of the grouped loop (its weights are packed
/// in tiles of as many).
constexpr int64_t kGroupedOutputs = 4;
/// Output channels [0, outputs) of one group of a grouped layer, each a row
/// of `ldo` positions (a multiple of the vector's lanes): out[o·ldo + q] =
/// Σ_t k[t][o] · in[offsets[t] + q] over the `taps` taps, the weights
/// packed [outputs/kGroupedOutputs][taps][kGroupedOutputs]. Reads reach
/// ldo − 1 past the largest offset.
using GroupedConvFn = void (*)(const float *in, const int64_t *offsets, int64_t taps,
                               const float *k, int64_t outputs, float *out, int64_t ldo);

/// Winograd F(4x4, 3x3) input transform of one channel: tiles t in
/// [0, T) of a zero-bordered plane (rows PWt apart, TW tiles a row, 8
/// floats readable from every tile row) into v[p·vStride + t] for the 36
/// positions p.
using WinogradInputFn = void (*)(const float *pad, int64_t PWt, int64_t TW, int64_t T, float *v,
                                 int64_t vStride);
/// The output transform of one output channel: m[p·mStride + t] (8 floats
/// readable past T) into the OH×OW plane, tiles clipped at its edges.
using WinogradOutputFn = void (*)(const float *m, int64_t mStride, int64_t TW, int64_t T,
                                  float *plane, int64_t OH, int64_t OW);

/// One output row of a pool from the row its window's input rows were
/// combined into: OW outputs, stride S (1 or 2), K taps D apart; averages
/// divide by rowCount · counts[ow] (counts null: none, a max or a sum).
/// How far the poolRow kernel reads (a vector of at most 16 lanes, two of
/// them at stride 2): kPoolRowReach floats past its last window's start
/// plus (K − 1)·D, kPoolRowCountsReach counts from any ow; at stride 1 with
/// at least kPoolRowInPlaceWidth outputs, only up to its last window's end.
constexpr int64_t kPoolRowReach = 32, kPoolRowCountsReach = 16, kPoolRowInPlaceWidth = 16;
struct PoolRow {
  int64_t OW, S, K, D;
  const float *counts = nullptr; ///< readable kPoolRowCountsReach floats from any ow
  float rowCount = 1.f;
};
/// row[ow] = the max (NaN where any is; PoolRowFn[1]) or the sum
/// (PoolRowFn[0]) of t[ow·S + k·D] over k < K, t and counts readable as
/// far as kPoolRowReach and kPoolRowCountsReach say.
using PoolRowFn = void (*)(const float *t, float *row, const PoolRow &r);

/// Mean and (biased) variance of n floats, summed in double.
using MeanVarianceFn = void (*)(const float *x, int64_t n, double *mean, double *variance);

using ExpSumFn = float (*)(const float *x, float *e, int64_t n, float sign, float shift);

struct MicroKernels {
  const char *isa;   ///< "scalar", "avx2" or "avx512"
  int64_t lanes;     ///< floats per vector

  int64_t stripTileCols;            ///< columns of a strip tile (2 vectors)
  GemmStripFn gemmStrip[kNumActs];  ///< f32_gemm_strip, by activation

  int64_t panelsPerStep;            ///< panels of A a panel block takes
  int64_t panelBlockCols;           ///< widest block of columns
  GemmPanelFn gemmPanel[2][2];      ///< f32_gemm_panel, [RowsOut][Fetch]
  /// Blocks of columns gemmPanel cuts `cols` columns into (over which a
  /// fetch-ahead is spread).
  int64_t (*panelColumnBlocks)(int64_t cols);

  /// f32_dwconv3x3_masked by stride - 1; null where masked loads and
  /// stores are slow.
  DepthwiseMaskedFn depthwiseMasked[2];
  /// The same on 8 lanes with fast masks (rows of at most 8 outputs); null
  /// where there are none.
  DepthwiseMaskedFn depthwiseMaskedShort[2];
  /// f32_dwconv5x5_slide by stride - 1; null where masks are slow.
  DepthwiseSlide5Fn depthwiseSlide5[2];
  DepthwisePad1Fn depthwisePad1[2];       ///< f32_dwconv3x3_pad1
  DepthwisePaddedFn depthwisePadded[2];   ///< f32_dwconv3x3_padded
  DepthwiseKxKFn depthwiseKxK[2];         ///< f32_dwconv_padded
  DepthwisePackedFn depthwisePacked[2];   ///< f32_dwconv_packed, by column stride - 1

  GroupedConvFn groupedConv; ///< f32_gconv
  int64_t groupedBlock;      ///< positions per block of groupedConv

  WinogradInputFn winogradInput;    ///< f32_winograd43_input
  WinogradOutputFn winogradOutput;  ///< f32_winograd43_output

  BiasActFn biasAct[kNumActs][2];   ///< f32_bias_act, [act][PerElement]
  PoolRowFn poolRow[2];             ///< f32_pool_row, [IsMax]
  MeanVarianceFn meanVariance;      ///< f32_mean_variance
  ExpSumFn expSum;                  ///< f32_exp_sum (softmax)
};

/// The table this process uses, chosen at the first call: the widest set
/// the CPU (and OS) supports among those built, or the one KC_ISA names
/// ("scalar", "avx2", "avx512") if the CPU supports it.
const MicroKernels &microKernels();

/// The table of instruction set `isa`, or null when it is not built or the
/// CPU lacks it (for tests that compare the forms).
const MicroKernels *microKernelsFor(const char *isa);

/// Makes `t` the table microKernels() returns (null: the one chosen), for
/// tests that run whole models on a table the CPU could not choose (the
/// emulated AVX-512). Not while kernels run; kernels built before keep the
/// choices they made from the table they saw.
void setMicroKernelsForTesting(const MicroKernels *t);

/// kDepthwiseMaxWidth + 64 zeros, 32 readable before the pointer: the rows
/// outside a plane for the 3x3 depthwise loops.
const float *zeroRow();

} // namespace kc::uk
