//===- ChooseConv.cpp - Which algorithm runs a convolution ----------------===//
//
// Every convolution op: nn.Conv1d/2d/3d, their transposed forms and the
// F.conv* functions. First the call decides the path:
//
// - padding_mode reflect, replicate or circular: F.pad in that mode, then
//   the same convolution unpadded (PaddedConv.cpp).
// - 3 spatial dims, or weights that are operands (F.conv*): im2col and
//   sgemm over any number of spatial dims (NdConv.cpp).
// - Transposed 1-d and 2-d: TransposedConv.cpp.
//
// Other 1-d and 2-d convolutions run on one of the planar algorithms. Every
// threshold that picks one is here, with what it was measured on
// (docs/performance.md has the full account):
//
// - Winograd F(4x4, 3x3) for 3x3 stride-1 ungrouped layers with at least
//   16 input and 16 output channels and 64 outputs per plane, and, when
//   the transformed filters pass 16 MiB, 16 tiles per plane or planes of
//   whole tiles; F(2x2, 3x3) for the others with as many channels on
//   planes of at most 256 outputs.
// - Depthwise layers other than 3x3 ones on rows of more than 16 inputs
//   run a vector of channels at a time; those a direct loop per channel
//   plane (masked loads in place where masks are fast, else over a padded
//   copy).
// - Other grouped layers of at most 32 output channels a group and sums of
//   at most 512 terms run a direct loop per group over padded (and, at a
//   stride, phase-split) planes, without patches.
// - Deep layers (K > 256, or at most 64 outputs per plane; at most 256
//   outputs) run on the panel kernel over weights packed once.
// - Other layers with at least 8 output channels per group run on the strip
//   kernel; below 8, its strips of 6 rows are mostly padding.
// - The rest run as im2col + OpenBLAS, by blocks of rows with several
//   threads.
// - Between the panel and the strip kernel, a layer whose weight the plan
//   of another input shape already packed for one keeps that one.
//
// KC_CONV_ALGO=im2col turns Winograd off (for measurements).
//
//===----------------------------------------------------------------------===//
#include "ConvAlgorithms.h"
#include "../../ukernels/MicroKernels.h"

#include <cstdlib>
#include <omp.h>

namespace kc::rt {
namespace {

/// Input channels from which Winograd beats the strip kernel. 16 holds on
/// one thread (unet_small 3.03 to 2.82 ms) and, since every tile runs on
/// the vector path, on two (unet_small 1.65 to 1.44 ms, yolo_small 1.37 to
/// 1.31 ms; at 32, as before, the strip kernel took the 16-channel layers).
/// Below 16 outputs or 64 positions the transforms are not amortized; on
/// 7x7 planes (4 tiles) the 36 products are matrix-vector-like.
constexpr int64_t kMinWinogradChannels = 16, kMinWinogradOutputs = 16, kMinWinogradPlane = 64;

/// Winograd's transformed filters are 4x the weight (36 values for 9) and
/// are read whole on every run. Beyond 16 MiB (half the L3 cache of the
/// 2-core machines kc is measured on) they stream from memory, which only
/// pays on planes of at least 16 tiles or on planes the tiles cover
/// exactly (every tile's 16 outputs used: inception_v3's 448->384 layers
/// on 8x8, 24.8 MB of filters, 1.95-2.46 to 1.30-1.34 ms each at 1 thread;
/// resnet18's 512-channel layers on 7x7, 49 of 64 outputs used, stay
/// slower on F(4x4, 3x3), 22.0 against 22.1-22.4 ms). On 9x9 and 10x10 planes (9 tiles;
/// resnet18 at 288 and 320) its 512-channel layers (37.7 MB of filters)
/// run faster on the panel kernel (1x3x288x288 at 1 thread 25.8 to 23.3 ms,
/// medians of 5 interleaved rounds), and a model that meets those sizes
/// only at a new input shape does not transform 113 MiB of filters for
/// them. Its 256-channel layers (9.4 MB) on 10x12 planes stay faster on
/// Winograd (1x3x160x192: 10.4 ms against 10.5 at a 1 MiB bound).
constexpr int64_t kWinogradCachedFilters = 16 << 20, kMinWinogradTilesStreamed = 16;

/// The layers F(4x4, 3x3) leaves on planes of at most 256 outputs, with as
/// many channels, take F(2x2, 3x3): 16 values a filter (1.8x the weight),
/// 4 multiplies an output against the panel kernel's 9 (lone layers at 1
/// thread, 512 channels on 7x7 2.15 -> 1.35 ms, on 4x4 0.69 -> 0.37, on
/// 10x10 4.38 -> 2.10; 128 -> 32 on 7x7 0.067 -> 0.044, 32 -> 32 0.018 ->
/// 0.015).
constexpr int64_t kMaxWinograd23Outputs = 256;

/// Grouped layers with at most this many output channels a group, and sums
/// of at most this many terms, run the direct loop (GroupedConv.cpp): it
/// reads each group's input once per 4 outputs and keeps the group's
/// planes per thread, so wide and deep groups keep the GEMM kernels.
constexpr int64_t kGroupedMaxOutputs = 32, kGroupedMaxDepth = 512;

/// Deep layers (few outputs, long K) run on the panel kernel over weights
/// packed once, where OpenBLAS would pack the large weight matrix again on
/// every call: resnet18 31.7 to 30.1 ms at 1 thread (its 7x7x512 layers
/// 3.5 to 3.0 ms each), mobilenet_v2 10.6 to 10.2 ms. Layers of 64 outputs
/// or fewer go there whatever their depth: the strip kernel's tiles of 16
/// outputs would compute 64 for a 7x7 plane's 49 (mobilenet_v2's 7x7
/// 160->960 layers 0.265 to 0.225 ms each; at 14x14 the strip kernel stays
/// ahead).
constexpr int64_t kDeepK = 256, kPanelAnyDepthOutputs = 64, kPanelMaxOutputs = 256;

/// Output channels per group from which the strip kernel beats OpenBLAS
/// (mobilenet_v2 10.8 to 10.4 ms at 1 thread, 8.8 to 7.6 ms at 2;
/// resnet18's 7x7 stem 3.52 to 3.09 ms); below, OpenBLAS does better
/// (unet_small's 16->2 head 0.010 against 0.016 ms).
constexpr int64_t kMinStripOutputs = 8;

/// The panel and strip kernels both run any layer the two thresholds above
/// divide between them, at close speeds near those thresholds, while
/// packing a weight again costs a new shape's first run far more than the
/// difference: resnet18 run at 1x3x320x320 after 1x3x224x224 has two layers
/// cross them (a 3x3 one from 196 to 400 outputs, a 1x1 one from 49 to
/// 100), and packing their 1.7 MB of weights again took 9.4 ms of that
/// first run. So a weight already packed for one of the two keeps it
/// (chooseConv, last).

/// 3x3 depthwise layers: the masked loop (16 lanes) takes rows of more than
/// 8 outputs (mobilenet_v2's such layers 1.38 to 1.20 ms at 1 thread; on
/// rows of 7, 16-lane steps more than half empty lost to the 8-lane loop,
/// 0.20 to 0.24 ms) at padding up to 16 columns; shorter rows take it on 8
/// lanes where masks are fast, which saves the padded copy. Padding 1 is
/// read in place from widths of 24 (a row then has a full step of 8
/// outputs at either stride); on large planes copying into a padded plane
/// cost as much as the arithmetic. Widths up to uk::kDepthwiseMaxWidth
/// (the row of zeros read outside the plane).
constexpr int64_t kMaskedMinRow = 9, kMaskedMaxPad = 16, kPad1MinWidth = 24;

/// Padding the masked loops slide over (Depthwise3x3.h's dwSlide: several
/// output rows a pass, taps made by lane shifts); wider padding runs their
/// one-row form.
constexpr int64_t kSlideMaxPad = 2;

/// 5x5 layers (padding 2) slide where a row is more than one 16-lane step:
/// on shorter rows the KxK loop's several rows a step were faster.
constexpr int64_t kSlide5MinRow = 17;

/// 3x3 layers at stride 1 whose rows are at most 16 outputs (7x7 and
/// 14x14 planes) take the KxK loop where the masked loops cannot slide:
/// four rows of two 8-lane vectors, or eight rows of one, a step keep
/// eight chains of multiply-adds going, where the one-row masked loop's
/// one vector a step waits on its chain (1 thread, Zen 4, the padded copy
/// included: 480 and 672 planes of 14x14 17-20 % less time, 1152 of 7x7
/// 14 %).
constexpr int64_t kBlockedMaxRow = 16;

/// im2col + OpenBLAS: output rows per block such that a block's patches and
/// results stay within ~256 KB (the epilogue then runs on data still in
/// cache); blocks go to the threads (yolo_small 3.40 to 3.22 ms, unet_small
/// 3.36 to 3.09 ms at 2 threads) when there are at least 2 per thread. With
/// one thread they gain nothing, and one GEMM runs.
constexpr int64_t kBlockFloats = 65536, kMinBlockCols = 128, kMinBlocksPerThread = 2;

/// A 1x1 layer absorbs the 3x3 depthwise layer after it when its output is
/// at least 1 MB per image (with the masked depthwise loop: mobilenet_v2's
/// three such pairs 1.35 to 1.22 ms); bands of output rows then keep about
/// 512 KB of expanded rows each, and there are as many bands per thread.
constexpr int64_t kBandMinBytes = 1 << 20, kBandBytes = 512 << 10;

/// Depthwise layers a vector of channels at a time (f32_dwconv_packed):
/// every kernel but 3x3 at stride 1 or 2, and 3x3 ones on rows of at most
/// 16 inputs, where the plane loops leave lanes idle. Lone layers at 1
/// thread, the plane loops before: 5x5 on 14x14 0.119 -> 0.061 ms, on 7x7
/// 0.089 -> 0.041, at stride 2 onto 14x14 0.103 -> 0.056; 7x7 on 56x56
/// 0.610 -> 0.346; 3x3 on 7x7 0.029 -> 0.023, on 14x14 0.067 -> 0.056, at
/// stride 2 from 14x14 0.043 -> 0.029. 3x3 on 28x28 lost (0.031 ->
/// 0.041), and at stride 2 from 28x28 (0.025 -> 0.027): their nine taps
/// no longer pay for transposing the planes in and out. A block's padded
/// copy and outputs stay within kPackedMaxBytes (5x5 on 112x112, 1.7 MB,
/// 0.249 against 0.248 ms), beyond which the plane loops need a plane at
/// a time.
constexpr int64_t kPackedMaxRow3x3 = 16, kPackedMaxBytes = 2 << 20;

DepthwiseLoop depthwiseLoop(const ConvGeometry &g, const ConvContext &ctx) {
  const int64_t packedBytes =
      (g.paddedH() * g.paddedW() + g.outputs()) * ctx.uks.lanes * int64_t(sizeof(float));
  if ((g.SW == 1 || g.SW == 2) && (!g.is3x3() || g.W <= kPackedMaxRow3x3) &&
      packedBytes <= kPackedMaxBytes)
    return DepthwiseLoop::Packed;
  if (ctx.uks.depthwiseSlide5[0] && g.KH == 5 && g.KW == 5 && g.DH == 1 && g.DW == 1 &&
      g.SH == g.SW && (g.SW == 1 || g.SW == 2) && g.PW == 2 && g.W <= uk::kDepthwiseMaxWidth &&
      g.OW >= kSlide5MinRow)
    return DepthwiseLoop::Slide5x5;
  if (!g.is3x3())
    return g.SH == g.SW && (g.SW == 1 || g.SW == 2) ? DepthwiseLoop::PaddedKxK
                                                    : DepthwiseLoop::Generic;
  const bool slides = ctx.uks.depthwiseMasked[0] && ctx.uks.depthwiseMaskedShort[0] &&
                      g.W <= uk::kDepthwiseMaxWidth && g.PW <= kSlideMaxPad;
  if (g.SW == 1 && g.SH == 1 && g.OW <= kBlockedMaxRow && !slides)
    return DepthwiseLoop::PaddedKxK;
  if (ctx.uks.depthwiseMasked[0] && g.W <= uk::kDepthwiseMaxWidth && g.PW <= kMaskedMaxPad &&
      g.OW >= kMaskedMinRow)
    return DepthwiseLoop::Masked3x3;
  if (ctx.uks.depthwiseMaskedShort[0] && g.W <= uk::kDepthwiseMaxWidth && g.PW <= kMaskedMaxPad &&
      g.OW < kMaskedMinRow)
    return DepthwiseLoop::MaskedShort3x3;
  if (g.PH == 1 && g.PW == 1 && g.W >= kPad1MinWidth && g.W <= uk::kDepthwiseMaxWidth)
    return DepthwiseLoop::Pad1x3x3;
  return DepthwiseLoop::Padded3x3;
}

} // namespace

ConvChoice chooseConv(const ConvGeometry &g, const ConvContext &ctx) {
  ConvChoice c;
  const int64_t outputs = g.outputs();
  const int64_t tiles = ((g.OH + 3) / 4) * ((g.OW + 3) / 4);
  const bool filtersInCache = g.C * g.OC * 36 * int64_t(sizeof(float)) <= kWinogradCachedFilters;
  const bool wholeTiles = g.OH % 4 == 0 && g.OW % 4 == 0;
  if (ctx.winograd && g.is3x3() && g.SW == 1 && g.G == 1 && g.C >= kMinWinogradChannels &&
      g.OC >= kMinWinogradOutputs && outputs >= kMinWinogradPlane &&
      (filtersInCache || tiles >= kMinWinogradTilesStreamed || wholeTiles)) {
    c.algo = ConvAlgo::Winograd;
  } else if (ctx.winograd && g.is3x3() && g.SW == 1 && g.G == 1 && g.C >= kMinWinogradChannels &&
             g.OC >= kMinWinogradOutputs && outputs <= kMaxWinograd23Outputs) {
    c.algo = ConvAlgo::Winograd23;
  } else if (g.depthwise()) {
    c.algo = ConvAlgo::Depthwise;
    c.depthwise = depthwiseLoop(g, ctx);
  } else if (g.G > 1 && !g.pointwise() && g.OCg() <= kGroupedMaxOutputs &&
             g.K() <= kGroupedMaxDepth && ctx.uks.groupedConv) {
    c.algo = ConvAlgo::Grouped;
  } else if ((g.K() > kDeepK || outputs <= kPanelAnyDepthOutputs) && outputs <= kPanelMaxOutputs) {
    c.algo = ConvAlgo::PanelGemm;
  } else if (g.OCg() >= kMinStripOutputs) {
    c.algo = ConvAlgo::StripGemm;
  } else {
    c.algo = ConvAlgo::Im2colBlas;
    int64_t cols = std::max(kMinBlockCols, kBlockFloats / (g.OCg() + (g.pointwise() ? 0 : g.K())));
    c.blockRows = std::clamp<int64_t>(cols / g.OW, 1, g.OH);
    c.minBlocksPerThread = kMinBlocksPerThread;
  }
  if (c.algo == ConvAlgo::PanelGemm && ctx.stripsPacked && !ctx.panelsPacked &&
      g.OCg() >= kMinStripOutputs)
    c.algo = ConvAlgo::StripGemm;
  else if (c.algo == ConvAlgo::StripGemm && ctx.panelsPacked && !ctx.stripsPacked)
    c.algo = ConvAlgo::PanelGemm;
  // Stride-2 layers on the strip kernel first split each input row by
  // column parity, so the patches are gathered by row copies (yolo_small
  // 2.02 to 1.95 ms).
  c.splitColumns = c.algo == ConvAlgo::StripGemm && !g.pointwise() && g.SW == 2;
  return c;
}

std::optional<BandPlan> chooseBands(const ConvGeometry &p, const ConvGeometry &d,
                                    const ConvChoice &dw, int threads) {
  if (!p.pointwise() || p.G != 1 || dw.algo != ConvAlgo::Depthwise ||
      dw.depthwise != DepthwiseLoop::Masked3x3 || d.N != p.N || d.C != p.OC || d.H != p.OH ||
      d.W != p.OW || p.OC * p.OH * p.OW * int64_t(sizeof(float)) < kBandMinBytes)
    return std::nullopt;
  // Output rows per band: the band's expanded rows within kBandBytes, and
  // as many bands per thread.
  int64_t rowBytes = d.W * p.OC * int64_t(sizeof(float));
  int64_t rows = std::max<int64_t>(1, (kBandBytes / rowBytes - 3) / d.SH + 1);
  int64_t bands = (d.OH + rows - 1) / rows;
  bands = (bands + threads - 1) / threads * threads;
  BandPlan plan;
  plan.rows = (d.OH + bands - 1) / bands;
  plan.floats = p.OC * ((plan.rows - 1) * d.SH + 3) * d.W;
  return plan;
}

std::unique_ptr<OpKernel> makePlanarKernel(const ConvGeometry &g, ConvWeights w) {
  const char *algo = std::getenv("KC_CONV_ALGO");
  ConvContext ctx{omp_get_max_threads(), uk::microKernels(),
                  !(algo && std::string(algo) == "im2col")};
  if (WeightCache *cache = WeightCache::building(); cache && w.mapped) {
    ctx.panelsPacked = cache->has(w.mapped, groupsLayout(kPanelLayout, g));
    ctx.stripsPacked = cache->has(w.mapped, groupsLayout(kStripLayout, g));
  }
  ConvChoice c = chooseConv(g, ctx);
  switch (c.algo) {
  case ConvAlgo::Winograd: return makeWinogradConv(g, std::move(w));
  case ConvAlgo::Winograd23:
    return makeWinograd23Conv(g, std::move(w));
  case ConvAlgo::Grouped: return makeGroupedConv(g, std::move(w));
  case ConvAlgo::Depthwise: return makeDepthwiseConv(g, c, std::move(w));
  case ConvAlgo::PanelGemm: return makePanelConv(g, std::move(w));
  case ConvAlgo::StripGemm: return makeStripConv(g, c, std::move(w));
  case ConvAlgo::Im2colBlas: break;
  }
  return makeBlasConv(g, c, std::move(w));
}

namespace {

/// A convolution call's geometry and weights.
llvm::Expected<std::pair<ConvGeometry, ConvWeights>> readConv(const CallNode &call,
                                                              bool transposed) {
  auto g = convGeometry(call, transposed);
  if (!g)
    return g.takeError();
  int64_t weights = (transposed ? g->C * g->OCg() : g->OC * g->Cg()) * g->KH * g->KW;
  auto w = convWeights(call, weights, transposed);
  if (!w)
    return w.takeError();
  return std::make_pair(*g, std::move(*w));
}

llvm::Expected<std::unique_ptr<OpKernel>> makePlanarConv(const CallNode &call) {
  auto conv = readConv(call, false);
  if (!conv)
    return conv.takeError();
  return makePlanarKernel(conv->first, std::move(conv->second));
}

llvm::Expected<std::unique_ptr<OpKernel>> makeConv(const CallNode &call,
                                                   const KernelBuildContext &ctx) {
  const OpDef *def = call.opDef();
  const std::optional<WindowSpec> &window = def ? def->window() : std::nullopt;
  if (!window)
    return kernelError(call, "is not a convolution");
  // F.conv*: the weight and bias are operands, not weights.
  bool transposed = window->op == WindowOp::ConvTranspose, functional = def->weights().empty();
  std::string mode = call.attrs().getString("padding_mode", "zeros");
  if (!functional && mode != "zeros") {
    // As in PyTorch, which refuses other modes for transposed convolutions.
    if (transposed)
      return kernelError(call, "padding_mode '" + mode + "' is not supported (only zeros)");
    return makePaddedConv(call, ctx);
  }
  if (functional || window->rank == 3)
    return makeNdConv(call);
  if (transposed) {
    auto conv = readConv(call, true);
    if (!conv)
      return conv.takeError();
    return makeTransposedConv(conv->first, std::move(conv->second));
  }
  return makePlanarConv(call);
}

} // namespace

KC_REGISTER_KERNEL(conv1d, "nn.Conv1d", makeConv);
KC_REGISTER_KERNEL(conv2d, "nn.Conv2d", makeConv);
KC_REGISTER_KERNEL(conv3d, "nn.Conv3d", makeConv);
KC_REGISTER_KERNEL(convt1d, "nn.ConvTranspose1d", makeConv);
KC_REGISTER_KERNEL(convt2d, "nn.ConvTranspose2d", makeConv);
KC_REGISTER_KERNEL(convt3d, "nn.ConvTranspose3d", makeConv);
KC_REGISTER_KERNEL(fconv1d, "F.conv1d", makeConv);
KC_REGISTER_KERNEL(fconv2d, "F.conv2d", makeConv);
KC_REGISTER_KERNEL(fconv3d, "F.conv3d", makeConv);
KC_REGISTER_KERNEL(fconvt1d, "F.conv_transpose1d", makeConv);
KC_REGISTER_KERNEL(fconvt2d, "F.conv_transpose2d", makeConv);
KC_REGISTER_KERNEL(fconvt3d, "F.conv_transpose3d", makeConv);

} // namespace kc::rt
