//===- TransposedConv.cpp - nn.ConvTranspose1d/2d -------------------------===//
//
// A GEMM with the transposed weights gives each input pixel's contribution
// to a KH×KW window. The transposed weights are packed once into the
// panel kernel's layout (PackedGemm.h); sgemm had packed both operands on
// every call, which dominated small layers. col2im builds each output row
// once: its columns of one phase (ow ≡ p mod SW) take contiguous runs of
// the product's rows, so a row's phases are summed as plain vectors, each
// tap's valid input range clipped once, and then interleaved into the row.
// Adding each tap into the zeroed output at stride SW had stored one float
// at a time.
//
//===----------------------------------------------------------------------===//
#include "../PackedGemm.h"
#include "../PreparedWeight.h"
#include "ConvAlgorithms.h"

#include <algorithm>
#include <omp.h>
#include <vector>

namespace kc::rt {
namespace {

/// Bytes of input columns a product step reads: blocks of columns whose
/// K rows stay in L2 while every panel of the weight passes over them.
constexpr int64_t kColumnBlockBytes = 256 << 10, kMinColumnBlock = 64;
/// Product items (blocks of columns × steps of panels) per thread, so that
/// few panel steps still spread evenly (unet_small's 3x3 up-convolution:
/// 5 steps, one block at 2 threads, had run 3 items to 2).
constexpr int64_t kItemsPerThread = 4;

class ConvTranspose2dKernel final : public ConvKernel {
public:
  ConvTranspose2dKernel(const ConvGeometry &g, ConvWeights w) : ConvKernel(g, std::move(w)) {
    Cg_ = g.C / g.G;
    disjoint_ = g.KH == g.SH && g.KW == g.SW && g.PH == 0 && g.PW == 0 && g.DH == 1 && g.DW == 1 &&
                g.OH == g.H * g.SH && g.OW == g.W * g.SW;
    OCg_ = g.OC / g.G;
    rows_ = OCg_ * g.KH * g.KW;
    takesExpression_ = true;
    // Where each tap lands, worked out once (the divisions had cost more
    // than a row's sums).
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      int64_t off = kw * g.DW - g.PW, p = ((off % g.SW) + g.SW) % g.SW;
      auto [lo, hi] = insideRange(off, g.SW, g.W, g.OW);
      columnTaps_.push_back({p, (off - p) / g.SW, lo, hi});
    }
    rowTaps_.resize(size_t(g.SH));
    for (int64_t s = 0; s < g.SH; ++s)
      for (int64_t kh = 0; kh < g.KH; ++kh) {
        int64_t r = s + g.PH - kh * g.DH;
        if (((r % g.SH) + g.SH) % g.SH == 0)
          rowTaps_[size_t(s)].push_back({kh, r / g.SH});
      }
  }
  /// The product, then each thread's row of phases.
  size_t workspaceBytes() const override {
    return size_t(perThreadFloats(rows_ * g_.H * g_.W) +
                  threads_ * perThreadFloats(phaseFloats())) *
           sizeof(float);
  }
  void runConv(const float *x, float *y, float *ws, const BlockEpilogue &ep) const override {
    const ConvGeometry &g = g_;
    int64_t HWin = g.H * g.W, HW = g.OH * g.OW;
    float *col = ws, *phases = ws + perThreadFloats(rows_ * HWin);
    const Tensor &packed = packed_.get([&](const Tensor &w) { return packTransposed(w); });
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t grp = 0; grp < g.G; ++grp) {
        const float *xg = x + (n * g.C + grp * Cg_) * HWin;
        float *yg = y + (n * g.OC + grp * OCg_) * HW;
        product(packed.data<float>() + grp * packedSize(rows_, Cg_), xg, col);
        parallelFor(
            OCg_, true,
            [&](int64_t oc) {
              float *mine = phases + omp_get_thread_num() * perThreadFloats(phaseFloats());
              for (int64_t oh = 0; oh < g.OH; ++oh)
                outputRow(col, oc, oh, mine, yg + (oc * g.OH + oh) * g.OW);
            },
            threads_);
        const float *bias = w_.bias() ? w_.bias() + grp * OCg_ : nullptr;
        ep(yg, OCg_, HW, HW, bias);
      }
  }

private:
  /// Group g's Aᵀ (rows_ × Cg, A its Cg × rows_ block of the weight) in
  /// panels, one block per group.
  Tensor packTransposed(const Tensor &weight) const {
    const int64_t G = g_.G, K = Cg_, M = rows_;
    Tensor packed = Tensor::empty(DType::F32, {G, int64_t(packedSize(M, K))});
    const float *w = weight.data<float>();
    float *out = packed.data<float>();
    std::fill(out, out + packed.numel(), 0.f);
    for (int64_t grp = 0; grp < G; ++grp)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t m = 0; m < M; ++m)
          out[grp * int64_t(packedSize(M, K)) + int64_t(packedIndex(m, k, K))] =
              w[(grp * K + k) * M + m];
    if (w_.mapped)
      w_.mapped->releasePages();
    return packed;
  }

  /// col (rows_ × H·W) = Aᵀ·x for one group, by blocks of columns and
  /// steps of panels spread over the threads.
  void product(const float *A, const float *x, float *col) const {
    const int64_t N = g_.H * g_.W, K = Cg_;
    const int64_t step = panelsPerStep();
    const int64_t steps = (rows_ + kPanelRows * step - 1) / (kPanelRows * step);
    // Blocks within L2, and enough items for every thread to take several.
    const int64_t wanted = (kItemsPerThread * threads_ + steps - 1) / steps;
    const int64_t block =
        std::max(kMinColumnBlock, std::min(kColumnBlockBytes / int64_t(sizeof(float)) / K,
                                           (N + wanted - 1) / wanted + 15) /
                                      16 * 16);
    const int64_t blocks = (N + block - 1) / block;
    parallelFor(
        blocks * steps, true,
        [&](int64_t item) {
          int64_t n0 = item / steps * block, pb = item % steps * step;
          gemmPanels(A, pb, rows_, K, x + n0, N, std::min(block, N - n0), col + n0, N);
        },
        threads_);
  }

  /// Columns of one phase of an output row.
  int64_t phaseLength() const { return (g_.OW + g_.SW - 1) / g_.SW; }
  int64_t phaseFloats() const { return g_.SW * phaseLength(); }

  /// Output row oh of channel oc from the product `col`: phase p's sums
  /// in phases[p·Q, (p+1)·Q) (Q = phaseLength()), then interleaved.
  void outputRow(const float *col, int64_t oc, int64_t oh, float *phases, float *out) const {
    const ConvGeometry &g = g_;
    const int64_t HWin = g.H * g.W, Q = phaseLength(), q = oh / g.SH;
    if (disjoint_) {
      // Each phase is one row of the product: interleaved straight out.
      const float *src = col + (oc * g.KH + oh % g.SH) * g.KW * HWin + q * g.W;
      if (g.SW == 2) {
        const float *even = src, *odd = src + HWin;
        for (int64_t j = 0; j < g.W; ++j) {
          out[2 * j] = even[j];
          out[2 * j + 1] = odd[j];
        }
      } else {
        for (int64_t ow = 0; ow < g.OW; ++ow)
          out[ow] = src[(ow % g.SW) * HWin + ow / g.SW];
      }
      return;
    }
    std::fill(phases, phases + g.SW * Q, 0.f);
    for (const RowTap &t : rowTaps_[size_t(oh - q * g.SH)]) {
      int64_t ih = q + t.shift;
      if (ih < 0 || ih >= g.H)
        continue;
      const float *src = col + (oc * g.KH + t.kh) * g.KW * HWin + ih * g.W;
      for (const ColumnTap &c : columnTaps_) {
        float *dst = phases + c.phase * Q + c.shift;
        for (int64_t iw = c.lo; iw < c.hi; ++iw)
          dst[iw] += src[iw];
        src += HWin;
      }
    }
    if (g.SW == 1) {
      std::copy(phases, phases + g.OW, out);
    } else if (g.SW == 2) {
      const float *even = phases, *odd = phases + Q;
      for (int64_t j = 0; j < g.OW / 2; ++j) {
        out[2 * j] = even[j];
        out[2 * j + 1] = odd[j];
      }
      if (g.OW % 2)
        out[g.OW - 1] = even[Q - 1];
    } else {
      for (int64_t ow = 0; ow < g.OW; ++ow)
        out[ow] = phases[(ow % g.SW) * Q + ow / g.SW];
    }
  }

  /// Kernel row kh reaches output rows ≡ s mod SH: output row q·SH + s
  /// reads input row q + shift.
  struct RowTap {
    int64_t kh, shift;
  };
  /// Kernel column kw: input column iw in [lo, hi) lands in phase `phase`
  /// at position iw + shift.
  struct ColumnTap {
    int64_t phase, shift, lo, hi;
  };

  int64_t Cg_, OCg_, rows_;
  /// Kernel == stride, no padding: every output takes exactly one tap.
  bool disjoint_;
  std::vector<std::vector<RowTap>> rowTaps_; ///< by output row mod SH
  std::vector<ColumnTap> columnTaps_;        ///< by kw
  PreparedWeight packed_{w_.source(), "convT-panels, " + std::to_string(g_.G) + " groups",
                         w_.mapped}; ///< Aᵀ of each group in panels
};

} // namespace

std::unique_ptr<OpKernel> makeTransposedConv(const ConvGeometry &g, ConvWeights w) {
  return std::make_unique<ConvTranspose2dKernel>(g, std::move(w));
}

} // namespace kc::rt
