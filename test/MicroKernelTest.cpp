//===- MicroKernelTest.cpp - Micro-kernels against references and scalar -===//
//
// Each micro-kernel of each table this machine can run (scalar, avx2,
// avx512), plus "emu16": the same templates instantiated here over
// Lanes<16, true>, an emulated AVX-512 (arrays and bit masks), so that the
// 16-lane logic (tile widths, masks, tails) is tested on cores without
// AVX-512 too. Every form is compared with a reference computed here in
// double precision, and every form but scalar with the scalar form: the
// GEMM kernels sum each output in the same order in every form, so those
// must agree to the bit; the others within 1e-6 relative (Winograd's
// transforms 2e-5 absolute). Sizes include
// tails of every length and odd shapes. Tables the CPU cannot run report
// themselves as skipped.
//
//===----------------------------------------------------------------------===//
#define KC_UK_ISA emu16
#include "ukernels/Lanes.h"
#include "ukernels/Table.h"

#include "EmulatedAvx512.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace kc::uk;

namespace {

} // namespace

const MicroKernels &kc::test::emulatedAvx512() {
  static const MicroKernels emu16 = emu16::buildTable<emu16::Lanes<16, true>>("emu16");
  return emu16;
}

namespace {

/// The forms under test, scalar first.
std::vector<const MicroKernels *> forms() {
  std::vector<const MicroKernels *> r{microKernelsFor("scalar")};
  for (const char *isa : {"avx2", "avx512"}) {
    if (const MicroKernels *t = microKernelsFor(isa))
      r.push_back(t);
    else
      MESSAGE(std::string(isa) << ": skipped, not built or the CPU lacks it");
  }
  r.push_back(&kc::test::emulatedAvx512());
  return r;
}

std::vector<float> random(std::mt19937 &rng, size_t n, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

double refAct(Act a, double x, double slope) {
  switch (a) {
  case Act::None: return x;
  case Act::Relu: return x > 0 ? x : 0;
  case Act::Relu6: return std::min(std::max(x, 0.0), 6.0);
  case Act::Silu: return x / (1 + std::exp(-x));
  case Act::Sigmoid: return 1 / (1 + std::exp(-x));
  case Act::Hardswish: return x * std::min(std::max(x + 3, 0.0), 6.0) / 6;
  case Act::LeakyRelu: return x > 0 ? x : x * slope;
  case Act::Gelu:
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  case Act::GeluTanh:
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  return x;
}

/// Every element of got within atol + rtol·|ref|; reports the first miss.
void expectNear(const std::vector<float> &got, const std::vector<double> &ref, double atol,
                double rtol, const std::string &what) {
  REQUIRE(got.size() == ref.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    bool same = std::isnan(ref[i]) ? std::isnan(got[i])
                                   : std::fabs(got[i] - ref[i]) <= atol + rtol * std::fabs(ref[i]);
    if (!same && !bad++)
      first = i;
  }
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << ref.size() << " differ, first at "
                               << first << ": " << (bad ? got[first] : 0.f) << " against "
                               << (bad ? ref[first] : 0.0));
}

std::vector<double> widen(const std::vector<float> &v) { return {v.begin(), v.end()}; }

/// got equal to want bit for bit (NaN where want is NaN).
void expectSame(const std::vector<float> &got, const std::vector<float> &want,
                const std::string &what) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    bool same = std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i];
    if (!same && !bad++)
      first = i;
  }
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << got.size()
                               << " differ from the scalar form, first at " << first);
}

constexpr float kSentinel = 12345.f;

} // namespace

TEST_CASE("micro-kernels: f32_gemm_strip, every activation, residuals, tails of rows and columns") {
  std::mt19937 rng(7);
  auto all = forms();
  const float slope = 0.125f;
  for (int64_t K : {1, 3, 17, 40})
    for (int64_t rows = 1; rows <= kStripRows; ++rows)
      for (int64_t cols : {1, 7, 8, 15, 16, 17, 31, 32, 33, 47, 63, 64})
        for (int with : {0, 1, 2, 3}) {
          // Bias (bit 0) and a residual laid out as C (bit 1), whose
          // entries past the tile must not be read into it.
          const bool withBias = with & 1, withResidual = with & 2;
          const int64_t ldc = cols + 5;
          auto a = random(rng, size_t(K * kStripRows));
          auto b = random(rng, size_t(K * kStripBlockLd));
          auto bias = random(rng, kStripRows);
          auto d = random(rng, size_t(kStripRows * ldc), -2.f, 2.f);
          for (int64_t r = 0; r < kStripRows; ++r)
            for (int64_t j = cols; j < ldc; ++j)
              d[size_t(r * ldc + j)] = NAN;
          for (int act = 0; act < kNumActs; ++act) {
            std::vector<double> ref(size_t(kStripRows * ldc), kSentinel);
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t j = 0; j < cols; ++j) {
                double s = withBias ? bias[r] : 0;
                for (int64_t k = 0; k < K; ++k)
                  s += double(a[k * kStripRows + r]) * b[k * kStripBlockLd + j];
                if (withResidual)
                  s += d[size_t(r * ldc + j)];
                ref[r * ldc + j] = refAct(Act(act), s, slope);
              }
            std::vector<float> scalar;
            for (const MicroKernels *t : all) {
              std::vector<float> c(ref.size(), kSentinel);
              t->gemmStrip[act](a.data(), b.data(), kStripBlockLd, K,
                                withBias ? bias.data() : nullptr, slope, c.data(), ldc, rows, cols,
                                withResidual ? d.data() : nullptr);
              std::string what = std::string(t->isa) + " f32_gemm_6x" +
                                 std::to_string(t->stripTileCols) + " act " + std::to_string(act) +
                                 " K " + std::to_string(K) + " rows " + std::to_string(rows) +
                                 " cols " + std::to_string(cols) + " with " + std::to_string(with);
              expectNear(c, ref, 1e-5, 1e-5, what);
              if (scalar.empty())
                scalar = c;
              else
                expectSame(c, scalar, what);
            }
          }
        }
}

TEST_CASE("micro-kernels: f32_gemm_panel, one and two panels, strips and rows, fetching ahead") {
  std::mt19937 rng(11);
  auto all = forms();
  for (int64_t K : {1, 5, 40})
    for (int64_t rows : {1, 7, 16, 17, 31, 32})
      for (bool strips : {false, true})
        for (int64_t n0 : {0, 6})
          for (int64_t cols : {1, 5, 6, 7, 11, 12, 13, 17, 19, 25, 49}) {
            const int64_t n1 = n0 + cols, N = n1 + 3;
            // A packed: panel p holds K groups of 16 rows.
            auto A = random(rng, size_t(2 * kPanelRows * K));
            const int64_t strideStrip = K * kColumnStrip, ldb = strips ? kColumnStrip : N;
            auto Bv = random(rng, size_t((N + 5) / 6 * strideStrip + 64));
            PanelColumns B{Bv.data(), ldb, strips ? strideStrip : 0};
            auto bAt = [&](int64_t k, int64_t n) {
              return strips ? Bv[size_t(n / 6 * strideStrip + k * 6 + n % 6)] : Bv[size_t(k * N + n)];
            };
            for (bool rowsOut : {false, true})
              for (bool fetch : {false, true}) {
                std::vector<float> scalar;
                for (const MicroKernels *t : all) {
                  if (rows > kPanelRows * t->panelsPerStep)
                    continue;
                  const int64_t ldc = rowsOut ? rows + 3 : cols + 3;
                  const int64_t outRows = rowsOut ? cols : rows;
                  std::vector<double> ref(size_t(outRows * ldc), kSentinel);
                  for (int64_t r = 0; r < rows; ++r)
                    for (int64_t j = 0; j < cols; ++j) {
                      double s = 0;
                      for (int64_t k = 0; k < K; ++k)
                        s += double(A[size_t(r / 16 * 16 * K + k * 16 + r % 16)]) * bAt(k, n0 + j);
                      ref[size_t(rowsOut ? j * ldc + r : r * ldc + j)] = s;
                    }
                  std::vector<float> c(ref.size(), kSentinel);
                  Prefetch pf{reinterpret_cast<const char *>(A.data()), 1 << 10, 64};
                  t->gemmPanel[rowsOut][fetch](A.data(), K, B, n0, n1, c.data(), ldc, rows, pf);
                  std::string what = std::string(t->isa) + " f32_gemm_" +
                                     std::to_string(kPanelRows * t->panelsPerStep) + "x" +
                                     std::to_string(t->panelBlockCols) + " K " + std::to_string(K) +
                                     " rows " + std::to_string(rows) + " cols [" +
                                     std::to_string(n0) + ", " + std::to_string(n1) + ")" +
                                     (strips ? " strips" : " row-major") +
                                     (rowsOut ? " rows out" : "") + (fetch ? " fetch" : "");
                  expectNear(c, ref, 1e-5, 1e-5, what);
                  if (rows > kPanelRows)
                    continue; // only the 16-lane forms take two panels
                  if (scalar.empty())
                    scalar = c;
                  else
                    expectSame(c, scalar, what);
                }
              }
          }
}

TEST_CASE("micro-kernels: the panel kernel's blocks of columns") {
  // 6 at a time on 8 lanes; 12 on 16, where the last 12 and a tail of 1-5
  // are taken as 6 and 7-11: as many blocks either way.
  for (const MicroKernels *t : forms())
    for (int64_t cols = 1; cols <= 61; ++cols) {
      int64_t want = (cols + t->panelBlockCols - 1) / t->panelBlockCols;
      CHECK_MESSAGE(t->panelColumnBlocks(cols) == want, std::string(t->isa) << " cols " << cols);
    }
}

namespace {

/// A 3x3 depthwise plane at stride S, padding (PH, PW), in double.
std::vector<double> refDepthwise(const std::vector<float> &x, int64_t H, int64_t W, int64_t OH,
                                 int64_t OW, int64_t S, int64_t PH, int64_t PW, const float *k,
                                 float b, Act act, int K = 3) {
  std::vector<double> y(size_t(OH * OW));
  for (int64_t oh = 0; oh < OH; ++oh)
    for (int64_t ow = 0; ow < OW; ++ow) {
      double s = b;
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < K; ++j) {
          int64_t ih = oh * S - PH + i, iw = ow * S - PW + j;
          if (ih >= 0 && ih < H && iw >= 0 && iw < W)
            s += double(k[K * i + j]) * x[size_t(ih * W + iw)];
        }
      y[size_t(oh * OW + ow)] = refAct(act, s, 0.0);
    }
  return y;
}

/// The clamp the loops apply for act (None, ReLU or ReLU6).
DepthwiseClamp clampOf(Act act) {
  const float inf = INFINITY;
  bool relu = act == Act::Relu || act == Act::Relu6;
  return {relu ? 0.f : -inf, act == Act::Relu6 ? 6.f : inf};
}

} // namespace

TEST_CASE("micro-kernels: f32_dwconv3x3_masked, any padding, masked edges and tails") {
  std::mt19937 rng(13);
  int tested = 0;
  // The vector-wide form, and the 8-lane one for short rows.
  for (const MicroKernels *t : forms())
    for (bool narrow : {false, true}) {
      const DepthwiseMaskedFn *fn = narrow ? t->depthwiseMaskedShort : t->depthwiseMasked;
      if (!fn[0])
        continue; // only forms with fast masks have it
      ++tested;
      for (int64_t S : {1, 2})
        for (int64_t PH : {0, 1, 2})
          for (int64_t PW : {0, 1, 2, 5})
            for (int64_t W : {3, 7, 8, 9, 16, 17, 31, 33, 40, 64, 70})
              for (int64_t H : {1, 4, 7, 10})
                for (Act act : {Act::None, Act::Relu, Act::Relu6}) {
                  int64_t OH = (H + 2 * PH - 3) / S + 1, OW = (W + 2 * PW - 3) / S + 1;
                  if (OH <= 0 || OW <= 0)
                    continue;
                  auto x = random(rng, size_t(H * W), -4.f, 4.f);
                  auto k = random(rng, 9);
                  float b = 0.25f;
                  auto ref = refDepthwise(x, H, W, OH, OW, S, PH, PW, k.data(), b, act);
                  ref.resize(ref.size() + 16, kSentinel);
                  std::vector<float> y(ref.size(), kSentinel);
                  fn[S - 1](x.data(), y.data(), H, W, OH, OW, PH, PW, k.data(), b, clampOf(act));
                  expectNear(y, ref, 1e-5, 1e-5,
                             std::string(t->isa) + (narrow ? " 8-lane" : "") +
                                 " f32_dwconv3x3_masked S " + std::to_string(S) + " PH " +
                                 std::to_string(PH) + " PW " + std::to_string(PW) + " " +
                                 std::to_string(H) + "x" + std::to_string(W) + " act " +
                                 std::to_string(int(act)));
                }
    }
  CHECK(tested >= 2); // emu16's two forms at least
}

TEST_CASE("micro-kernels: f32_dwconv5x5_slide, padding 2, any rows, masked tails") {
  std::mt19937 rng(29);
  int tested = 0;
  for (const MicroKernels *t : forms()) {
    if (!t->depthwiseSlide5[0])
      continue; // only forms with fast masks have it
    ++tested;
    // Rows of one step and less, several steps and a partial one, planes
    // shorter and taller than the padding, both strides.
    for (int64_t S : {1, 2})
      for (int64_t PH : {0, 2, 3})
        for (int64_t W : {1, 5, 16, 17, 33, 40})
          for (int64_t H : {1, 3, 6, 11})
            for (Act act : {Act::None, Act::Relu6}) {
              int64_t OH = (H + 2 * PH - 5) / S + 1, OW = (W + 4 - 5) / S + 1;
              if (OH <= 0 || OW <= 0)
                continue;
              auto x = random(rng, size_t(H * W), -4.f, 4.f);
              auto k = random(rng, 25);
              float b = -0.5f;
              auto ref = refDepthwise(x, H, W, OH, OW, S, PH, 2, k.data(), b, act, 5);
              ref.resize(ref.size() + 16, kSentinel);
              std::vector<float> y(ref.size(), kSentinel);
              t->depthwiseSlide5[S - 1](x.data(), y.data(), H, W, OH, OW, PH, k.data(), b,
                                        clampOf(act));
              expectNear(y, ref, 1e-5, 1e-5,
                         std::string(t->isa) + " f32_dwconv5x5_slide S " + std::to_string(S) +
                             " PH " + std::to_string(PH) + " " + std::to_string(H) + "x" +
                             std::to_string(W) + " act " + std::to_string(int(act)));
            }
  }
  CHECK(tested >= 1); // emu16 at least
}

TEST_CASE("micro-kernels: f32_dwconv3x3_pad1, planes read in place") {
  std::mt19937 rng(17);
  auto all = forms();
  for (int64_t S : {1, 2})
    for (int64_t W : {24, 25, 33, 40, 41, 43, 58, 113})
      for (int64_t H : {1, 2, 5, 8})
        for (Act act : {Act::None, Act::Relu, Act::Relu6}) {
          int64_t OH = (H - 1) / S + 1, OW = (W - 1) / S + 1;
          auto x = random(rng, size_t(H * W), -4.f, 4.f);
          auto k = random(rng, 9);
          float b = -0.5f;
          auto ref = refDepthwise(x, H, W, OH, OW, S, 1, 1, k.data(), b, act);
          ref.resize(ref.size() + 8, kSentinel);
          std::vector<float> scalar;
          for (const MicroKernels *t : all) {
            std::vector<float> y(ref.size(), kSentinel);
            t->depthwisePad1[S - 1](x.data(), y.data(), H, W, OH, OW, k.data(), b, clampOf(act));
            std::string what = std::string(t->isa) + " f32_dwconv3x3_pad1 S " + std::to_string(S) +
                               " " + std::to_string(H) + "x" + std::to_string(W);
            expectNear(y, ref, 1e-5, 1e-5, what);
            if (scalar.empty())
              scalar = y;
            else
              expectNear(y, widen(scalar), 1e-6, 1e-6, what + " against scalar");
          }
        }
}

TEST_CASE("micro-kernels: f32_dwconv3x3_padded, short rows stored into the next") {
  std::mt19937 rng(19);
  auto all = forms();
  for (int64_t S : {1, 2})
    for (int64_t W : {3, 4, 5, 7, 8, 13, 14, 20})
      for (int64_t H : {3, 4, 7})
        for (int64_t P : {0, 1, 2}) {
          int64_t OH = (H + 2 * P - 3) / S + 1, OW = (W + 2 * P - 3) / S + 1;
          if (OH <= 0 || OW <= 0)
            continue;
          int64_t PWt = W + 2 * P, PHt = H + 2 * P;
          auto x = random(rng, size_t(H * W), -4.f, 4.f);
          // The zero-padded plane, then the 16-float gap reads may reach.
          std::vector<float> pad(size_t(PHt * PWt + 16), 0.f);
          for (int64_t h = 0; h < H; ++h)
            for (int64_t w = 0; w < W; ++w)
              pad[size_t((h + P) * PWt + w + P)] = x[size_t(h * W + w)];
          auto k = random(rng, 9);
          auto ref = refDepthwise(x, H, W, OH, OW, S, P, P, k.data(), 0.75f, Act::Relu6);
          ref.resize(ref.size() + 8, kSentinel);
          std::vector<float> scalar;
          for (const MicroKernels *t : all) {
            std::vector<float> y(ref.size(), kSentinel);
            t->depthwisePadded[S - 1](pad.data(), PWt, y.data(), OH, OW, k.data(), 0.75f,
                                      clampOf(Act::Relu6));
            std::string what = std::string(t->isa) + " f32_dwconv3x3_padded S " +
                               std::to_string(S) + " P " + std::to_string(P) + " " +
                               std::to_string(H) + "x" + std::to_string(W);
            expectNear(y, ref, 1e-5, 1e-5, what);
            if (scalar.empty())
              scalar = y;
            else
              expectNear(y, widen(scalar), 1e-6, 1e-6, what + " against scalar");
          }
        }
}

// Any kernel size and dilation at stride 1 and 2, planes from shorter than
// a vector to several vectors wide, row counts not a multiple of the four
// rows a step computes; each clamp (none, ReLU, ReLU6), and the stores of short rows into
// the rows after them, ending at the plane.
TEST_CASE("micro-kernels: f32_dwconv_padded, any kernel, dilation and stride") {
  std::mt19937 rng(29);
  auto all = forms();
  int tested = 0;
  struct Taps {
    int64_t K, D;
  };
  for (int64_t S : {1, 2})
    for (Taps t : {Taps{1, 1}, Taps{2, 1}, Taps{5, 1}, Taps{7, 1}, Taps{3, 2}, Taps{5, 2}})
      for (int64_t W : {3, 7, 14, 17, 28})
        for (int64_t H : {5, 7, 9})
          for (Act act : {Act::None, Act::Relu, Act::Relu6}) {
            const int64_t P = (t.K - 1) * t.D / 2, reach = (t.K - 1) * t.D + 1;
            int64_t OH = (H + 2 * P - reach) / S + 1, OW = (W + 2 * P - reach) / S + 1;
            if (OH <= 0 || OW <= 0)
              continue;
            int64_t PWt = W + 2 * P, PHt = H + 2 * P;
            auto x = random(rng, size_t(H * W), -4.f, 4.f);
            // The zero-padded plane, then the gap the loop's reads may reach.
            std::vector<float> pad(size_t(PHt * PWt + 2 * kMaxLanes + (t.K - 1) * t.D), 0.f);
            for (int64_t h = 0; h < H; ++h)
              for (int64_t w = 0; w < W; ++w)
                pad[size_t((h + P) * PWt + w + P)] = x[size_t(h * W + w)];
            auto k = random(rng, size_t(t.K * t.K));
            std::vector<double> ref(size_t(OH * OW));
            for (int64_t oh = 0; oh < OH; ++oh)
              for (int64_t ow = 0; ow < OW; ++ow) {
                double s = 0.5;
                for (int64_t i = 0; i < t.K; ++i)
                  for (int64_t j = 0; j < t.K; ++j)
                    s += double(k[size_t(i * t.K + j)]) *
                         pad[size_t((oh * S + i * t.D) * PWt + ow * S + j * t.D)];
                ref[size_t(oh * OW + ow)] = refAct(act, s, 0.0);
              }
            ref.resize(ref.size() + 16, kSentinel);
            std::vector<float> scalar;
            for (const MicroKernels *m : all) {
              std::vector<float> y(ref.size(), kSentinel);
              m->depthwiseKxK[S - 1](pad.data(), PWt, y.data(), OH, OW, {t.K, t.K, t.D, t.D},
                                     k.data(), 0.5f, clampOf(act));
              std::string what = std::string(m->isa) + " f32_dwconv_padded S " + std::to_string(S) +
                                 " K " + std::to_string(t.K) + " D " + std::to_string(t.D) + " " +
                                 std::to_string(H) + "x" + std::to_string(W) + " act " +
                                 std::to_string(int(act));
              expectNear(y, ref, 1e-5, 1e-5, what);
              if (scalar.empty())
                scalar = y;
              else
                expectNear(y, widen(scalar), 1e-5, 1e-5, what + " against scalar");
              ++tested;
            }
          }
  CHECK(tested > 500);
}

// A block of 1 to `lanes` channels, kernels square and not (their widths
// with and without a form of their own), dilation, strides 1 to 3 down the
// plane and 1 or 2 along it, planes narrower than a vector to several
// vectors wide, each clamp. The padded copy starts as NaN, so a border the
// loop fails to zero shows; planes past `count` must stay untouched.
TEST_CASE("micro-kernels: f32_dwconv_packed, blocks of channels, any kernel and stride") {
  std::mt19937 rng(31);
  auto all = forms();
  int tested = 0;
  struct Taps {
    int64_t KH, KW, D;
  };
  for (int64_t SW : {1, 2})
    for (int64_t SH : {SW, int64_t(3)})
      for (Taps t : {Taps{3, 3, 1}, Taps{5, 5, 1}, Taps{7, 7, 1}, Taps{1, 1, 1}, Taps{3, 5, 1},
                     Taps{5, 2, 1}, Taps{3, 3, 2}})
        for (auto [H, W] : {std::pair<int64_t, int64_t>{7, 7}, {5, 3}, {9, 14}, {6, 19}})
          for (Act act : {Act::None, Act::Relu, Act::Relu6}) {
            const int64_t PH = (t.KH - 1) * t.D / 2, PW = (t.KW - 1) * t.D / 2;
            const int64_t OH = (H + 2 * PH - (t.KH - 1) * t.D - 1) / SH + 1;
            const int64_t OW = (W + 2 * PW - (t.KW - 1) * t.D - 1) / SW + 1;
            const int64_t PHt = H + 2 * PH, PWt = W + 2 * PW, taps = t.KH * t.KW;
            // The same channels for every form, as many as the widest takes.
            auto x = random(rng, size_t(kMaxLanes * H * W), -4.f, 4.f);
            auto k = random(rng, size_t(kMaxLanes * taps));
            auto b = random(rng, size_t(kMaxLanes));
            std::vector<float> scalar;
            for (const MicroKernels *m : all) {
              const int64_t L = m->lanes;
              for (int64_t count : {int64_t(1), L - 3, L}) {
                std::vector<float> pk(size_t(taps * L), 0.f), pb(size_t(L), 0.f);
                for (int64_t c = 0; c < count; ++c) {
                  for (int64_t i = 0; i < taps; ++i)
                    pk[size_t(i * L + c)] = k[size_t(c * taps + i)];
                  pb[size_t(c)] = b[size_t(c)];
                }
                std::vector<double> ref(size_t(L * OH * OW), kSentinel);
                for (int64_t c = 0; c < count; ++c)
                  for (int64_t oh = 0; oh < OH; ++oh)
                    for (int64_t ow = 0; ow < OW; ++ow) {
                      double sum = b[size_t(c)];
                      for (int64_t i = 0; i < t.KH; ++i)
                        for (int64_t j = 0; j < t.KW; ++j) {
                          int64_t h = oh * SH + i * t.D - PH, w = ow * SW + j * t.D - PW;
                          if (h >= 0 && h < H && w >= 0 && w < W)
                            sum += double(k[size_t(c * taps + i * t.KW + j)]) *
                                   x[size_t((c * H + h) * W + w)];
                        }
                      ref[size_t((c * OH + oh) * OW + ow)] = refAct(act, sum, 0.0);
                    }
                std::vector<float> y(ref.size(), kSentinel);
                std::vector<float> pad(size_t(PHt * PWt * L), std::nanf(""));
                std::vector<float> out(size_t(OH * OW * L), std::nanf(""));
                const DepthwisePackedShape shape{H,  W,   OH,  OW, t.KH, t.KW, SH,
                                                 SW, t.D, t.D, PH, PW,   PWt};
                m->depthwisePacked[SW - 1](x.data(), count, y.data(), shape, pk.data(), pb.data(),
                                           clampOf(act), pad.data(), out.data());
                std::string what = std::string(m->isa) + " f32_dwconv_packed count " +
                                   std::to_string(count) + " S " + std::to_string(SH) + "," +
                                   std::to_string(SW) + " K " + std::to_string(t.KH) + "x" +
                                   std::to_string(t.KW) + " D " + std::to_string(t.D) + " " +
                                   std::to_string(H) + "x" + std::to_string(W) + " act " +
                                   std::to_string(int(act));
                expectNear(y, ref, 1e-5, 1e-5, what);
                // Every form sums a channel's taps in the same order.
                if (count == 1 && scalar.empty())
                  scalar.assign(y.begin(), y.begin() + OH * OW);
                else if (count == 1)
                  expectSame(std::vector<float>(y.begin(), y.begin() + OH * OW), scalar,
                             what + " against scalar");
                ++tested;
              }
            }
          }
  CHECK(tested > 1000);
}

TEST_CASE("micro-kernels: f32_winograd43_input and _output, partial groups of 8 tiles") {
  std::mt19937 rng(23);
  const double Bt[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                           {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  const double At[4][6] = {
      {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
  auto all = forms();
  for (int64_t TH : {1, 2, 3})
    for (int64_t TW : {1, 3, 4, 9, 14}) {
      const int64_t T = TH * TW, PWt = 4 * TW + 2, PHt = 4 * TH + 2, vStride = T + 16;
      auto pad = random(rng, size_t(PHt * PWt + 16));
      std::vector<double> refV(size_t(36 * vStride), kSentinel);
      for (int64_t t = 0; t < T; ++t) {
        const float *d = pad.data() + 4 * (t / TW) * PWt + 4 * (t % TW);
        for (int i = 0; i < 6; ++i)
          for (int j = 0; j < 6; ++j) {
            double s = 0;
            for (int a = 0; a < 6; ++a)
              for (int b = 0; b < 6; ++b)
                s += Bt[i][a] * d[a * PWt + b] * Bt[j][b];
            refV[size_t((i * 6 + j) * vStride + t)] = s;
          }
      }
      auto m = random(rng, size_t(36 * vStride));
      for (int64_t OH : {4 * TH - 3, 4 * TH})
        for (int64_t OW : {4 * TW - 2, 4 * TW}) {
          std::vector<double> refY(size_t(OH * OW) + 8, kSentinel);
          for (int64_t t = 0; t < T; ++t)
            for (int i = 0; i < 4; ++i)
              for (int j = 0; j < 4; ++j) {
                int64_t oh = 4 * (t / TW) + i, ow = 4 * (t % TW) + j;
                if (oh >= OH || ow >= OW)
                  continue;
                double s = 0;
                for (int a = 0; a < 6; ++a)
                  for (int b = 0; b < 6; ++b)
                    s += At[i][a] * m[size_t((a * 6 + b) * vStride + t)] * At[j][b];
                refY[size_t(oh * OW + ow)] = s;
              }
          std::vector<float> scalarV, scalarY;
          for (const MicroKernels *t : all) {
            std::string what = std::string(t->isa) + " f32_winograd43 " + std::to_string(TH) +
                               "x" + std::to_string(TW) + " tiles, " + std::to_string(OH) + "x" +
                               std::to_string(OW);
            std::vector<float> v(refV.size(), kSentinel), y(refY.size(), kSentinel);
            t->winogradInput(pad.data(), PWt, TW, T, v.data(), vStride);
            t->winogradOutput(m.data(), vStride, TW, T, y.data(), OH, OW);
            expectNear(v, refV, 1e-4, 1e-5, what + " input");
            expectNear(y, refY, 1e-4, 1e-5, what + " output");
            if (scalarV.empty()) {
              scalarV = v, scalarY = y;
            } else {
              // Sums of up to 36 terms of magnitude ~10: rounding differs
              // where the compiler fuses other multiply-adds.
              expectNear(v, widen(scalarV), 2e-5, 1e-6, what + " input against scalar");
              expectNear(y, widen(scalarY), 2e-5, 1e-6, what + " output against scalar");
            }
          }
        }
    }
}

TEST_CASE("micro-kernels: f32_bias_act, per row and per element, every activation") {
  std::mt19937 rng(29);
  auto all = forms();
  for (int64_t n : {0, 1, 7, 8, 9, 16, 23, 40})
    for (int act = 0; act < kNumActs; ++act)
      for (int perElement = 0; perElement < 2; ++perElement) {
        auto x = random(rng, size_t(n), -20.f, 20.f);
        auto bias = random(rng, size_t(n) + 1);
        std::vector<double> ref(size_t(n) + 4, kSentinel);
        for (int64_t j = 0; j < n; ++j)
          ref[size_t(j)] = refAct(Act(act), double(x[j] + bias[perElement ? j : 0]), 0.2);
        for (const MicroKernels *t : all) {
          std::vector<float> p(x);
          p.resize(ref.size(), kSentinel);
          t->biasAct[act][perElement](p.data(), n, bias.data(), 0.2f);
          // expApprox and its vector form: within 2 ulp of exp.
          expectNear(p, ref, 1e-6, 1e-6,
                     std::string(t->isa) + " f32_bias_act act " + std::to_string(act) + " n " +
                         std::to_string(n) + (perElement ? " per element" : " per row"));
        }
      }
}

TEST_CASE("micro-kernels: f32_bias_act at NaN, infinities, zeros and extremes, as applyAct") {
  // The vector forms give what the scalar one (the unfused kernels' and
  // the tails') gives: NaN where it is NaN, the same infinities, finite
  // values within 1e-6.
  const float inf = INFINITY;
  std::vector<float> x = {NAN,    inf,  -inf,  0.f,   -0.f,   1e-30f, -1e-30f, 3e38f,
                          -3e38f, 88.f, -88.f, 0.25f, -0.25f, 9.f,    -9.f,    40.f};
  const float zero = 0.f;
  for (int act = 0; act < kNumActs; ++act) {
    std::vector<double> want;
    for (float v : x)
      want.push_back(applyAct(Act(act), v, 0.2f));
    for (const MicroKernels *t : forms()) {
      std::vector<float> p(x);
      t->biasAct[act][0](p.data(), int64_t(p.size()), &zero, 0.2f);
      for (size_t i = 0; i < x.size(); ++i) {
        CAPTURE(t->isa);
        CAPTURE(act);
        CAPTURE(x[i]);
        if (std::isnan(want[i]) || std::isinf(want[i]))
          CHECK((std::isnan(p[i]) ? std::isnan(want[i]) : p[i] == want[i]));
        else
          CHECK(std::fabs(p[i] - want[i]) <= 1e-6 + 1e-6 * std::fabs(want[i]));
      }
    }
  }
}

TEST_CASE("micro-kernels: f32_pool_row, max with NaN, sums and averages") {
  std::mt19937 rng(31);
  auto all = forms();
  // Widths past 4 vectors take the kernel's four-vector steps.
  for (int64_t OW : {1, 3, 7, 8, 9, 16, 21, 37, 70})
    for (int64_t S : {1, 2})
      for (int64_t K : {1, 2, 3, 5})
        for (int64_t D : {1, 2})
          for (int mode = 0; mode < 3; ++mode) { // max, sum, average
            const bool isMax = mode == 0;
            auto t = random(rng, size_t(S * OW + (K - 1) * D + kPoolRowReach));
            t[5] = isMax ? NAN : t[5];
            std::vector<float> counts(size_t(OW + kPoolRowCountsReach), 1.f);
            for (int64_t ow = 0; ow < OW; ++ow)
              counts[size_t(ow)] = float(1 + ow % 4);
            const float rowCount = 3.f;
            std::vector<double> ref(size_t(OW) + 4, kSentinel);
            for (int64_t ow = 0; ow < OW; ++ow) {
              double a = isMax ? -INFINITY : 0.0;
              for (int64_t k = 0; k < K; ++k) {
                double v = t[size_t(S * ow + k * D)];
                a = !isMax ? a + v : std::isnan(v) || std::isnan(a) ? NAN : std::max(a, v);
              }
              ref[size_t(ow)] = mode == 2 ? a / (rowCount * counts[size_t(ow)]) : a;
            }
            PoolRow r{OW, S, K, D};
            if (mode == 2)
              r.counts = counts.data(), r.rowCount = rowCount;
            for (const MicroKernels *k : all) {
              std::vector<float> row(ref.size(), kSentinel);
              k->poolRow[isMax](t.data(), row.data(), r);
              expectNear(row, ref, 1e-6, 1e-6,
                         std::string(k->isa) + " f32_pool_row mode " + std::to_string(mode) +
                             " OW " + std::to_string(OW) + " S " + std::to_string(S) + " K " +
                             std::to_string(K) + " D " + std::to_string(D));
            }
          }
}

TEST_CASE("micro-kernels: f32_mean_variance") {
  std::mt19937 rng(37);
  for (const MicroKernels *t : forms())
    for (int64_t n : {1, 2, 7, 8, 9, 64, 71}) {
      auto x = random(rng, size_t(n), 3.f, 5.f);
      double s = 0, q = 0;
      for (float v : x)
        s += v;
      double mean = s / double(n);
      for (float v : x)
        q += (v - mean) * (v - mean);
      double m, var;
      t->meanVariance(x.data(), n, &m, &var);
      CHECK_MESSAGE(std::fabs(m - mean) <= 1e-12 * std::fabs(mean), std::string(t->isa) << " n " << n);
      CHECK_MESSAGE(std::fabs(var - q / double(n)) <= 1e-12, std::string(t->isa) << " n " << n);
    }
}
