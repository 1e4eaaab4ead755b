//===- Winograd23Conv.cpp - 3x3 stride-1 convolution by Winograd F(2x2, 3x3) ===//
//
// Deep layers on small planes (resnet18's 512 channels on 7x7): each 4x4
// input tile d and filter g give a 2x2 output tile Y = Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d
// B)]A, 16 products (OC × C by C × tiles) of 4 multiplies per output
// instead of 9. F(4x4, 3x3) would need 36 values a filter, 4x the weight,
// streamed from memory on every run; these need 16 (1.8x), and on 7x7
// planes both tile 8x8. The products run on the panel kernel over filters
// transformed on the first run straight into its layout, the next panel
// fetched ahead; the transforms are plain loops over a channel's tiles
// (9 % of a 512-channel 7x7 layer's time).
//
//===----------------------------------------------------------------------===//
#include "../PackedGemm.h"
#include "../PreparedWeight.h"
#include "ConvAlgorithms.h"

#include <algorithm>
#include <cstring>

namespace kc::rt {
namespace {

constexpr int kPositions = 16;

// F(2x2, 3x3) filter transform G (4x3).
constexpr float kG[4][3] = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};

class Winograd23Kernel final : public ConvKernel {
public:
  Winograd23Kernel(const ConvGeometry &g, ConvWeights w) : ConvKernel(g, std::move(w)) {
    takesExpression_ = true;
    TH_ = (g.OH + 1) / 2, TW_ = (g.OW + 1) / 2;
  }

  /// V and M: 16 planes each, a padded cache line apart.
  size_t workspaceBytes() const override {
    return size_t(kPositions * (vStride() + mStride())) * sizeof(float);
  }

  void runConv(const float *x, float *y, float *ws, const BlockEpilogue &ep) const override {
    const ConvGeometry &g = g_;
    const Tensor &U = U_.get([&](const Tensor &w) { return transformFilters(w); });
    float *V = ws, *M = ws + kPositions * vStride();
    const int64_t T = TH_ * TW_, vs = vStride(), ms = mStride();
    const float *bias = w_.bias();
    for (int64_t n = 0; n < g.N; ++n) {
      const float *xn = x + n * g.C * g.H * g.W;
      float *yn = y + n * g.OC * g.OH * g.OW;
      parallelFor(g.C, true, [&](int64_t c) { inputTransform(xn + c * g.H * g.W, V + c * T, vs); });
      // 16 products by steps of panels; each thread's next item is the
      // next step's panels, fetched ahead while the filters outgrow L2.
      int64_t step = panelsPerStep();
      int64_t steps = (g.OC + kPanelRows * step - 1) / (kPanelRows * step);
      bool fetch = kPositions * int64_t(uSize_ * sizeof(float)) >= kFetchAheadBytes;
      parallelFor(kPositions * steps, true, [&](int64_t item) {
        int64_t p = item / steps, pb = item % steps * step;
        gemmPanels(U.data<float>() + p * uSize_, pb, g.OC, g.C, V + p * vs, T, T, M + p * ms, T,
                   fetch && item + 1 < kPositions * steps);
      });
      parallelFor(g.OC, true, [&](int64_t oc) {
        float *plane = yn + oc * g.OH * g.OW;
        outputTransform(M + oc * T, ms, plane);
        ep(plane, 1, g.OH * g.OW, g.OH * g.OW, bias ? bias + oc : nullptr);
      });
    }
  }

private:
  int64_t vStride() const { return g_.C * TH_ * TW_ + 16; }
  int64_t mStride() const { return g_.OC * TH_ * TW_ + 16; }

  /// U_p = (G g Gᵀ)[p] for the 16 tile positions (winogradFilters).
  Tensor transformFilters(const Tensor &weights) const {
    Tensor transformed = winogradFilters(weights.data<float>(), g_.OC, g_.C, &kG[0][0], 4, uSize_);
    if (w_.mapped)
      w_.mapped->releasePages();
    return transformed;
  }

  /// V[p][t] = (Bᵀ d B)[p] for every tile t of one channel's plane, the
  /// tiles' 4x4 inputs read with the padding as zeros.
  void inputTransform(const float *plane, float *v, int64_t vs) const {
    const ConvGeometry &g = g_;
    for (int64_t th = 0; th < TH_; ++th)
      for (int64_t tw = 0; tw < TW_; ++tw) {
        float d[4][4];
        for (int i = 0; i < 4; ++i) {
          int64_t ih = 2 * th - g.PH + i;
          for (int j = 0; j < 4; ++j) {
            int64_t iw = 2 * tw - g.PW + j;
            d[i][j] = ih >= 0 && ih < g.H && iw >= 0 && iw < g.W ? plane[ih * g.W + iw] : 0.f;
          }
        }
        // Bᵀ d, then (Bᵀ d) B: rows (0 - 2, 1 + 2, 2 - 1, 1 - 3).
        float r[4][4];
        for (int j = 0; j < 4; ++j) {
          r[0][j] = d[0][j] - d[2][j];
          r[1][j] = d[1][j] + d[2][j];
          r[2][j] = d[2][j] - d[1][j];
          r[3][j] = d[1][j] - d[3][j];
        }
        float *out = v + th * TW_ + tw;
        for (int i = 0; i < 4; ++i) {
          out[(i * 4 + 0) * vs] = r[i][0] - r[i][2];
          out[(i * 4 + 1) * vs] = r[i][1] + r[i][2];
          out[(i * 4 + 2) * vs] = r[i][2] - r[i][1];
          out[(i * 4 + 3) * vs] = r[i][1] - r[i][3];
        }
      }
  }

  /// One output channel's plane from its M[p][t]: Aᵀ m A, tiles clipped at
  /// the plane's edges.
  void outputTransform(const float *m, int64_t ms, float *plane) const {
    const ConvGeometry &g = g_;
    for (int64_t th = 0; th < TH_; ++th)
      for (int64_t tw = 0; tw < TW_; ++tw) {
        const float *in = m + th * TW_ + tw;
        float q[4][4];
        for (int p = 0; p < kPositions; ++p)
          q[p / 4][p % 4] = in[p * ms];
        // Aᵀ q: rows (0 + 1 + 2, 1 - 2 - 3); then by A along the columns.
        float s[2][4];
        for (int j = 0; j < 4; ++j) {
          s[0][j] = q[0][j] + q[1][j] + q[2][j];
          s[1][j] = q[1][j] - q[2][j] - q[3][j];
        }
        for (int i = 0; i < 2; ++i) {
          int64_t oh = 2 * th + i;
          if (oh >= g.OH)
            break;
          float o[2] = {s[i][0] + s[i][1] + s[i][2], s[i][1] - s[i][2] - s[i][3]};
          for (int j = 0; j < 2 && 2 * tw + j < g.OW; ++j)
            plane[oh * g.OW + 2 * tw + j] = o[j];
        }
      }
  }

  int64_t TH_ = 0, TW_ = 0;
  size_t uSize_ = packedSize(g_.OC, g_.C); ///< floats per packed U_p
  PreparedWeight U_{w_.source(), "winograd-2x2-3x3", w_.mapped};
};

} // namespace

std::unique_ptr<OpKernel> makeWinograd23Conv(const ConvGeometry &g, ConvWeights w) {
  return std::make_unique<Winograd23Kernel>(g, std::move(w));
}

} // namespace kc::rt
