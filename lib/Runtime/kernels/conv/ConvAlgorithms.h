//===- ConvAlgorithms.h - The convolution algorithms and their choice -*- C++ -*-===//
//
// One algorithm per file in this folder; ChooseConv.cpp is the one place
// that picks among them: chooseConv for the planar algorithms, with every
// threshold, and the convolution factories for the rest.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ConvGeometry.h"

#include <memory>
#include <optional>

namespace kc::uk {
struct MicroKernels;
struct DepthwiseClamp;
}

namespace kc::rt {

enum class ConvAlgo {
  Depthwise,  ///< DepthwiseConv.cpp: a direct loop per channel plane
  StripGemm,  ///< StripConv.cpp: the strip kernel, patches gathered per block
  PanelGemm,  ///< PanelConv.cpp: the panel kernel over packed weights
  Winograd,   ///< WinogradConv.cpp: F(4x4, 3x3)
  Winograd23, ///< Winograd23Conv.cpp: F(2x2, 3x3), deep layers on small planes
  Grouped,    ///< GroupedConv.cpp: a direct loop per group, no patches
  Im2colBlas, ///< BlasConv.cpp: im2col + OpenBLAS
};

/// The depthwise loops (DepthwiseConv.cpp).
enum class DepthwiseLoop {
  Masked3x3,      ///< f32_dwconv3x3_masked, in place, any padding
  MaskedShort3x3, ///< the same on 8 lanes, for rows of at most 8 outputs
  Slide5x5,       ///< f32_dwconv5x5_slide, in place, padding 2
  Pad1x3x3,       ///< f32_dwconv3x3_pad1, padding 1 read in place
  Padded3x3,      ///< f32_dwconv3x3_padded on a zero-padded copy
  PaddedKxK,      ///< f32_dwconv_padded on a zero-padded copy: any kernel, stride 1 or 2
  Packed,         ///< f32_dwconv_packed: a vector of channels a position, any kernel, stride 1 or 2
  Generic,        ///< any kernel, a pass per tap over a padded copy
};

struct ConvChoice {
  ConvAlgo algo = ConvAlgo::Im2colBlas;
  DepthwiseLoop depthwise = DepthwiseLoop::Generic; ///< Depthwise
  /// StripGemm: a stride-2 layer's input rows split by column parity first.
  bool splitColumns = false;
  /// Im2colBlas: output rows per block, and the blocks per thread from
  /// which blocks of rows go to the threads instead of one split GEMM.
  int64_t blockRows = 0, minBlocksPerThread = 0;
};

/// What the choice depends on besides the geometry.
struct ConvContext {
  int threads;                  ///< threads the kernel is built for
  const uk::MicroKernels &uks;  ///< the micro-kernel table of this process
  bool winograd = true;         ///< false: KC_CONV_ALGO=im2col
  /// Whether another plan of the model (another input shape) has already
  /// packed this weight for the panel or the strip kernel.
  bool panelsPacked = false, stripsPacked = false;
};

/// The algorithm for a convolution of geometry g.
ConvChoice chooseConv(const ConvGeometry &g, const ConvContext &ctx);

/// How a 1×1 layer and the 3×3 depthwise layer after it run together in
/// bands of the depthwise layer's output rows (BandedConv.cpp).
struct BandPlan {
  int64_t rows;    ///< output rows per band
  int64_t floats;  ///< floats of one band's expanded rows
};

/// Whether a 1×1 layer `pointwise` on the strip kernel should absorb the
/// depthwise layer `depthwise` after it (chosen as `dw`), and in what bands.
std::optional<BandPlan> chooseBands(const ConvGeometry &pointwise, const ConvGeometry &depthwise,
                                    const ConvChoice &dw, int threads);

// The algorithms. Each takes the geometry, the choice and the weights.
std::unique_ptr<OpKernel> makeDepthwiseConv(const ConvGeometry &g, const ConvChoice &c,
                                            ConvWeights w);
std::unique_ptr<OpKernel> makeStripConv(const ConvGeometry &g, const ConvChoice &c, ConvWeights w);
std::unique_ptr<OpKernel> makePanelConv(const ConvGeometry &g, ConvWeights w);
std::unique_ptr<OpKernel> makeWinogradConv(const ConvGeometry &g, ConvWeights w);
std::unique_ptr<OpKernel> makeWinograd23Conv(const ConvGeometry &g, ConvWeights w);
std::unique_ptr<OpKernel> makeGroupedConv(const ConvGeometry &g, ConvWeights w);
std::unique_ptr<OpKernel> makeBlasConv(const ConvGeometry &g, const ConvChoice &c, ConvWeights w);
std::unique_ptr<OpKernel> makeTransposedConv(const ConvGeometry &g, ConvWeights w);

/// WinogradFilters.cpp: U_p = (G g Gᵀ)[p] for the T × T tile positions p
/// of a Winograd F(T − 2, 3) with filter transform G (T × 3, row-major, T
/// at most 6), g over the (OC, C, 3, 3) weight: a (T², uSize) tensor, each
/// position's OC × C matrix packed for gemmPanels (uSize = packedSize(OC,
/// C)). In parallel, one panel of output channels by 16 input channels at
/// a time, so every write is a run of 256 floats (single floats T² planes
/// apart hit one cache set when OC·C is a power of two).
Tensor winogradFilters(const float *weight, int64_t OC, int64_t C, const float *G, int T,
                       size_t uSize);

/// ChooseConv.cpp: the planar kernel chooseConv picks for `g`.
std::unique_ptr<OpKernel> makePlanarKernel(const ConvGeometry &g, ConvWeights w);

/// SlicedConv3d.cpp: a 3-d convolution (one group, dilation 1 along depth)
/// as one 2-d convolution per output slice over kD*C input channels.
struct SlicedConv3d {
  int64_t N, C, D, H, W, OC, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, DH, DW;
};
std::unique_ptr<OpKernel> makeSlicedConv3d(const SlicedConv3d &s, const Tensor &weight,
                                           Tensor bias);

// Calls the planar algorithms above do not take, read from the call itself.

/// NdConv.cpp: im2col and sgemm over 1 to 3 spatial dims (and its
/// transposed form), the weight and bias from the archive or operands.
llvm::Expected<std::unique_ptr<OpKernel>> makeNdConv(const CallNode &c);

/// PaddedConv.cpp: padding_mode reflect, replicate or circular as F.pad in
/// that mode, then the call's own convolution without padding (built
/// through the registry, so chosen as any other).
llvm::Expected<std::unique_ptr<OpKernel>> makePaddedConv(const CallNode &c,
                                                         const KernelBuildContext &ctx);

/// A depthwise layer as the banded pair takes it over.
struct DepthwiseParts {
  ConvGeometry g;
  ConvChoice choice;
  ConvWeights w;
};

/// The clamp the depthwise loops apply for a fused activation: ReLU and
/// ReLU6, open for the others, which run over the stored outputs.
uk::DepthwiseClamp depthwiseClamp(Act act);
/// Whether that clamp is the whole of `act` (none, ReLU, ReLU6).
bool depthwiseClampIsWhole(Act act);

/// The parts of `k` if it is a depthwise convolution kernel.
std::optional<DepthwiseParts> depthwiseParts(const OpKernel &k);

/// A 1×1 layer on the strip kernel (weights, its fused activation) and the
/// depthwise layer after it, run in bands of `plan`.
std::unique_ptr<OpKernel> makeBandedConv(const ConvGeometry &pointwise, ConvWeights w,
                                         Activation act, DepthwiseParts dw, const BandPlan &plan,
                                         int threads);

} // namespace kc::rt
