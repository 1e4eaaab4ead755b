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
// copy of each plane.
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
    TH_ = (OH_ + 3) / 4, TW_ = (OW_ + 3) / 4, T_ = TH_ * TW_;
    // The 36 planes a tile touches are one padded cache line apart so they
    // do not all map to the same cache set when C·T is a power of two.
    vStride_ = C_ * T_ + 16, mStride_ = OC_ * T_ + 16;
  }

  /// V and M, then a zero-bordered input plane per thread (8 floats are
  /// read per tile row of 6: a gap of 16 past the plane's end).
  size_t workspaceBytes() const override {
    return size_t(perThreadFloats(36 * (vStride_ + mStride_)) + threads_ * planeFloats()) *
           sizeof(float);
  }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const Tensor &U = U_.get([&](const Tensor &weight) { return transformFilters(weight); });
    float *V = static_cast<float *>(ctx.workspace); // [36][C][T], planes vStride_ apart
    float *M = V + 36 * vStride_;                   // [36][OC][T], planes mStride_ apart
    float *planes = V + perThreadFloats(36 * (vStride_ + mStride_));
    const float *bias = b_.numel() ? b_.data<float>() : nullptr;
    const BlockEpilogue ep = epilogue(out[0]->data<float>(), in);
    for (int64_t n = 0; n < N_; ++n) {
      const float *x = in[0]->data<float>() + n * C_ * H_ * W_;
      float *y = out[0]->data<float>() + n * OC_ * OH_ * OW_;
      inputTransform(x, V, planes);
      // 36 GEMMs, one per tile position, by panels of 16 output channels
      // spread over the threads. Each thread runs its items in order, and
      // the next item's panel follows this one's in U_, so each fetches
      // the next ahead once U_ outgrows L2.
      int64_t step = panelsPerStep();
      int64_t steps = (OC_ + kPanelRows * step - 1) / (kPanelRows * step);
      bool fetch = 36 * uSize_ * int64_t(sizeof(float)) >= kFetchAheadBytes;
      parallelFor(36 * steps, true, [&](int64_t item) {
        int64_t p = item / steps, pb = item % steps * step;
        gemmPanels(U.data<float>() + p * uSize_, pb, OC_, C_, V + p * vStride_, T_, T_,
                   M + p * mStride_, T_, fetch && item + 1 < 36 * steps);
      });
      outputTransform(M, y, bias, ep);
    }
  }

private:
  /// U_p = (G g Gᵀ)[p] for p over the 36 tile positions, each an OC × C
  /// matrix packed for gemmPanels. Done on the first run rather than at load
  /// (resnet18's filters take ~18 ms and 37.6 MB of fresh pages), in
  /// parallel, one 16 × 16 block of (output, input) channels at a time, so
  /// every write is a contiguous run of 256 floats (writing single floats
  /// 36 planes apart hit one cache set when OC·C is a power of two).
  Tensor transformFilters(const Tensor &weights) const {
    int64_t OC = OC_, C = C_;
    const float *weight = weights.data<float>();
    Tensor transformed = Tensor::empty(DType::F32, {36, int64_t(uSize_)});
    float *U = transformed.data<float>();
    int64_t panels = (OC + kPanelRows - 1) / kPanelRows, icBlocks = (C + 15) / 16;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t pb = 0; pb < panels; ++pb)
      for (int64_t ib = 0; ib < icBlocks; ++ib) {
        float block[36][16][kPanelRows] = {}; // [p][ic in block][oc in panel]
        for (int64_t r = 0; r < kPanelRows && pb * kPanelRows + r < OC; ++r)
          for (int64_t i = 0; i < 16 && ib * 16 + i < C; ++i) {
            const float *g = weight + ((pb * kPanelRows + r) * C + ib * 16 + i) * 9;
            float tmp[6][3];
            for (int a = 0; a < 6; ++a)
              for (int b = 0; b < 3; ++b)
                tmp[a][b] =
                    kG[a][0] * g[0 * 3 + b] + kG[a][1] * g[1 * 3 + b] + kG[a][2] * g[2 * 3 + b];
            for (int a = 0; a < 6; ++a)
              for (int b = 0; b < 6; ++b)
                block[a * 6 + b][i][r] =
                    tmp[a][0] * kG[b][0] + tmp[a][1] * kG[b][1] + tmp[a][2] * kG[b][2];
          }
        int64_t n = std::min<int64_t>(16, C - ib * 16);
        for (int p = 0; p < 36; ++p)
          std::memcpy(U + p * uSize_ + packedIndex(pb * kPanelRows, ib * 16, C), block[p],
                      sizeof(float) * kPanelRows * n);
      }
    if (mapped_)
      mapped_->releasePages();
    return transformed;
  }

  /// V[p][c][t] = (Bᵀ d B)[p] for every tile t of every channel c. Each
  /// channel is first copied into a zero-bordered plane that holds every
  /// tile whole, so all tiles, edge ones included, take the vector path: 8
  /// tiles (consecutive in t, possibly across tile rows) at a time, one per
  /// lane. Without the copy, tiles at the edges ran scalar, and planes of
  /// fewer than 8 tiles across (28x28 and 14x14) ran scalar throughout.
  void inputTransform(const float *x, float *V, float *planes) const {
    const int64_t PWt = 4 * TW_ + 2, region = planeFloats();
    const uk::MicroKernels &uks = uk::microKernels();
    // Rows and columns past the input stay zero: only the input's own
    // window is ever written.
    std::memset(planes, 0, size_t(threads_ * region) * sizeof(float));
    parallelFor(
        C_, true,
        [&](int64_t c) {
          float *pad = planes + omp_get_thread_num() * region;
          copyRows(pad + PH_ * PWt + PW_, PWt, x + c * H_ * W_, W_, H_, W_);
          uks.winogradInput(pad, PWt, TW_, T_, V + c * T_, vStride_);
        },
        threads_);
  }

  int64_t planeFloats() const { return perThreadFloats((4 * TH_ + 2) * (4 * TW_ + 2) + 16); }

  /// y[oc] = Aᵀ m A for every tile (f32_winograd43_output), then the
  /// epilogue over the whole plane while it is in cache.
  void outputTransform(const float *M, float *y, const float *bias, const BlockEpilogue &ep) const {
    const uk::MicroKernels &uks = uk::microKernels();
    parallelFor(OC_, true, [&](int64_t oc) {
      float *plane = y + oc * OH_ * OW_;
      uks.winogradOutput(M + oc * T_, mStride_, TW_, T_, plane, OH_, OW_);
      ep(plane, 1, OH_ * OW_, OH_ * OW_, bias ? bias + oc : nullptr);
    });
  }

  int64_t N_, C_, H_, W_, OC_, OH_, OW_, PH_, PW_;
  int64_t TH_, TW_, T_, vStride_, mStride_;
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
