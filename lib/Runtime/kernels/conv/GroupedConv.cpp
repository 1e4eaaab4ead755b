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
  int64_t phaseH() const { return (g_.paddedH() + g_.SH - 1) / g_.SH; }
  int64_t phaseW() const { return (g_.paddedW() + g_.SW - 1) / g_.SW; }
  int64_t phaseFloats() const { return phaseH() * phaseW(); }

  /// One input plane into its phases (`dst`, zero where nothing lands).
  void scatter(const float *src, float *dst) const {
    const ConvGeometry &g = g_;
    if (g.SH == 1 && g.SW == 1) {
      copyRows(dst + g.PH * phaseW() + g.PW, phaseW(), src, g.W, g.H, g.W);
      return;
    }
    for (int64_t ih = 0; ih < g.H; ++ih) {
      const int64_t ph = ih + g.PH;
      float *row = dst + (ph % g.SH) * g.SW * phaseFloats() + ph / g.SH * phaseW();
      const float *in = src + ih * g.W;
      // Column phase b takes the input columns iw ≡ b − PW (mod SW).
      for (int64_t b = 0; b < g.SW; ++b) {
        int64_t iw = ((b - g.PW) % g.SW + g.SW) % g.SW;
        float *out = row + b * phaseFloats() + (iw + g.PW) / g.SW;
        for (; iw < g.W; iw += g.SW)
          *out++ = in[iw];
      }
    }
  }

  int64_t tiles() const { return (g_.OCg() + uk::kGroupedOutputs - 1) / uk::kGroupedOutputs; }
  int64_t groupFloats() const { return tiles() * uk::kGroupedOutputs * g_.K(); }

  /// Flattened output positions per output channel, in whole blocks of
  /// the loop.
  int64_t rowFloats() const {
    const int64_t block = uk::microKernels().groupedBlock, q = g_.OH * phaseW();
    return (q + block - 1) / block * block;
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

  std::vector<int64_t> offsets_; ///< each tap's offset, in the order of K
  PreparedWeight packed_;        ///< the weight in tiles of output channels
};

} // namespace

std::unique_ptr<OpKernel> makeGroupedConv(const ConvGeometry &g, ConvWeights w) {
  return std::make_unique<GroupedConvKernel>(g, std::move(w));
}

} // namespace kc::rt
