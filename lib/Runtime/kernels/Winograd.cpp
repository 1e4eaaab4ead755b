//===- Winograd.cpp - 3x3 stride-1 convolution by Winograd F(4x4, 3x3) ----===//
//
// Lavin & Gray's minimal filtering: each 6x6 input tile d and 3x3 filter g
// give a 4x4 output tile Y = Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A. Batched over tiles and
// channels, the elementwise product becomes 36 independent GEMMs
// (OC × IC by IC × tiles), 2.25 multiplies per output instead of 9. Filters
// are transformed once, on the first run, straight into the panel layout of
// PackedGemm.h, whose register kernel then runs the 36 products without
// repacking them (resnet18 layer3, 14x14x256: 1.9 ms to 1.3 ms per
// convolution against OpenBLAS, which packs both operands on every call).
// Input and output tiles inside the plane are transformed 8 at a time, one
// per vector lane.
//
//===----------------------------------------------------------------------===//
#include "Winograd.h"
#include "PackedGemm.h"
#include "VecMath.h"

#include <algorithm>
#include <cstring>
#include <omp.h>

namespace kc::rt {
namespace {

// F(4x4, 3x3) filter transform G (6x3).
constexpr float kG[6][3] = {{1.f / 4, 0, 0},
                            {-1.f / 6, -1.f / 6, -1.f / 6},
                            {-1.f / 6, 1.f / 6, -1.f / 6},
                            {1.f / 24, 1.f / 12, 1.f / 6},
                            {1.f / 24, -1.f / 12, 1.f / 6},
                            {0, 0, 1}};

// r = Bᵀ d for a 6-vector read with stride `s`; written out so the zeros of
// Bᵀ cost nothing.
template <typename In, typename Out> inline void inputRow(In d, Out r) {
  r(0, 4 * d(0) - 5 * d(2) + d(4));
  r(1, -4 * (d(1) + d(2)) + d(3) + d(4));
  r(2, 4 * (d(1) - d(2)) - d(3) + d(4));
  r(3, -2 * (d(1) - d(3)) - d(2) + d(4));
  r(4, 2 * (d(1) - d(3)) - d(2) + d(4));
  r(5, 4 * d(1) - 5 * d(3) + d(5));
}

// o = Aᵀ m for a 6-vector m.
template <typename In, typename Out> inline void outputRow(In m, Out o) {
  auto a = m(1) + m(2), b = m(1) - m(2), c = m(3) + m(4), d = m(3) - m(4);
  o(0, m(0) + a + c);
  o(1, b + 2 * d);
  o(2, a + 4 * c);
  o(3, b + 8 * d + m(5));
}

#ifdef KC_HAVE_VEC8
/// Reads 32 floats src[4t + j] as d[j][t]: 4 vectors over 8 tiles t.
inline void loadTransposed(const float *src, __m256 d[4]) {
  __m256 a0 = _mm256_loadu_ps(src), a1 = _mm256_loadu_ps(src + 8);
  __m256 a2 = _mm256_loadu_ps(src + 16), a3 = _mm256_loadu_ps(src + 24);
  // One tile per 128-bit half: (0,4), (1,5), (2,6), (3,7).
  __m256 p0 = _mm256_permute2f128_ps(a0, a2, 0x20), p1 = _mm256_permute2f128_ps(a0, a2, 0x31);
  __m256 p2 = _mm256_permute2f128_ps(a1, a3, 0x20), p3 = _mm256_permute2f128_ps(a1, a3, 0x31);
  __m256 u0 = _mm256_unpacklo_ps(p0, p1), u1 = _mm256_unpackhi_ps(p0, p1);
  __m256 u2 = _mm256_unpacklo_ps(p2, p3), u3 = _mm256_unpackhi_ps(p2, p3);
  d[0] = _mm256_shuffle_ps(u0, u2, _MM_SHUFFLE(1, 0, 1, 0));
  d[1] = _mm256_shuffle_ps(u0, u2, _MM_SHUFFLE(3, 2, 3, 2));
  d[2] = _mm256_shuffle_ps(u1, u3, _MM_SHUFFLE(1, 0, 1, 0));
  d[3] = _mm256_shuffle_ps(u1, u3, _MM_SHUFFLE(3, 2, 3, 2));
}

/// Writes o[k][t] (4 vectors over 8 tiles t) as dst[4t + k], 32 floats.
inline void storeTransposed(const __m256 o[4], float *dst) {
  __m256 ab0 = _mm256_unpacklo_ps(o[0], o[1]), ab1 = _mm256_unpackhi_ps(o[0], o[1]);
  __m256 cd0 = _mm256_unpacklo_ps(o[2], o[3]), cd1 = _mm256_unpackhi_ps(o[2], o[3]);
  // Per 128-bit half: tiles (0,4), (1,5), (2,6), (3,7) as a b c d.
  __m256 t0 = _mm256_shuffle_ps(ab0, cd0, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 t1 = _mm256_shuffle_ps(ab0, cd0, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 t2 = _mm256_shuffle_ps(ab1, cd1, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 t3 = _mm256_shuffle_ps(ab1, cd1, _MM_SHUFFLE(3, 2, 3, 2));
  _mm256_storeu_ps(dst, _mm256_permute2f128_ps(t0, t1, 0x20));
  _mm256_storeu_ps(dst + 8, _mm256_permute2f128_ps(t2, t3, 0x20));
  _mm256_storeu_ps(dst + 16, _mm256_permute2f128_ps(t0, t1, 0x31));
  _mm256_storeu_ps(dst + 24, _mm256_permute2f128_ps(t2, t3, 0x31));
}
#endif

class Winograd43Kernel final : public FusableKernel {
public:
  /// `weight` is (OC, C, 3, 3), possibly a view of the mapped .bin whose
  /// bytes `mapped` holds: both are let go once the filters are transformed.
  Winograd43Kernel(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OC, int64_t OH, int64_t OW,
                   int64_t PH, int64_t PW, Tensor weight, Tensor bias, TensorDataPtr mapped)
      : N_(N), C_(C), H_(H), W_(W), OC_(OC), OH_(OH), OW_(OW), PH_(PH), PW_(PW),
        weight_(std::move(weight)), b_(std::move(bias)), mapped_(std::move(mapped)) {
    TH_ = (OH + 3) / 4, TW_ = (OW + 3) / 4, T_ = TH_ * TW_;
    // The 36 planes a tile touches are one padded cache line apart so they
    // do not all map to the same cache set when C·T is a power of two.
    vStride_ = C * T_ + 16, mStride_ = OC * T_ + 16;
  }

  size_t workspaceBytes() const override {
    return size_t(36 * (vStride_ + mStride_)) * sizeof(float);
  }

  void run(llvm::ArrayRef<const Tensor *> in, llvm::ArrayRef<Tensor *> out,
           ExecContext &ctx) override {
    if (!U_.defined())
      transformFilters();
    float *V = static_cast<float *>(ctx.workspace); // [36][C][T], planes vStride_ apart
    float *M = V + 36 * vStride_;                    // [36][OC][T], planes mStride_ apart
    const float *bias = b_.numel() ? b_.data<float>() : nullptr;
    for (int64_t n = 0; n < N_; ++n) {
      const float *x = in[0]->data<float>() + n * C_ * H_ * W_;
      float *y = out[0]->data<float>() + n * OC_ * OH_ * OW_;
      inputTransform(x, V);
      // 36 GEMMs, one per tile position, by panels of 16 output channels
      // spread over the threads.
      int64_t panels = (OC_ + kPanelRows - 1) / kPanelRows;
#pragma omp parallel for collapse(2) schedule(static)
      for (int p = 0; p < 36; ++p)
        for (int64_t pb = 0; pb < panels; ++pb)
          gemmPanel(U_.data<float>() + p * uSize_, pb, OC_, C_, V + p * vStride_, T_, T_,
                    M + p * mStride_, T_);
      outputTransform(M, y, bias);
    }
  }

private:
  /// U_p = (G g Gᵀ)[p] for p over the 36 tile positions, each an OC × C
  /// matrix packed for gemmPanel. Done on the first run rather than at load
  /// (resnet18's filters take ~18 ms and 37.6 MB of fresh pages), in
  /// parallel, one 16 × 16 block of (output, input) channels at a time, so
  /// every write is a contiguous run of 256 floats (writing single floats
  /// 36 planes apart hit one cache set when OC·C is a power of two).
  void transformFilters() {
    int64_t OC = OC_, C = C_;
    const float *weight = weight_.data<float>();
    uSize_ = packedSize(OC, C);
    U_ = Tensor::empty(DType::F32, {36, int64_t(uSize_)});
    float *U = U_.data<float>();
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
                tmp[a][b] = kG[a][0] * g[0 * 3 + b] + kG[a][1] * g[1 * 3 + b] + kG[a][2] * g[2 * 3 + b];
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
    weight_ = Tensor();
    if (mapped_)
      mapped_->releasePages();
    mapped_ = nullptr;
  }

  void inputTransform(const float *x, float *V) const {
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t c = 0; c < C_; ++c)
      for (int64_t th = 0; th < TH_; ++th) {
        const float *plane = x + c * H_ * W_;
        float *v = V + c * T_ + th * TW_;
        int64_t h0 = th * 4 - PH_;
        for (int64_t tw = 0; tw < TW_;) {
          int64_t w0 = tw * 4 - PW_;
#ifdef KC_HAVE_VEC8
          // 8 tiles inside the plane at a time: each input row's 36 floats
          // are transposed into 6 vectors over the tiles (columns 4 apart),
          // and the results are contiguous in V.
          if (tw + 8 <= TW_ && h0 >= 0 && h0 + 6 <= H_ && w0 >= 0 && w0 + 36 <= W_) {
            __m256 d[6][6];
            for (int i = 0; i < 6; ++i) {
              const float *r = plane + (h0 + i) * W_ + w0;
              loadTransposed(r, d[i]);
              __m256 next[4];
              loadTransposed(r + 4, next);
              d[i][4] = next[0], d[i][5] = next[1];
            }
            __m256 t[6][6];
            for (int j = 0; j < 6; ++j)
              inputRow([&](int k) { return d[k][j]; }, [&](int k, __m256 r) { t[k][j] = r; });
            for (int i = 0; i < 6; ++i)
              inputRow([&](int k) { return t[i][k]; }, [&](int k, __m256 r) {
                _mm256_storeu_ps(v + (i * 6 + k) * vStride_ + tw, r);
              });
            tw += 8;
            continue;
          }
#endif
          float d[6][6];
          if (h0 >= 0 && h0 + 6 <= H_ && w0 >= 0 && w0 + 6 <= W_) {
            for (int i = 0; i < 6; ++i)
              std::memcpy(d[i], plane + (h0 + i) * W_ + w0, sizeof d[i]);
          } else {
            for (int i = 0; i < 6; ++i)
              for (int j = 0; j < 6; ++j) {
                int64_t h = h0 + i, w = w0 + j;
                d[i][j] = (h >= 0 && h < H_ && w >= 0 && w < W_) ? plane[h * W_ + w] : 0.f;
              }
          }
          float t[6][6];
          for (int j = 0; j < 6; ++j)
            inputRow([&](int k) { return d[k][j]; }, [&](int k, float r) { t[k][j] = r; });
          for (int i = 0; i < 6; ++i)
            inputRow([&](int k) { return t[i][k]; },
                     [&](int k, float r) { v[(i * 6 + k) * vStride_ + tw] = r; });
          ++tw;
        }
      }
  }

  void outputTransform(const float *M, float *y, const float *bias) const {
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t oc = 0; oc < OC_; ++oc)
      for (int64_t th = 0; th < TH_; ++th) {
        float b = bias ? bias[oc] : 0.f;
        const float *m = M + oc * T_ + th * TW_;
        int64_t tw = 0;
#ifdef KC_HAVE_VEC8
        // 8 whole tiles at a time: their values for one of the 36 positions
        // are contiguous in M, and the 4 output values of a row of 8 tiles
        // are 32 contiguous floats of y once transposed.
        if (th * 4 + 4 <= OH_)
          for (; tw + 8 <= TW_ && 4 * (tw + 8) <= OW_; tw += 8) {
            __m256 t[4][6];
            for (int j = 0; j < 6; ++j)
              outputRow([&](int k) { return _mm256_loadu_ps(m + (k * 6 + j) * mStride_ + tw); },
                        [&](int k, __m256 r) { t[k][j] = r; });
            for (int i = 0; i < 4; ++i) {
              __m256 o[4];
              outputRow([&](int k) { return t[i][k]; }, [&](int k, __m256 r) { o[k] = r; });
              storeTransposed(o, y + (oc * OH_ + th * 4 + i) * OW_ + tw * 4);
            }
          }
#endif
        for (; tw < TW_; ++tw) {
          float t[4][6];
          for (int j = 0; j < 6; ++j)
            outputRow([&](int k) { return m[(k * 6 + j) * mStride_ + tw]; },
                      [&](int k, float r) { t[k][j] = r; });
          float o[4][4];
          for (int i = 0; i < 4; ++i)
            outputRow([&](int k) { return t[i][k]; }, [&](int k, float r) { o[i][k] = r; });
          int64_t rows = std::min<int64_t>(4, OH_ - th * 4), cols = std::min<int64_t>(4, OW_ - tw * 4);
          for (int64_t i = 0; i < rows; ++i) {
            float *dst = y + (oc * OH_ + th * 4 + i) * OW_ + tw * 4;
            for (int64_t j = 0; j < cols; ++j)
              dst[j] = o[i][j];
          }
        }
        // Bias and activation over whole output rows (vectorized), while
        // this band of rows is in cache.
        for (int64_t i = th * 4; i < std::min(OH_, th * 4 + 4); ++i)
          biasActivationRow(y + (oc * OH_ + i) * OW_, OW_, b, act_, slope_);
      }
  }

  int64_t N_, C_, H_, W_, OC_, OH_, OW_, PH_, PW_;
  int64_t TH_, TW_, T_, vStride_, mStride_;
  size_t uSize_ = 0; ///< floats per packed U_p
  Tensor weight_, U_, b_;
  TensorDataPtr mapped_;
};

} // namespace

std::unique_ptr<OpKernel> makeWinograd43(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OC,
                                         int64_t OH, int64_t OW, int64_t PH, int64_t PW,
                                         Tensor weight, Tensor bias, TensorDataPtr mapped) {
  return std::make_unique<Winograd43Kernel>(N, C, H, W, OC, OH, OW, PH, PW, std::move(weight),
                                            std::move(bias), std::move(mapped));
}

} // namespace kc::rt
