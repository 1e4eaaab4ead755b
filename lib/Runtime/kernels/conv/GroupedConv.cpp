//===- GroupedConv.cpp - Grouped convolution without patches --------------===//
//
// Grouped layers of a few channels a group (regnet's 8 and 16, resnext's 4
// to 32) have a short sum per output (K = 72 to 288): gathering a patch
// matrix for the GEMM kernels costs about as much as the products. Each
// group instead runs f32_gconv (GroupedConv.h) over a copy of its input
// laid out so that a tap reads every output at a fixed offset: each input
// plane zero-padded and split into its SH×SW phases (one plane at stride
// 1), outputs flattened over a phase's row width. Groups are shared over
// the threads; a thread's planes keep their zero border from one group to
// the next, and its flattened output rows are copied into the output
// planes, bias and activation applied there.
//
//===----------------------------------------------------------------------===//
#include "../../ukernels/MicroKernels.h"
#include "../Copy.h"
#include "../Parallel.h"
#include "ConvAlgorithms.h"

#include "llvm/ADT/SmallVector.h"

#include <cstring>
#include <omp.h>

namespace kc::rt {
namespace {

class GroupedConvKernel final : public ConvKernel {
public:
  GroupedConvKernel(const ConvGeometry &g, ConvWeights w)
      : ConvKernel(g, std::move(w)),
        packed_(w_.source(), groupsLayout("conv-grouped", g_), w_.mapped) {
    takesExpression_ = true;
    // Phase (a, b) of channel c holds padded rows a, a + SH, ... and
    // columns b, b + SW, ...; tap (kh, kw) of output (oh, ow) is at row
    // oh + kh·DH / SH, column ow + kw·DW / SW of phase (kh·DH % SH, kw·DW % SW).
    for (int64_t c = 0; c < g_.Cg(); ++c)
      for (int64_t kh = 0; kh < g_.KH; ++kh)
        for (int64_t kw = 0; kw < g_.KW; ++kw) {
          int64_t dh = kh * g_.DH, dw = kw * g_.DW;
          int64_t phase = (c * g_.SH + dh % g_.SH) * g_.SW + dw % g_.SW;
          offsets_.push_back(phase * phaseFloats() + dh / g_.SH * phaseW() + dw / g_.SW);
        }
  }

  /// Each thread's phase planes (with the reach of the loop's reads past
  /// the last), then its flattened output rows.
  size_t workspaceBytes() const override {
    return size_t(threads_) * size_t(perThread()) * sizeof(float);
  }

  void runConv(const float *x, float *y, float *ws, const BlockEpilogue &ep) const override {
    const ConvGeometry &g = g_;
    const uk::MicroKernels &uks = uk::microKernels();
    const Tensor &packed = packed_.get([&](const Tensor &w) { return pack(w); });
    const int64_t Cg = g.Cg(), OCg = g.OCg(), HW = g.H * g.W, OHW = g.outputs();
    const int64_t ldo = rowFloats();
    const float *bias = w_.bias();
    std::memset(ws, 0, workspaceBytes());
    parallelFor(
        g.N * g.G, true,
        [&](int64_t i) {
          const int64_t n = i / g.G, grp = i % g.G;
          float *phases = ws + omp_get_thread_num() * perThread();
          float *rows = phases + phasesFloats();
          const float *xg = x + (n * g.C + grp * Cg) * HW;
          for (int64_t c = 0; c < Cg; ++c)
            scatter(xg + c * HW, phases + c * g.SH * g.SW * phaseFloats());
          uks.groupedConv(phases, offsets_.data(), int64_t(offsets_.size()),
                          packed.data<float>() + grp * groupFloats(), OCg, rows, ldo);
          float *yg = y + (n * g.OC + grp * OCg) * OHW;
          for (int64_t o = 0; o < OCg; ++o)
            copyRows(yg + o * OHW, g.OW, rows + o * ldo, phaseW(), g.OH, g.OW);
          ep(yg, OCg, OHW, OHW, bias ? bias + grp * OCg : nullptr);
        },
        threads_);
  }

private:
  /// A phase plane's rows and columns, and its floats.
  int64_t phaseW() const { return phaseW_; }
  int64_t phaseFloats() const { return phaseFloats_; }

  /// One input plane into its phases (`dst`, zero where nothing lands).
  void scatter(const float *src, float *dst) const {
    const ConvGeometry &g = g_;
    if (g.SH == 1 && g.SW == 1) {
      copyRows(dst + g.PH * phaseW() + g.PW, phaseW(), src, g.W, g.H, g.W);
      return;
    }
    // Column phase b takes the input columns iw ≡ b − PW (mod SW), the
    // first of them at (iw + PW) / SW in its phase row.
    llvm::SmallVector<int64_t, 4> firstColumn;
    for (int64_t b = 0; b < g.SW; ++b)
      firstColumn.push_back(((b - g.PW) % g.SW + g.SW) % g.SW);
    // Padded row ph is row ph / SH of row phase ph % SH, counted along.
    int64_t rowPhase = g.PH % g.SH, phaseRow = g.PH / g.SH;
    for (int64_t ih = 0; ih < g.H; ++ih) {
      float *row = dst + rowPhase * g.SW * phaseFloats() + phaseRow * phaseW();
      const float *in = src + ih * g.W;
      if (++rowPhase == g.SH)
        rowPhase = 0, ++phaseRow;
      if (g.SW == 2) {
        splitColumnPairs(in, row, row + phaseFloats());
        continue;
      }
      for (int64_t b = 0; b < g.SW; ++b) {
        float *out = row + b * phaseFloats() + (firstColumn[b] + g.PW) / g.SW;
        for (int64_t iw = firstColumn[b]; iw < g.W; iw += g.SW)
          *out++ = in[iw];
      }
    }
  }

  /// One input row at stride 2 into its two phase rows: from the first
  /// column of phase 0 on, the columns come in (phase 0, phase 1) pairs at
  /// the same position (the per-column loop above took two thirds of
  /// regnet_x's and resnext50's stride-2 grouped layers).
  void splitColumnPairs(const float *in, float *even, float *odd) const {
    const int64_t W = g_.W, PW = g_.PW, iw0 = PW % 2;
    if (iw0 == 1)
      odd[PW / 2] = in[0]; // padded column PW, odd
    const int64_t at = (iw0 + PW) / 2, pairs = (W - iw0) / 2;
    splitPairs(in + iw0, even + at, odd + at, pairs);
    if ((W - iw0) % 2)
      even[at + pairs] = in[W - 1];
  }

  int64_t tiles() const { return (g_.OCg() + uk::kGroupedOutputs - 1) / uk::kGroupedOutputs; }
  int64_t groupFloats() const { return tiles() * uk::kGroupedOutputs * g_.K(); }

  /// Flattened output positions per output channel, in whole vectors.
  int64_t rowFloats() const {
    const int64_t lanes = uk::microKernels().lanes, q = g_.OH * phaseW();
    return (q + lanes - 1) / lanes * lanes;
  }
  /// The phases of the group's channels, then the loop's reach past the
  /// last of them: a block, and the row a position's taps may run into.
  int64_t phasesFloats() const {
    return perThreadFloats(g_.Cg() * g_.SH * g_.SW * phaseFloats() +
                           uk::microKernels().groupedBlock + phaseW());
  }
  int64_t perThread() const { return phasesFloats() + perThreadFloats(g_.OCg() * rowFloats()); }

  /// w (OC × Cg × KH × KW) as each group's tiles of kGroupedOutputs output
  /// channels, a tile's weights of one tap consecutive; missing channels
  /// of the last tile are zeros.
  Tensor pack(const Tensor &w) const {
    const int64_t K = g_.K(), OCg = g_.OCg(), O = uk::kGroupedOutputs;
    Tensor t = Tensor::empty(DType::F32, {g_.G * groupFloats()});
    float *dst = t.data<float>();
    const float *src = w.data<float>();
    for (int64_t grp = 0; grp < g_.G; ++grp)
      for (int64_t tile = 0; tile < tiles(); ++tile)
        for (int64_t k = 0; k < K; ++k)
          for (int64_t o = 0; o < O; ++o) {
            int64_t oc = tile * O + o;
            *dst++ = oc < OCg ? src[(grp * OCg + oc) * K + k] : 0.f;
          }
    return t;
  }

  /// A phase plane's row width and floats.
  const int64_t phaseW_ = (g_.paddedW() + g_.SW - 1) / g_.SW;
  const int64_t phaseFloats_ = (g_.paddedH() + g_.SH - 1) / g_.SH * phaseW_;
  std::vector<int64_t> offsets_; ///< each tap's offset, in the order of K
  PreparedWeight packed_;        ///< the weight in tiles of output channels
};

} // namespace

std::unique_ptr<OpKernel> makeGroupedConv(const ConvGeometry &g, ConvWeights w) {
  return std::make_unique<GroupedConvKernel>(g, std::move(w));
}

} // namespace kc::rt
