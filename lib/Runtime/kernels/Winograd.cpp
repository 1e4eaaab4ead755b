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
// Input and output tiles are transformed 8 consecutive tiles at a time, one
// per vector lane, the input read from a zero-bordered copy of each plane.
//
//===----------------------------------------------------------------------===//
#include "Winograd.h"
#include "PackedGemm.h"
#include "VecMath.h"

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
/// Transposes 8 rows of 8 floats in place: afterwards r[j] holds column j.
inline void transpose8x8(__m256 r[8]) {
  __m256 u[8], w[8];
  for (int i = 0; i < 4; ++i) {
    u[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    u[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i)
    for (int h = 0; h < 2; ++h) {
      __m256 a = u[4 * i + h], b = u[4 * i + 2 + h];
      w[4 * i + 2 * h] = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 1, 0));
      w[4 * i + 2 * h + 1] = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 2, 3, 2));
    }
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm256_permute2f128_ps(w[j], w[4 + j], 0x20);
    r[4 + j] = _mm256_permute2f128_ps(w[j], w[4 + j], 0x31);
  }
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
      // spread over the threads. Each thread runs its items in order, and
      // the next item's panel follows this one's in U_, so each fetches
      // the next ahead once U_ outgrows L2.
      int64_t step = panelsPerStep();
      int64_t steps = (OC_ + kPanelRows * step - 1) / (kPanelRows * step);
      bool fetch = 36 * uSize_ * int64_t(sizeof(float)) >= kFetchAheadBytes;
      parallelFor(36 * steps, true, [&](int64_t item) {
        int64_t p = item / steps, pb = item % steps * step;
        gemmPanels(U_.data<float>() + p * uSize_, pb, OC_, C_, V + p * vStride_, T_, T_,
                   M + p * mStride_, T_, fetch && item + 1 < 36 * steps);
      });
      outputTransform(M, y, bias);
    }
  }

private:
  /// U_p = (G g Gᵀ)[p] for p over the 36 tile positions, each an OC × C
  /// matrix packed for gemmPanels. Done on the first run rather than at load
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

  /// V[p][c][t] = (Bᵀ d B)[p] for every tile t of every channel c. Each
  /// channel is first copied into a zero-bordered plane that holds every
  /// tile whole, so all tiles, edge ones included, take the vector path: 8
  /// tiles (consecutive in t, possibly across tile rows) at a time, one per
  /// lane. Without the copy, tiles at the edges ran scalar, and planes of
  /// fewer than 8 tiles across (28x28 and 14x14) ran scalar throughout.
  void inputTransform(const float *x, float *V) {
    int64_t PHt = 4 * TH_ + 2, PWt = 4 * TW_ + 2;
    // 8 floats are read per tile row of 6: slack past the plane's end.
    int64_t region = threadPlanes(padded_, PHt * PWt);
    parallelFor(C_, true, [&](int64_t c) {
      float *pad = padded_.data() + size_t(omp_get_thread_num()) * region;
      const float *plane = x + c * H_ * W_;
      // Rows and columns past the input stay zero from the first fill:
      // only the input's own window is ever written.
      copyRows(pad + PH_ * PWt + PW_, PWt, plane, W_, H_, W_);
      float *v = V + c * T_;
      for (int64_t t0 = 0; t0 < T_; t0 += 8) {
        int64_t n = std::min<int64_t>(8, T_ - t0);
#ifdef KC_HAVE_VEC8
        const float *base[8];
        for (int l = 0; l < 8; ++l) {
          int64_t t = t0 + std::min<int64_t>(l, n - 1);
          base[l] = pad + 4 * (t / TW_) * PWt + 4 * (t % TW_);
        }
        __m256 d[6][8];
        for (int i = 0; i < 6; ++i) {
          __m256 rows[8];
          for (int l = 0; l < 8; ++l)
            rows[l] = _mm256_loadu_ps(base[l] + i * PWt);
          transpose8x8(rows);
          for (int j = 0; j < 6; ++j)
            d[i][j] = rows[j];
        }
        __m256 t[6][6];
        for (int j = 0; j < 6; ++j)
          inputRow([&](int k) { return d[k][j]; }, [&](int k, __m256 r) { t[k][j] = r; });
        for (int i = 0; i < 6; ++i)
          inputRow([&](int k) { return t[i][k]; }, [&](int k, __m256 r) {
            float *dst = v + (i * 6 + k) * vStride_ + t0;
            if (n == 8) {
              _mm256_storeu_ps(dst, r);
            } else {
              alignas(32) float lanes[8];
              _mm256_store_ps(lanes, r);
              std::copy(lanes, lanes + n, dst);
            }
          });
#else
        for (int64_t t = t0; t < t0 + n; ++t) {
          const float *src = pad + 4 * (t / TW_) * PWt + 4 * (t % TW_);
          float tt[6][6];
          for (int j = 0; j < 6; ++j)
            inputRow([&](int k) { return src[k * PWt + j]; },
                     [&](int k, float r) { tt[k][j] = r; });
          for (int i = 0; i < 6; ++i)
            inputRow([&](int k) { return tt[i][k]; },
                     [&](int k, float r) { v[(i * 6 + k) * vStride_ + t] = r; });
        }
#endif
      }
    });
  }

  /// y[oc] = act(Aᵀ m A + bias) for every tile, 8 consecutive tiles at a
  /// time; each tile's 4x4 block is then copied out, clipped at the
  /// plane's right and bottom edges.
  void outputTransform(const float *M, float *y, const float *bias) const {
    parallelFor(OC_, true, [&](int64_t oc) {
      const float *m = M + oc * T_;
      float *plane = y + oc * OH_ * OW_;
      for (int64_t t0 = 0; t0 < T_; t0 += 8) {
        int64_t n = std::min<int64_t>(8, T_ - t0);
        alignas(32) float o[4][8][4]; // [row][tile][column]
#ifdef KC_HAVE_VEC8
        // Lanes past the last tile read M's padding (or the next plane)
        // and are never copied out.
        __m256 t[4][6];
        for (int j = 0; j < 6; ++j)
          outputRow([&](int k) { return _mm256_loadu_ps(m + (k * 6 + j) * mStride_ + t0); },
                    [&](int k, __m256 r) { t[k][j] = r; });
        for (int i = 0; i < 4; ++i) {
          __m256 r[4];
          outputRow([&](int k) { return t[i][k]; }, [&](int k, __m256 v) { r[k] = v; });
          storeTransposed(r, &o[i][0][0]);
        }
#else
        for (int64_t l = 0; l < n; ++l) {
          float tt[4][6];
          for (int j = 0; j < 6; ++j)
            outputRow([&](int k) { return m[(k * 6 + j) * mStride_ + t0 + l]; },
                      [&](int k, float r) { tt[k][j] = r; });
          for (int i = 0; i < 4; ++i)
            outputRow([&](int k) { return tt[i][k]; }, [&](int k, float r) { o[i][l][k] = r; });
        }
#endif
        for (int64_t l = 0; l < n; ++l) {
          int64_t oh0 = 4 * ((t0 + l) / TW_), ow0 = 4 * ((t0 + l) % TW_);
          int64_t rows = std::min<int64_t>(4, OH_ - oh0), cols = std::min<int64_t>(4, OW_ - ow0);
          for (int64_t i = 0; i < rows; ++i) {
#ifdef KC_HAVE_VEC8
            if (cols == 4) {
              _mm_storeu_ps(plane + (oh0 + i) * OW_ + ow0, _mm_load_ps(o[i][l]));
              continue;
            }
#endif
            std::copy(o[i][l], o[i][l] + cols, plane + (oh0 + i) * OW_ + ow0);
          }
        }
      }
      // Bias and activation over the whole plane (vectorized) while it is
      // in cache.
      biasActivationRow(plane, OH_ * OW_, bias ? bias[oc] : 0.f, act_, slope_);
    });
  }

  int64_t N_, C_, H_, W_, OC_, OH_, OW_, PH_, PW_;
  int64_t TH_, TW_, T_, vStride_, mStride_;
  size_t uSize_ = 0; ///< floats per packed U_p
  Tensor weight_, U_, b_;
  TensorDataPtr mapped_;
  std::vector<float> padded_; ///< per-thread zero-bordered input planes
};

} // namespace

std::unique_ptr<OpKernel> makeWinograd43(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OC,
                                         int64_t OH, int64_t OW, int64_t PH, int64_t PW,
                                         Tensor weight, Tensor bias, TensorDataPtr mapped) {
  return std::make_unique<Winograd43Kernel>(N, C, H, W, OC, OH, OW, PH, PW, std::move(weight),
                                            std::move(bias), std::move(mapped));
}

} // namespace kc::rt
