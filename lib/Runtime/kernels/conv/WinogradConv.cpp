//===- WinogradConv.cpp - 3x3 stride-1 convolution by Winograd F(4x4, 3x3) ===//
//
// Lavin & Gray's minimal filtering: each 6x6 input tile d and 3x3 filter g
// give a 4x4 output tile Y = Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A. Batched over tiles and
// channels, the elementwise product becomes 36 independent GEMMs
// (OC × IC by IC × tiles), 2.25 multiplies per output instead of 9. Filters
// are transformed once, on the first run, straight into the panel layout of
// PackedGemm.h, whose register kernel then runs the 36 products without
// repacking them (resnet18 layer3, 14x14x256: 1.9 ms to 1.3 ms per
// convolution against OpenBLAS, which packs both operands on every call).
// Input and output tiles are transformed by the micro-kernels
// f32_winograd43_input and _output, the input read from a zero-bordered
// copy of each plane, a band of tile rows at a time on large planes.
//
//===----------------------------------------------------------------------===//
#include "../../ukernels/MicroKernels.h"
#include "../Copy.h"
#include "../PackedGemm.h"
#include "../PreparedWeight.h"
#include "ConvAlgorithms.h"

#include <algorithm>
#include <cstring>
#include <omp.h>
#include <vector>

namespace kc::rt {
namespace {

/// A plane's V and M (36 transformed tiles per channel, in and out) pass
/// L2 on large planes (2.7 MB each for 24 channels on 112x112) and stream
/// through L3 between the input transform, the 36 products and the output
/// transform. Past 4 MB (twice L2) each thread runs bands of tile rows of
/// at most 1 MB through all three steps instead, V and M staying in L2,
/// the filters read again for each band. Below 4 MB bands gained nothing
/// or lost (96->96 on 35x35: 0.69 against 0.71 ms). A band holds at least
/// 24 tiles, which keeps the products' rows long. docs/performance.md has
/// the layers measured.
constexpr int64_t kWinogradBandedAbove = 4 << 20, kWinogradBandBytes = 1 << 20, kMinBandTiles = 24;

// F(4x4, 3x3) filter transform G (6x3).
constexpr float kG[6][3] = {{1.f / 4, 0, 0},
                            {-1.f / 6, -1.f / 6, -1.f / 6},
                            {-1.f / 6, 1.f / 6, -1.f / 6},
                            {1.f / 24, 1.f / 12, 1.f / 6},
                            {1.f / 24, -1.f / 12, 1.f / 6},
                            {0, 0, 1}};

class Winograd43Kernel final : public FusableKernel {
public:
  /// The weight is (OC, C, 3, 3), possibly a view of the mapped .bin: both
  /// are let go once the filters are transformed.
  Winograd43Kernel(const ConvGeometry &g, ConvWeights w)
      : N_(g.N), C_(g.C), H_(g.H), W_(g.W), OC_(g.OC), OH_(g.OH), OW_(g.OW), PH_(g.PH), PW_(g.PW),
        U_(w.source(), "winograd-4x4-3x3", w.mapped), b_(std::move(w.b)),
        mapped_(std::move(w.mapped)), threads_(omp_get_max_threads()) {
    takesExpression_ = true;
    TH_ = (OH_ + 3) / 4, TW_ = (OW_ + 3) / 4;
    bands_ = chooseBands();
    bandRows_ = (TH_ + bands_ - 1) / bands_;
  }

  /// Whole planes: V and M, then a zero-bordered input plane per thread.
  /// In bands: each thread's V and M of one band and its input rows.
  size_t workspaceBytes() const override {
    if (banded())
      return size_t(threads_) * perThreadFloats(bandFloats()) * sizeof(float);
    return size_t(perThreadFloats(36 * (vStride(TH_) + mStride(TH_))) +
                  threads_ * perThreadFloats(inputFloats(TH_))) *
           sizeof(float);
  }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const Tensor &U = U_.get([&](const Tensor &weight) { return transformFilters(weight); });
    const BlockEpilogue ep = epilogue(out[0]->data<float>(), in);
    float *ws = static_cast<float *>(ctx.workspace);
    for (int64_t n = 0; n < N_; ++n) {
      Band b{in[0]->data<float>() + n * C_ * H_ * W_, out[0]->data<float>() + n * OC_ * OH_ * OW_,
             U.data<float>(), &ep};
      if (!banded()) {
        // One band of every tile row, each step shared over the threads.
        b.V = ws;
        b.M = ws + 36 * vStride(TH_);
        b.input = ws + perThreadFloats(36 * (vStride(TH_) + mStride(TH_)));
        b.inputPerThread = true;
        runBand(b, 0, TH_);
        continue;
      }
      // Each thread runs whole bands, every step on its own, in the slice
      // of the workspace it was sized for.
      parallelFor(
          bands_, true,
          [&](int64_t i) {
            Band mine = b;
            mine.V = ws + omp_get_thread_num() * perThreadFloats(bandFloats());
            mine.M = mine.V + 36 * vStride(bandRows_);
            mine.input = mine.M + 36 * mStride(bandRows_);
            runBand(mine, bandStart(i), bandStart(i + 1));
          },
          threads_);
    }
  }

private:
  /// U_p = (G g Gᵀ)[p] for p over the 36 tile positions (winogradFilters).
  /// Done on the first run rather than at load (resnet18's filters take ~18
  /// ms and 37.6 MB of fresh pages).
  Tensor transformFilters(const Tensor &weights) const {
    Tensor transformed = winogradFilters(weights.data<float>(), OC_, C_, &kG[0][0], 6, uSize_);
    if (mapped_)
      mapped_->releasePages();
    return transformed;
  }

  /// One image's tile rows [r0, r1) and where they are computed.
  struct Band {
    const float *x;
    float *y;
    const float *U;
    const BlockEpilogue *ep;
    float *V = nullptr, *M = nullptr, *input = nullptr;
    bool inputPerThread = false; ///< `input` holds a plane per thread
  };

  /// Tile rows [r0, r1): their input tiles transformed, the 36 products,
  /// their output tiles and the epilogue over their output rows.
  void runBand(const Band &b, int64_t r0, int64_t r1) const {
    const int64_t tiles = (r1 - r0) * TW_;
    const int64_t vs = vStride(r1 - r0), ms = mStride(r1 - r0);
    inputTransform(b, r0, r1, vs);
    // 36 GEMMs, one per tile position, by panels of 16 output channels
    // spread over the threads. Each thread runs its items in order, and
    // the next item's panel follows this one's in U_, so each fetches
    // the next ahead once U_ outgrows L2.
    int64_t step = panelsPerStep();
    int64_t steps = (OC_ + kPanelRows * step - 1) / (kPanelRows * step);
    bool fetch = 36 * uSize_ * int64_t(sizeof(float)) >= kFetchAheadBytes;
    parallelFor(36 * steps, true, [&](int64_t item) {
      int64_t p = item / steps, pb = item % steps * step;
      gemmPanels(b.U + p * uSize_, pb, OC_, C_, b.V + p * vs, tiles, tiles, b.M + p * ms, tiles,
                 fetch && item + 1 < 36 * steps);
    });
    outputTransform(b, r0, r1, ms);
  }

  /// V[p][c][t] = (Bᵀ d B)[p] for every tile t of the band of every
  /// channel c. Each channel's input rows are first copied into a
  /// zero-bordered plane that holds every tile whole, so all tiles, edge
  /// ones included, take the vector path: 8 tiles (consecutive in t,
  /// possibly across tile rows) at a time, one per lane. Without the copy,
  /// tiles at the edges ran scalar, and planes of fewer than 8 tiles across
  /// (28x28 and 14x14) ran scalar throughout.
  void inputTransform(const Band &b, int64_t r0, int64_t r1, int64_t vs) const {
    const int64_t PWt = 4 * TW_ + 2, region = perThreadFloats(inputFloats(r1 - r0));
    const int64_t tiles = (r1 - r0) * TW_, rows = 4 * (r1 - r0) + 2;
    // The band's input rows within the input: from ih0, `take` of them
    // after `skip` rows of zeros.
    const int64_t ih0 = 4 * r0 - PH_, skip = std::max<int64_t>(0, -ih0);
    const int64_t take = std::max<int64_t>(0, std::min(rows, H_ - ih0) - skip);
    const uk::MicroKernels &uks = uk::microKernels();
    // Columns past the input stay zero: only the input's own columns are
    // ever written. Rows past it are zeroed once per band.
    int planes = b.inputPerThread ? threads_ : 1;
    std::memset(b.input, 0, size_t(planes * region) * sizeof(float));
    parallelFor(
        C_, true,
        [&](int64_t c) {
          float *pad = b.input + (b.inputPerThread ? omp_get_thread_num() * region : 0);
          copyRows(pad + skip * PWt + PW_, PWt, b.x + (c * H_ + ih0 + skip) * W_, W_, take, W_);
          uks.winogradInput(pad, PWt, TW_, tiles, b.V + c * tiles, vs);
        },
        threads_);
  }

  /// Input floats of a band of `rows` tile rows (8 floats are read per tile
  /// row of 6: a gap of 16 past the band's end).
  int64_t inputFloats(int64_t rows) const { return (4 * rows + 2) * (4 * TW_ + 2) + 16; }

  /// y[oc] = Aᵀ m A for every tile of the band (f32_winograd43_output),
  /// then the epilogue over its output rows while they are in cache.
  void outputTransform(const Band &b, int64_t r0, int64_t r1, int64_t ms) const {
    const uk::MicroKernels &uks = uk::microKernels();
    const int64_t tiles = (r1 - r0) * TW_, oh0 = 4 * r0, ohs = std::min(OH_, 4 * r1) - oh0;
    const float *bias = b_.numel() ? b_.data<float>() : nullptr;
    parallelFor(OC_, true, [&](int64_t oc) {
      float *rows = b.y + (oc * OH_ + oh0) * OW_;
      uks.winogradOutput(b.M + oc * tiles, ms, TW_, tiles, rows, ohs, OW_);
      (*b.ep)(rows, 1, ohs * OW_, ohs * OW_, bias ? bias + oc : nullptr);
    });
  }

  /// Strides of V's and M's 36 planes for a band of `rows` tile rows: one
  /// padded cache line apart so they do not all map to the same cache set
  /// when C·T is a power of two.
  int64_t vStride(int64_t rows) const { return C_ * rows * TW_ + 16; }
  int64_t mStride(int64_t rows) const { return OC_ * rows * TW_ + 16; }
  /// One thread's V, M and input rows of a band.
  int64_t bandFloats() const {
    return 36 * (vStride(bandRows_) + mStride(bandRows_)) + perThreadFloats(inputFloats(bandRows_));
  }
  bool banded() const { return bands_ > 1; }

  /// Bands per image: none (1) where a plane's V and M stay within
  /// kWinogradBandedAbove and its steps are best shared (threadsShareSteps);
  /// else as many as keep a band's within kWinogradBandBytes with at least
  /// kMinBandTiles tiles, rounded up to a multiple of the threads.
  int64_t chooseBands() const {
    int64_t perRow = 36 * (C_ + OC_) * TW_ * int64_t(sizeof(float));
    bool ownBands = !threadsShareSteps();
    if (perRow * TH_ <= kWinogradBandedAbove && !ownBands)
      return 1;
    int64_t rows =
        std::max<int64_t>({kWinogradBandBytes / perRow, (kMinBandTiles + TW_ - 1) / TW_, 1});
    int64_t bands = (TH_ + rows - 1) / rows;
    if (bands < 2 && !ownBands)
      return 1;
    return std::min(TH_, (bands + threads_ - 1) / threads_ * threads_);
  }

  /// Whether the threads share each step of whole planes rather than run
  /// bands of their own. Shared, each step reads what the other threads
  /// wrote (V after the input transform, M after the products) and waits
  /// for them; in bands, each thread reads every filter. Bands where the
  /// plane's V and M outweigh the filters the other threads read again,
  /// and every thread has kMinBandTiles tiles (16 and 32 channels on 64x64
  /// planes at 2 threads: 16->16 0.085 -> 0.070 ms, 32->16 0.118 -> 0.104).
  bool threadsShareSteps() const {
    int64_t tiles = TH_ * TW_;
    return threads_ < 2 || tiles < kMinBandTiles * threads_ ||
           (C_ + OC_) * tiles <= C_ * OC_ * (threads_ - 1);
  }

  /// Band i's first tile row: bands differ by at most one row.
  int64_t bandStart(int64_t i) const { return TH_ * i / bands_; }

  int64_t N_, C_, H_, W_, OC_, OH_, OW_, PH_, PW_;
  int64_t TH_, TW_;
  int64_t bands_;                      ///< bands of tile rows per image; 1: whole planes
  int64_t bandRows_;                   ///< tile rows of the largest band
  size_t uSize_ = packedSize(OC_, C_); ///< floats per packed U_p
  PreparedWeight U_;                   ///< from the weight, on the first run
  Tensor b_;
  TensorDataPtr mapped_;
  int threads_; ///< threads the workspace holds planes for
};

} // namespace

std::unique_ptr<OpKernel> makeWinogradConv(const ConvGeometry &g, ConvWeights w) {
  return std::make_unique<Winograd43Kernel>(g, std::move(w));
}

} // namespace kc::rt
