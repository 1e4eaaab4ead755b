//===- Conv.cpp - Convolution kernels -------------------------------------===//
//
// nn.Conv1d/Conv2d as GEMM. Most layers run on kc's strip kernel
// (StripGemm.h), which reads a 1×1 layer's input as it lies and gathers
// other layers' patches a block of output positions at a time; deep layers
// with few outputs run on the panel kernel (PackedGemm.h); 3x3 stride-1
// layers with enough channels go to Winograd; depthwise layers run a direct
// loop. Layers with fewer than 8 output channels per group use im2col and
// OpenBLAS, in blocks of rows with several threads. Bias and a fused
// activation are applied while the output is in cache or registers.
// Weights are read in place from the mapped file (or copied once, when
// unaligned); packed forms are built on the first run.
//
//===----------------------------------------------------------------------===//
#include "Isa.h"
#include "KernelUtils.h"
#include "PaddedConv.h"
#include "PackedGemm.h"
#include "StripGemm.h"
#include "VecMath.h"
#include "VecMath512.h"
#include "Winograd.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdlib>

#include <cblas.h>
#include <cstring>
#include <limits>
#include <omp.h>

namespace kc::rt {
namespace {

struct ConvGeometry {
  int64_t N, C, H, W, OC, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, G;
};

/// Reads the attributes common to Conv and ConvTranspose, viewing 1-d
/// convolutions as 2-d ones of height 1.
llvm::Expected<ConvGeometry> geometry(const CallNode &c, bool transposed) {
  auto in = inputShape(c, 0);
  if (!in)
    return in.takeError();
  auto out = outputShape(c);
  if (!out)
    return out.takeError();
  std::vector<int64_t> i = *in, o = *out;
  size_t spatial = i.size() - 2;
  if ((i.size() != 3 && i.size() != 4) || o.size() != i.size())
    return kernelError(c, "expects a 3-d or 4-d input, got " + shapeToString(i));
  auto k = intsN(c, "kernel_size", spatial, {});
  auto s = intsN(c, "stride", spatial, std::vector<int64_t>(spatial, 1));
  auto d = intsN(c, "dilation", spatial, std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> p(spatial, 0);
  if (const AttrValue *pv = c.attrs().find("padding"); pv && pv->isString()) {
    if (pv->getString() == "same")
      for (size_t a = 0; a < spatial; ++a)
        p[a] = d[a] * (k[a] - 1) / 2;
    else if (pv->getString() != "valid")
      return kernelError(c, "unknown padding '" + pv->getString() + "'");
  } else {
    p = intsN(c, "padding", spatial, std::vector<int64_t>(spatial, 0));
  }
  if (c.attrs().getString("padding_mode", "zeros") != "zeros")
    return kernelError(c, "padding_mode '" + c.attrs().getString("padding_mode", "") +
                              "' is not supported (only zeros)");
  if (k.size() != spatial || s.size() != spatial || d.size() != spatial || p.size() != spatial)
    return kernelError(c, "malformed kernel_size/stride/dilation/padding");
  if (spatial == 1) { // (N,C,L) as (N,C,1,L)
    i.insert(i.begin() + 2, 1), o.insert(o.begin() + 2, 1);
    k.insert(k.begin(), 1), s.insert(s.begin(), 1), d.insert(d.begin(), 1), p.insert(p.begin(), 0);
  }
  ConvGeometry g{i[0], i[1], i[2], i[3], o[1], o[2], o[3], k[0], k[1], s[0], s[1],
                 p[0], p[1], d[0], d[1], c.attrs().getInt("groups", 1)};
  if (g.G <= 0 || g.C % g.G || g.OC % g.G)
    return kernelError(c, "groups=" + llvm::Twine(g.G) + " does not divide the channels");
  (void)transposed;
  return g;
}

/// out[i] = in[i*stride] for i in [0, n); a compile-time stride (S > 0)
/// lets the compiler vectorize the common stride-2 case.
template <int S> void gatherStrided(float *out, const float *in, int64_t n, int64_t stride) {
  int64_t st = S > 0 ? S : stride;
  for (int64_t i = 0; i < n; ++i)
    out[i] = in[i * st];
}

/// The indices i in [0, count) with 0 <= i*stride + off < bound, as a range
/// [lo, hi) (lo == hi when there are none): where a strided walk along a
/// row of `bound` values stays inside it, so loops over it need no checks.
std::pair<int64_t, int64_t> insideRange(int64_t off, int64_t stride, int64_t count,
                                        int64_t bound) {
  int64_t lo = std::min(count, off >= 0 ? 0 : (-off + stride - 1) / stride);
  int64_t hi = off >= bound ? lo : std::clamp((bound - 1 - off) / stride + 1, lo, count);
  return {lo, hi};
}

/// Rewrites each of `rows` rows of W floats as its even columns followed
/// by its odd ones, so that a stride-2 walk along a row reads consecutive
/// floats: gathering a stride-2 layer's patches becomes row copies.
void splitColumns(const float *in, float *out, int64_t rows, int64_t W, bool parallel) {
  int64_t We = (W + 1) / 2;
  parallelFor(rows, parallel && rows * W > 65536, [&](int64_t r) {
    const float *s = in + r * W;
    float *e = out + r * W, *o = e + We;
    for (int64_t i = 0; i < W / 2; ++i) {
      e[i] = s[2 * i];
      o[i] = s[2 * i + 1];
    }
    if (W % 2)
      e[We - 1] = s[W - 1];
  });
}

/// Gathers, for input channels [c0, c1) of one group's input, the patch
/// values of output positions [n0, n0 + cols) (row-major over OH×OW): row
/// (c·KH + kh)·KW + kw of `col`, `ld` floats apart, holds the input value
/// each position's kernel tap (kh, kw) reads, zero in the padding. With
/// `split`, a stride-2 layer's input rows are laid out as splitColumns
/// leaves them.
void gatherPatches(const float *in, float *col, int64_t ld, int64_t c0, int64_t c1,
                   const ConvGeometry &g, int64_t n0, int64_t cols, bool split = false) {
  // The positions as runs within one output row: (oh, ow0, ow1, first column).
  struct Run {
    int64_t oh, ow0, ow1, j0;
  };
  llvm::SmallVector<Run, 8> runs;
  for (int64_t p = n0; p < n0 + cols;) {
    int64_t oh = p / g.OW, ow0 = p % g.OW, ow1 = std::min(g.OW, ow0 + (n0 + cols - p));
    runs.push_back({oh, ow0, ow1, p - n0});
    p += ow1 - ow0;
  }
  for (int64_t c = c0; c < c1; ++c)
    for (int64_t kh = 0; kh < g.KH; ++kh) {
      const float *src = in + c * g.H * g.W;
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        float *dst = col + ((c * g.KH + kh) * g.KW + kw) * ld;
        // Output columns that read the input; zeros on either side.
        int64_t off = kw * g.DW - g.PW;
        auto [lo, hi] = insideRange(off, g.SW, g.OW, g.W);
        for (const Run &r : runs) {
          float *row = dst + r.j0; // row[i] is output column ow0 + i
          int64_t n = r.ow1 - r.ow0;
          int64_t ih = r.oh * g.SH - g.PH + kh * g.DH;
          if (ih < 0 || ih >= g.H) {
            std::fill(row, row + n, 0.f);
            continue;
          }
          // Columns [a, b) read the input; the rest are padding.
          int64_t a = std::clamp(lo, r.ow0, r.ow1), b = std::clamp(hi, a, r.ow1);
          float *out = row + (a - r.ow0);
          std::fill(row, out, 0.f);
          if (b > a) {
            const float *srow = src + ih * g.W + a * g.SW + off;
            if (split) {
              // Columns of one parity lie together: evens, then odds.
              int64_t iw = a * 2 + off;
              srow = src + ih * g.W + (iw % 2 ? (g.W + 1) / 2 : 0) + iw / 2;
              copyShortRow(out, srow, b - a);
            } else if (g.SW == 1)
              std::memcpy(out, srow, sizeof(float) * size_t(b - a));
            else if (g.SW == 2)
              gatherStrided<2>(out, srow, b - a, 2);
            else
              gatherStrided<0>(out, srow, b - a, g.SW);
          }
          std::fill(out + (b - a), row + n, 0.f);
        }
      }
    }
}

/// Gathers the patches of output positions [n0, n0 + cols) (cols ≤ 6) of
/// one group's input (Cg channels) as a strip for gemmPackedFewColumns:
/// group (c·KH + kh)·KW + kw holds the positions' values of tap (kh, kw)
/// in channel c, zero in the padding and past `cols`. Each tap's offsets
/// in a channel plane are worked out once per strip and serve every
/// channel: on 7x7 outputs a row-wise gather handles runs of 7 floats, and
/// its per-run work cost more than the copying.
void gatherPatchStrip(const float *in, int64_t Cg, const ConvGeometry &g, int64_t n0, int64_t cols,
                      float *strip) {
  constexpr int64_t S = kColumnStrip;
  int64_t taps = g.KH * g.KW;
  thread_local std::vector<int64_t> offsets; // grows once, then reused
  if (offsets.size() < size_t(taps * S))
    offsets.resize(size_t(taps * S));
  for (int64_t j = 0; j < S; ++j) {
    int64_t oh = (n0 + j) / g.OW, ow = (n0 + j) % g.OW;
    for (int64_t kh = 0; kh < g.KH; ++kh)
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        int64_t ih = oh * g.SH - g.PH + kh * g.DH, iw = ow * g.SW - g.PW + kw * g.DW;
        bool inside = j < cols && ih >= 0 && ih < g.H && iw >= 0 && iw < g.W;
        offsets[size_t((kh * g.KW + kw) * S + j)] = inside ? ih * g.W + iw : -1;
      }
  }
  const int64_t *off = offsets.data();
  for (int64_t c = 0; c < Cg; ++c) {
    const float *plane = in + c * g.H * g.W;
    float *o = strip + c * taps * S;
    for (int64_t i = 0; i < taps * S; ++i)
      o[i] = off[i] >= 0 ? plane[off[i]] : 0.f;
  }
}

/// Gathers the patches of output rows [oh0, oh1) of one group's input into
/// `col`: [Cg*KH*KW] rows × [(oh1-oh0)*OW] columns.
void im2col(const float *in, float *col, int64_t Cg, const ConvGeometry &g, int64_t oh0,
            int64_t oh1, bool parallel) {
  int64_t cols = (oh1 - oh0) * g.OW;
  parallelFor(Cg, parallel && Cg * g.KH * g.KW * cols > 32768, [&](int64_t c) {
    gatherPatches(in, col, cols, c, c + 1, g, oh0 * g.OW, cols);
  });
}

#ifdef KC_HAVE_AVX512_KERNELS
/// The lanes l of a 16-float load from column c0 of a row of W floats that
/// fall inside the row: 0 <= c0 + l < W.
KC_AVX512 inline __mmask16 lanesInside(int64_t c0, int64_t W) {
  __mmask16 m = firstLanes(W - c0);
  return c0 < 0 ? __mmask16(m & ~firstLanes(-c0)) : m;
}

/// Widest rows the AVX-512 3x3 depthwise loop takes: rows above and below
/// the plane read a row of zeros this long.
constexpr int64_t kDepthwise512MaxWidth = 4096;

/// acc plus 16 outputs of a 3x3 kernel at stride S on a row triple, from
/// column c0 of each row (the first output's first tap). Loads are at
/// offsets 0, 1, 2 (stride 1) or 0, 16, 2, 18 (stride 2, a tap's even and
/// odd columns split out by one permute each); with Masked, load j reads
/// only the lanes of m[j]. Two accumulators halve the chain of dependent
/// multiply-adds.
template <int S, bool Masked>
KC_AVX512 inline __m512 taps16(const float *const r[3], int64_t c0, const __m512 w[9],
                               const __mmask16 m[4], __m512 acc) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  constexpr int kLoads = S == 1 ? 3 : 4;
  constexpr int64_t kOffset[4] = {0, S == 1 ? 1 : 16, 2, 18};
  __m512 acc2 = _mm512_setzero_ps();
  for (int i = 0; i < 3; ++i) {
    const float *p = r[i] + c0;
    __m512 v[4];
    for (int j = 0; j < kLoads; ++j)
      v[j] = Masked ? _mm512_maskz_loadu_ps(m[j], p + kOffset[j]) : _mm512_loadu_ps(p + kOffset[j]);
    if constexpr (S == 1) {
      acc = _mm512_fmadd_ps(w[3 * i], v[0], acc);
      acc2 = _mm512_fmadd_ps(w[3 * i + 1], v[1], acc2);
      acc = _mm512_fmadd_ps(w[3 * i + 2], v[2], acc);
    } else {
      acc = _mm512_fmadd_ps(w[3 * i], _mm512_permutex2var_ps(v[0], even, v[1]), acc);
      acc2 = _mm512_fmadd_ps(w[3 * i + 1], _mm512_permutex2var_ps(v[0], odd, v[1]), acc2);
      acc = _mm512_fmadd_ps(w[3 * i + 2], _mm512_permutex2var_ps(v[2], even, v[3]), acc);
    }
  }
  return _mm512_add_ps(acc, acc2);
}

/// One channel plane (H×W into OH×OW, W ≤ kDepthwise512MaxWidth) of a 3x3
/// depthwise layer at stride S (1 or 2), dilation 1, padding (PH, PW), with
/// AVX-512: 16 outputs a step, rows outside the plane read as zeros and
/// the loads of a step that leaves the row masked to the lanes inside it,
/// so that edges need neither scalar sums nor a zero-padded copy of the
/// plane. The sums are clamped to [lo, hi] (ReLU, ReLU6) before the
/// masked store.
template <int S>
KC_AVX512 void depthwise3x3Avx512(const float *src, float *dst, int64_t H, int64_t W, int64_t OH,
                                  int64_t OW, int64_t PH, int64_t PW, const float *k, float b,
                                  float lo, float hi) {
  static const std::vector<float> zeros(size_t(kDepthwise512MaxWidth + 64), 0.f);
  __m512 w[9];
  for (int i = 0; i < 9; ++i)
    w[i] = _mm512_set1_ps(k[i]);
  const __m512 vb = _mm512_set1_ps(b), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  constexpr int64_t kReach = S == 1 ? 2 + 16 : 18 + 16; // columns a step's loads span
  // Each step's load masks, the same on every row; a step whose loads all
  // lie inside the row is marked and runs unmasked.
  constexpr int64_t kMaxSteps = (kDepthwise512MaxWidth + 15) / 16;
  __mmask16 masks[kMaxSteps][4];
  bool inside[kMaxSteps];
  int64_t steps = (OW + 15) / 16;
  for (int64_t t = 0; t < steps; ++t) {
    int64_t c0 = t * 16 * S - PW;
    inside[t] = c0 >= 0 && c0 + kReach <= W;
    masks[t][0] = lanesInside(c0, W), masks[t][1] = lanesInside(c0 + (S == 1 ? 1 : 16), W);
    masks[t][2] = lanesInside(c0 + 2, W), masks[t][3] = lanesInside(c0 + 18, W);
  }
  for (int64_t oh = 0; oh < OH; ++oh) {
    const float *r[3];
    for (int i = 0; i < 3; ++i) {
      int64_t ih = oh * S - PH + i;
      // The zero row is read from column c0 >= -PW: point 32 floats in.
      r[i] = ih >= 0 && ih < H ? src + ih * W : zeros.data() + 32;
    }
    float *row = dst + oh * OW;
    for (int64_t t = 0; t < steps; ++t) {
      int64_t ow0 = t * 16, c0 = ow0 * S - PW;
      __m512 acc = inside[t] ? taps16<S, false>(r, c0, w, masks[t], vb)
                             : taps16<S, true>(r, c0, w, masks[t], vb);
      if (ow0 + 16 <= OW)
        _mm512_storeu_ps(row + ow0, clamp16(acc, vlo, vhi));
      else
        _mm512_mask_storeu_ps(row + ow0, firstLanes(OW - ow0), clamp16(acc, vlo, vhi));
    }
  }
}
#endif

class Conv2dKernel final : public FusableKernel {
public:
  /// `mapped`, when given, holds the weight's bytes in the mapped .bin (w
  /// may view them): its pages are released once the weights are packed.
  Conv2dKernel(ConvGeometry g, Tensor w, Tensor b, TensorDataPtr mapped = nullptr)
      : g_(g), w_(std::move(w)), b_(std::move(b)), mapped_(std::move(mapped)) {
    Cg_ = g.C / g.G;
    OCg_ = g.OC / g.G;
    K_ = Cg_ * g.KH * g.KW;
    pointwise_ = g.KH == 1 && g.KW == 1 && g.SH == 1 && g.SW == 1 && g.PH == 0 && g.PW == 0;
    depthwise_ = g.G == g.C && g.OC == g.C && g.G > 1;
    // Output rows per block: the block's patches and results together stay
    // within ~256 KB, so the epilogue runs on data still in cache.
    int64_t cols = std::max<int64_t>(128, 65536 / (OCg_ + (pointwise_ ? 0 : K_)));
    blockRows_ = std::clamp<int64_t>(cols / g.OW, 1, g.OH);
    blocks_ = (g.OH + blockRows_ - 1) / blockRows_;
    threads_ = omp_get_max_threads();
    // Deep layers (few outputs, long K) run on kc's register kernel over
    // weights packed once, where OpenBLAS would pack the large weight
    // matrix again on every call: resnet18 31.7 to 30.1 ms at 1 thread (its
    // 7x7x512 layers 3.5 to 3.0 ms each), mobilenet_v2 10.6 to 10.2 ms. The
    // packing happens on the first run, not at load, which it would slow by
    // ~20 ms on resnet18. Layers of 64 outputs or fewer go there whatever
    // their depth: the strip kernel's tiles of 16 outputs would compute 64
    // for a 7x7 plane's 49 (mobilenet_v2's 7x7 160->960 layers 0.265 to
    // 0.225 ms each; at 14x14 the strip kernel stays ahead).
    pack_ = !depthwise_ && (K_ > 256 || g.OH * g.OW <= 64) && g.OH * g.OW <= 256;
    // Other layers run on the strip kernel: it reads a pointwise layer's
    // input as it lies and gathers other layers' patches block by block
    // (no im2col matrix), and writes each output once with bias and
    // activation applied in registers. Against OpenBLAS: mobilenet_v2 10.8
    // to 10.4 ms at 1 thread and 8.8 to 7.6 ms at 2; resnet18's 7x7 stem
    // 3.52 to 3.09 ms; unet_small 2.5 to 2.25 ms at 2 threads. Below 8
    // output channels its strips of 6 rows are mostly padding, and OpenBLAS
    // does better (unet_small's 16->2 head 0.010 against 0.016 ms).
    strips_ = !depthwise_ && !pack_ && OCg_ >= 8;
    // Their stride-2 layers first split each input row by column parity
    // (splitColumns), so the patches are gathered by row copies.
    split_ = strips_ && !pointwise_ && g.SW == 2;
  }

  /// A 1x1 layer takes the depthwise layer after it (`next`) when its
  /// output planes outgrow L2: the two then run in bands of the depthwise
  /// layer's output rows (runBands), the band's expanded rows kept in a
  /// per-thread buffer, instead of the whole expanded tensor going out to
  /// memory and back.
  bool absorb(std::unique_ptr<OpKernel> &next) override {
#ifdef KC_HAVE_AVX512_KERNELS
    auto *dw = dynamic_cast<Conv2dKernel *>(next.get());
    if (then_ || !dw || !pointwise_ || !strips_ || g_.G != 1 || !dw->avx512Depthwise() ||
        dw->g_.N != g_.N || dw->g_.C != g_.OC || dw->g_.H != g_.OH || dw->g_.W != g_.OW ||
        g_.OC * g_.OH * g_.OW * int64_t(sizeof(float)) < kBandMinBytes)
      return false;
    then_.reset(dw);
    next.release();
    // Output rows per band: the band's expanded rows within kBandBytes,
    // and as many bands per thread.
    const ConvGeometry &d = dw->g_;
    int64_t rowBytes = d.W * g_.OC * int64_t(sizeof(float));
    int64_t rows = std::max<int64_t>(1, (kBandBytes / rowBytes - 3) / d.SH + 1);
    int64_t bands = (d.OH + rows - 1) / rows;
    bands = (bands + threads_ - 1) / threads_ * threads_;
    bandRows_ = (d.OH + bands - 1) / bands;
    bandFloats_ = size_t(g_.OC * ((bandRows_ - 1) * d.SH + 3) * d.W);
    return true;
#else
    return false;
#endif
  }

  void fuseActivation(Act a, float slope) override {
    if (then_)
      then_->fuseActivation(a, slope);
    else
      FusableKernel::fuseActivation(a, slope);
  }

  size_t workspaceBytes() const override {
    if (then_)
      return bandFloats_ * size_t(threads_) * sizeof(float);
    if (split_)
      return size_t(Cg_ * g_.H * g_.W) * sizeof(float);
    if (pointwise_ || depthwise_ || strips_ || pack_)
      return 0;
    size_t whole = size_t(K_ * g_.OH * g_.OW);
    size_t perThread = size_t(K_ * blockRows_ * g_.OW) * size_t(threads_);
    return std::max(whole, perThread) * sizeof(float);
  }

  void run(llvm::ArrayRef<const Tensor *> in, llvm::ArrayRef<Tensor *> out,
           ExecContext &ctx) override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    const float *bias = b_.defined() && b_.numel() ? b_.data<float>() : nullptr;
    int64_t HW = g_.OH * g_.OW;
    if (depthwise_)
      return depthwise(x, y, bias);
    float *ws = static_cast<float *>(ctx.workspace);
#ifdef KC_HAVE_AVX512_KERNELS
    if (then_)
      return runBands(x, y, bias, ws);
#endif
    int threads = std::min(omp_get_max_threads(), threads_);
    for (int64_t n = 0; n < g_.N; ++n)
      for (int64_t grp = 0; grp < g_.G; ++grp) {
        const float *xg = x + (n * g_.C + grp * Cg_) * g_.H * g_.W;
        float *yg = y + (n * g_.OC + grp * OCg_) * HW;
        const float *bg = bias ? bias + grp * OCg_ : nullptr;
        if (strips_) {
          if (!packed_.defined())
            packWeights();
          const float *A = packed_.data<float>() + grp * stripPackedSize(OCg_, K_);
          if (pointwise_) {
            gemmStrips(A, OCg_, K_, xg, HW, HW, yg, HW, bg, act_, slope_, threads > 1);
          } else {
            // Patches are gathered block by block, straight into the
            // kernel's buffer: no im2col matrix is written out.
            const float *src = xg;
            if (split_) {
              splitColumns(xg, ws, Cg_ * g_.H, g_.W, threads > 1);
              src = ws;
            }
            auto patches = [&](int64_t n0, int64_t cols, float *block) {
              gatherPatches(src, block, kStripBlockLd, 0, Cg_, g_, n0, cols, split_);
            };
            gemmStrips(A, OCg_, K_, HW, patches, yg, HW, bg, act_, slope_, threads > 1);
          }
          continue;
        }
        if (pack_) {
          // Deep layers (few outputs, long K): kc's kernel over weights
          // packed on the first run, B packed in strips of 6 columns, a
          // convolution's patches gathered straight into them.
          if (!packed_.defined())
            packWeights();
          const float *A = packed_.data<float>() + grp * packedSize(OCg_, K_);
          if (pointwise_) {
            gemmPackedFewColumns(A, OCg_, K_, xg, HW, HW, yg, HW);
          } else {
            auto strip = [&](int64_t n0, int64_t cols, float *o) {
              gatherPatchStrip(xg, Cg_, g_, n0, cols, o);
            };
            gemmPackedFewColumns(A, OCg_, K_, HW, strip, yg, HW);
          }
          biasActivation(yg, OCg_, HW, bg, act_, slope_);
          continue;
        }
        // With several threads, blocks of rows (one per task) beat one
        // GEMM split by OpenBLAS: yolo_small 3.40 to 3.22 ms, unet_small 3.36
        // to 3.09 ms at 2 threads. With one thread they gain nothing.
        if (threads > 1 && blocks_ >= 2 * threads) {
          blockedGemm(xg, yg, w_.data<float>() + grp * OCg_ * K_, bg, ws, threads);
          continue;
        }
        // Otherwise one GEMM, split across threads.
        const float *B = xg;
        if (!pointwise_) {
          im2col(xg, ws, Cg_, g_, 0, g_.OH, true);
          B = ws;
        }
        sgemm(false, false, OCg_, HW, K_, 1.f, w_.data<float>() + grp * OCg_ * K_, K_, B, HW, 0.f,
              yg, HW);
        biasActivation(yg, OCg_, HW, bg, act_, slope_);
      }
  }

private:
  /// Packs w_ for the panel or the strip kernel, once, and lets the
  /// original go.
  void packWeights() {
    size_t per = strips_ ? stripPackedSize(OCg_, K_) : packedSize(OCg_, K_);
    packed_ = Tensor::empty(DType::F32, {g_.G, int64_t(per)});
    // A few panels at a time, their mapped rows paged in before and
    // released after, so the weights are never resident twice over.
    constexpr int64_t kRows = 48; // whole panels of 16 and strips of 6
    for (int64_t grp = 0; grp < g_.G; ++grp)
      for (int64_t r0 = 0; r0 < OCg_; r0 += kRows) {
        int64_t rows = std::min(kRows, OCg_ - r0);
        size_t offset = size_t((grp * OCg_ + r0) * K_) * sizeof(float);
        size_t length = size_t(rows * K_) * sizeof(float);
        if (mapped_)
          mapped_->prefault(offset, length);
        const float *src = w_.data<float>() + (grp * OCg_ + r0) * K_;
        float *dst = packed_.data<float>() + grp * per + size_t(r0 * K_);
        if (strips_)
          packStrips(src, K_, rows, K_, dst);
        else
          packRows(src, K_, rows, K_, dst);
        if (mapped_)
          mapped_->releasePages(offset, length);
      }
    w_ = Tensor();
    mapped_ = nullptr;
  }

  /// Blocks of output rows, one per task: patches gathered into the
  /// thread's slice of the workspace, one single-threaded GEMM, then bias and
  /// activation while the block is in cache.
  void blockedGemm(const float *xg, float *yg, const float *wg, const float *bias, float *ws,
                   int threads) {
    const ConvGeometry &g = g_;
    int64_t HW = g.OH * g.OW;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t blk = 0; blk < blocks_; ++blk) {
      int64_t oh0 = blk * blockRows_, oh1 = std::min(g.OH, oh0 + blockRows_);
      int64_t c0 = oh0 * g.OW, cols = (oh1 - oh0) * g.OW;
      const float *B = xg + c0;
      int64_t ldb = HW;
      if (!pointwise_) {
        float *col = ws + size_t(omp_get_thread_num()) * K_ * blockRows_ * g.OW;
        im2col(xg, col, Cg_, g, oh0, oh1, false);
        B = col, ldb = cols;
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(OCg_), int(cols), int(K_), 1.f,
                  wg, int(K_), B, int(ldb), 0.f, yg + c0, int(HW));
      for (int64_t r = 0; r < OCg_; ++r)
        biasActivationRow(yg + r * HW + c0, cols, bias ? bias[r] : 0.f, act_, slope_);
    }
  }

  /// Direct depthwise convolution: each channel plane is copied once into a
  /// zero-padded scratch plane so the inner loops run without bounds checks;
  /// 3x3 layers run depthwise3x3, others a loop of contiguous (stride 1)
  /// multiply-adds the compiler vectorizes.
  void depthwise(const float *x, float *y, const float *bias) {
    const ConvGeometry &g = g_;
    int64_t HW = g.OH * g.OW;
#ifdef KC_HAVE_AVX512_KERNELS
    // 3x3 layers with rows of more than 8 outputs take the AVX-512 loop:
    // mobilenet_v2's such layers, summed, min of 6 rounds, 1.38 to 1.20 ms
    // at 1 thread (stride 2 0.51 to 0.39 ms). On rows of 7, 16-lane steps
    // more than half empty lost to the 8-lane loop (0.20 to 0.24 ms).
    if (avx512Depthwise()) {
      parallelFor(g.N * g.C, true, [&](int64_t plane) {
        channel512(plane % g.C, x + plane * g.H * g.W, g.H, g.PH, y + plane * HW, g.OH, bias);
      });
      return;
    }
#endif
    if (directDepthwise()) {
      parallelFor(g.N * g.C, true, [&](int64_t plane) {
        int64_t c = plane % g.C;
        const float *src = x + plane * g.H * g.W;
        const float *k = w_.data<float>() + c * 9;
        float b = bias ? bias[c] : 0.f;
        if (g.SW == 1)
          depthwise3x3Direct<1>(src, y + plane * HW, k, b);
        else
          depthwise3x3Direct<2>(src, y + plane * HW, k, b);
      });
      return;
    }
    int64_t PHt = g.H + 2 * g.PH, PWt = g.W + 2 * g.PW;
    // One padded plane per thread; the 3x3 loop's reads past the last row
    // stay inside the plane's gap.
    int64_t region = threadPlanes(padded_, PHt * PWt);
    parallelFor(g.N * g.C, true, [&](int64_t plane) {
      int64_t n = plane / g.C, c = plane % g.C;
      float *pad = padded_.data() + size_t(omp_get_thread_num()) * region;
      const float *src = x + (n * g.C + c) * g.H * g.W;
      copyRows(pad + g.PH * PWt + g.PW, PWt, src, g.W, g.H, g.W);
      float *dst = y + (n * g.C + c) * HW;
      const float *k = w_.data<float>() + c * g.KH * g.KW;
      float b = bias ? bias[c] : 0.f;
      if (g.KH == 3 && g.KW == 3 && g.DH == 1 && g.DW == 1 && g.SH == g.SW &&
          (g.SW == 1 || g.SW == 2)) {
        if (g.SW == 1)
          depthwise3x3<1>(pad, PWt, dst, k, b);
        else
          depthwise3x3<2>(pad, PWt, dst, k, b);
        return;
      }
      for (int64_t oh = 0; oh < g.OH; ++oh) {
        float *row = dst + oh * g.OW;
        for (int64_t ow = 0; ow < g.OW; ++ow)
          row[ow] = b;
        for (int64_t kh = 0; kh < g.KH; ++kh) {
          const float *prow = pad + (oh * g.SH + kh * g.DH) * PWt;
          for (int64_t kw = 0; kw < g.KW; ++kw) {
            float wv = k[kh * g.KW + kw];
            const float *s = prow + kw * g.DW;
            if (g.SW == 1) {
              for (int64_t ow = 0; ow < g.OW; ++ow)
                row[ow] += wv * s[ow];
            } else if (g.SW == 2) {
              for (int64_t ow = 0; ow < g.OW; ++ow)
                row[ow] += wv * s[2 * ow];
            } else {
              for (int64_t ow = 0; ow < g.OW; ++ow)
                row[ow] += wv * s[ow * g.SW];
            }
          }
        }
        if (act_ == Act::Relu6)
          for (int64_t ow = 0; ow < g.OW; ++ow)
            row[ow] = std::min(std::max(row[ow], 0.f), 6.f);
        else if (act_ != Act::None)
          for (int64_t ow = 0; ow < g.OW; ++ow)
            row[ow] = applyAct(act_, row[ow], slope_);
      }
    });
  }

  /// Whether the layer takes depthwise3x3Avx512.
  bool avx512Depthwise() const {
#ifdef KC_HAVE_AVX512_KERNELS
    const ConvGeometry &g = g_;
    return useAvx512() && depthwise_ && g.KH == 3 && g.KW == 3 && g.DH == 1 && g.DW == 1 &&
           g.SH == g.SW && (g.SW == 1 || g.SW == 2) && g.W <= kDepthwise512MaxWidth &&
           g.PW <= 16 && g.OW > 8;
#else
    return false;
#endif
  }

#ifdef KC_HAVE_AVX512_KERNELS
  /// Channel c of this depthwise layer (avx512Depthwise) on H input rows at
  /// src, PH of padding above the first, into OH output rows at dst: a
  /// whole plane, or a band of one.
  void channel512(int64_t c, const float *src, int64_t H, int64_t PH, float *dst, int64_t OH,
                  const float *bias) const {
    const ConvGeometry &g = g_;
    const Clamp clamp = clampOfActivation();
    const float *k = w_.data<float>() + c * 9;
    float b = bias ? bias[c] : 0.f;
    if (g.SW == 1)
      depthwise3x3Avx512<1>(src, dst, H, g.W, OH, g.OW, PH, g.PW, k, b, clamp.lo, clamp.hi);
    else
      depthwise3x3Avx512<2>(src, dst, H, g.W, OH, g.OW, PH, g.PW, k, b, clamp.lo, clamp.hi);
    if (!clamp.only)
      biasActivationRow(dst, OH * g.OW, 0.f, act_, slope_);
  }

  /// This 1x1 layer and the depthwise one it absorbed, band by band of the
  /// latter's output rows, the bands shared over the threads: each thread
  /// computes the expanded rows a band reads (the rows shared by two bands
  /// twice) into its buffer, then the band's depthwise outputs from them.
  void runBands(const float *x, float *y, const float *bias, float *ws) {
    if (!packed_.defined())
      packWeights();
    const Conv2dKernel &dw = *then_;
    const ConvGeometry &d = dw.g_;
    const int64_t M = g_.OC, HW = g_.OH * g_.OW, OHW = d.OH * d.OW, S = d.SH;
    const int64_t bands = (d.OH + bandRows_ - 1) / bandRows_;
    const float *dwBias = dw.b_.defined() && dw.b_.numel() ? dw.b_.data<float>() : nullptr;
    // At most the threads the workspace holds buffers for.
    const int threads = std::min(omp_get_max_threads(), threads_);
    const bool shared = threads > 1 && !omp_in_parallel();
    for (int64_t n = 0; n < g_.N; ++n) {
      const float *xn = x + n * g_.C * HW;
      float *yn = y + n * M * OHW;
      auto runBand = [&](int64_t band) {
        float *e = ws + size_t(shared ? omp_get_thread_num() : 0) * bandFloats_;
        int64_t oh0 = band * bandRows_, oh1 = std::min(d.OH, oh0 + bandRows_);
        int64_t ih0 = std::max<int64_t>(0, oh0 * S - d.PH);
        int64_t ih1 = std::min(d.H, (oh1 - 1) * S - d.PH + 3);
        int64_t rows = std::max<int64_t>(0, ih1 - ih0), cols = rows * d.W;
        if (rows > 0)
          gemmStrips(packed_.data<float>(), M, K_, xn + ih0 * d.W, HW, cols, e, cols, bias, act_,
                     slope_, false);
        // Band row 0 is input row ih0: the padding above, seen from the
        // band, is what lies above ih0 of the first output row's window.
        int64_t ph = ih0 - oh0 * S + d.PH;
        for (int64_t c = 0; c < M; ++c)
          dw.channel512(c, e + c * cols, rows, ph, yn + c * OHW + oh0 * d.OW, oh1 - oh0, dwBias);
      };
      if (shared) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t band = 0; band < bands; ++band)
          runBand(band);
      } else {
        for (int64_t band = 0; band < bands; ++band)
          runBand(band);
      }
    }
  }
#endif

  /// Expanded tensors (per image) from which a 1x1 layer absorbs the
  /// depthwise layer after it, and the bytes of expanded rows a band keeps.
  static constexpr int64_t kBandMinBytes = 1 << 20, kBandBytes = 512 << 10;

  /// Whether the layer is a 3x3 with padding 1 on planes wide enough to
  /// read in place (depthwise3x3Direct). On a large plane, copying it into
  /// a padded scratch plane first cost as much as the arithmetic.
  bool directDepthwise() const {
    const ConvGeometry &g = g_;
    return g.KH == 3 && g.KW == 3 && g.PH == 1 && g.PW == 1 && g.DH == 1 && g.DW == 1 &&
           g.SH == g.SW && (g.SW == 1 || g.SW == 2) && g.W >= kDirectMinWidth &&
           g.W <= kDirectMaxWidth;
  }
  /// Widths read in place: from 24 a row has at least one full step of 8
  /// outputs inside it at either stride; the upper bound sizes the row of
  /// zeros read above and below the plane.
  static constexpr int64_t kDirectMinWidth = 24, kDirectMaxWidth = 4096;

  /// How the 3x3 depthwise loops apply the fused activation: ReLU and
  /// ReLU6 (and none) are the clamp [lo, hi] in the same loop (`only`);
  /// other activations run over the row afterwards, the clamp open.
  struct Clamp {
    bool only;
    float lo, hi;
  };
  Clamp clampOfActivation() const {
    constexpr float inf = std::numeric_limits<float>::infinity();
    bool relu = act_ == Act::Relu || act_ == Act::Relu6;
    return {act_ == Act::None || relu, relu ? 0.f : -inf, act_ == Act::Relu6 ? 6.f : inf};
  }

#ifdef KC_HAVE_VEC8
  /// acc plus 8 outputs of a 3x3 kernel on a row triple at stride S, the
  /// first output's taps at columns col, col + 1 and col + 2 of each row.
  template <int S>
  static __m256 taps8(const float *const r[3], int64_t col, const __m256 w[9], __m256 acc) {
    for (int i = 0; i < 3; ++i) {
      const float *p = r[i] + col;
      if constexpr (S == 1) {
        acc = _mm256_fmadd_ps(w[3 * i], _mm256_loadu_ps(p), acc);
        acc = _mm256_fmadd_ps(w[3 * i + 1], _mm256_loadu_ps(p + 1), acc);
        acc = _mm256_fmadd_ps(w[3 * i + 2], _mm256_loadu_ps(p + 2), acc);
      } else {
        // Even, odd and shifted even columns split out with shuffles.
        __m256 a = _mm256_loadu_ps(p), c = _mm256_loadu_ps(p + 8);
        __m256 a2 = _mm256_loadu_ps(p + 2), c2 = _mm256_loadu_ps(p + 10);
        acc = _mm256_fmadd_ps(w[3 * i], evenLanes(a, c), acc);
        acc = _mm256_fmadd_ps(w[3 * i + 1], oddLanes(a, c), acc);
        acc = _mm256_fmadd_ps(w[3 * i + 2], evenLanes(a2, c2), acc);
      }
    }
    return acc;
  }
#endif

  /// One channel of a 3x3, padding 1 layer read straight from its input
  /// plane: rows above and below the plane are a row of zeros, and the
  /// outputs whose taps leave the row (the first, and the last at stride
  /// 1) are summed one by one without the missing taps.
  template <int S>
  void depthwise3x3Direct(const float *src, float *dst, const float *k, float b) const {
    static const std::vector<float> zeros(size_t(kDirectMaxWidth), 0.f);
    const int64_t H = g_.H, W = g_.W, OW = g_.OW;
    const Clamp clamp = clampOfActivation();
    const bool clampOnly = clamp.only;
    const float lo = clamp.lo, hi = clamp.hi;
    auto edge = [&](const float *const r[3], int64_t ow) {
      float v = b;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          int64_t col = S * ow - 1 + j;
          if (col >= 0 && col < W)
            v += k[3 * i + j] * r[i][col];
        }
      return std::min(std::max(v, lo), hi);
    };
#ifdef KC_HAVE_VEC8
    // Steps of 8 from ow in [1, last - 7] keep every tap and every load
    // inside the row (loads reach column ow + 8 at stride 1, 2 ow + 16 at
    // stride 2).
    const int64_t last = S == 1 ? W - 2 : (W - 17) / 2 + 7;
#endif
    for (int64_t oh = 0; oh < g_.OH; ++oh) {
      const float *r[3];
      for (int i = 0; i < 3; ++i) {
        int64_t ih = oh * S - 1 + i;
        r[i] = ih >= 0 && ih < H ? src + ih * W : zeros.data();
      }
      float *row = dst + oh * OW;
      row[0] = edge(r, 0);
      int64_t ow = 1;
#ifdef KC_HAVE_VEC8
      const __m256 vb = _mm256_set1_ps(b), vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
      const __m256 w[9] = {_mm256_set1_ps(k[0]), _mm256_set1_ps(k[1]), _mm256_set1_ps(k[2]),
                           _mm256_set1_ps(k[3]), _mm256_set1_ps(k[4]), _mm256_set1_ps(k[5]),
                           _mm256_set1_ps(k[6]), _mm256_set1_ps(k[7]), _mm256_set1_ps(k[8])};
      // Steps of 8; the last one overlaps the step before it.
      for (int64_t step = 1; step <= last; step += 8) {
        ow = std::min(step, last - 7);
        __m256 v = taps8<S>(r, S * ow - 1, w, vb);
        _mm256_storeu_ps(row + ow, _mm256_min_ps(_mm256_max_ps(v, vlo), vhi));
      }
      ow = last + 1;
#endif
      for (; ow < OW; ++ow)
        row[ow] = edge(r, ow);
      if (!clampOnly)
        biasActivationRow(row, OW, 0.f, act_, slope_);
    }
  }

  /// One channel of the common 3x3 case: all nine taps summed in registers
  /// and each output written once, instead of nine passes over the row.
  template <int S>
  void depthwise3x3(const float *pad, int64_t PWt, float *dst, const float *k, float b) const {
    const float k0 = k[0], k1 = k[1], k2 = k[2], k3 = k[3], k4 = k[4], k5 = k[5], k6 = k[6],
                k7 = k[7], k8 = k[8];
    // ReLU and ReLU6 are clamps applied in the same loop; others after it.
    const Clamp clamp = clampOfActivation();
    const bool clampOnly = clamp.only;
    const float lo = clamp.lo, hi = clamp.hi;
    for (int64_t oh = 0; oh < g_.OH; ++oh) {
      const float *r0 = pad + oh * S * PWt, *r1 = r0 + PWt, *r2 = r1 + PWt;
      float *row = dst + oh * g_.OW;
      int64_t ow = 0;
#ifdef KC_HAVE_VEC8
      // 8 outputs per step. A row of 8 or more ends with a step that
      // overlaps the one before it; a shorter row (7x7 planes) stores all 8
      // lanes, the extra ones landing in the rows computed after it, except
      // where they would leave the plane. Masked stores would do
      // the same but are slow on some cores. A short row's loads run past
      // it into the next row, or past the plane into the region's gap (at
      // most 15 floats, see depthwise()); those lanes are never kept.
      const __m256 vb = _mm256_set1_ps(b), vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
      const __m256 w[9] = {_mm256_set1_ps(k0), _mm256_set1_ps(k1), _mm256_set1_ps(k2),
                           _mm256_set1_ps(k3), _mm256_set1_ps(k4), _mm256_set1_ps(k5),
                           _mm256_set1_ps(k6), _mm256_set1_ps(k7), _mm256_set1_ps(k8)};
      const float *rows[3] = {r0, r1, r2};
      for (int64_t step = 0; step < g_.OW; step += 8) {
        ow = std::max<int64_t>(0, std::min(step, g_.OW - 8));
        __m256 acc = taps8<S>(rows, S * ow, w, vb);
        __m256 v = _mm256_min_ps(_mm256_max_ps(acc, vlo), vhi);
        if (oh * g_.OW + ow + 8 <= g_.OH * g_.OW) {
          _mm256_storeu_ps(row + ow, v);
        } else {
          alignas(32) float last[8];
          _mm256_store_ps(last, v);
          std::copy(last, last + g_.OW, row);
        }
      }
      ow = g_.OW;
#endif
      for (; ow < g_.OW; ++ow) {
        int64_t i = ow * S;
        float v = b + k0 * r0[i] + k1 * r0[i + 1] + k2 * r0[i + 2] + k3 * r1[i] +
                  k4 * r1[i + 1] + k5 * r1[i + 2] + k6 * r2[i] + k7 * r2[i + 1] + k8 * r2[i + 2];
        row[ow] = std::min(std::max(v, lo), hi);
      }
      if (!clampOnly)
        biasActivationRow(row, g_.OW, 0.f, act_, slope_);
    }
  }

  ConvGeometry g_;
  Tensor w_, b_;
  Tensor packed_; ///< w_ in panels or strips, one block per group
  TensorDataPtr mapped_;
  bool pack_ = false; ///< packed_ in panels is used (and built on the first run)
  bool strips_ = false; ///< packed_ in strips is used (and built on the first run)
  int64_t Cg_, OCg_, K_;
  int64_t blockRows_, blocks_;
  int threads_; ///< threads the workspace is sized for
  bool pointwise_, depthwise_;
  bool split_ = false; ///< stride-2 strips: input rows split by column parity first
  std::vector<float> padded_; ///< per-thread padded planes (depthwise)
  std::unique_ptr<Conv2dKernel> then_; ///< the depthwise layer absorbed, if any
  int64_t bandRows_ = 0;               ///< its output rows per band
  size_t bandFloats_ = 0;              ///< floats of one band's expanded rows
};

/// Input channels from which Winograd beats the strip kernel. 16 holds on
/// one thread (unet_small 3.03 to 2.82 ms) and, since every tile runs on
/// the vector path, on two (unet_small 1.65 to 1.44 ms, yolo_small 1.37 to
/// 1.31 ms; at 32, as before, the strip kernel took the 16-channel layers).
constexpr int64_t kMinWinogradChannels = 16;

llvm::Expected<std::unique_ptr<OpKernel>> makeConv(const CallNode &c,
                                                   const KernelBuildContext &ctx) {
  if (hasPaddingMode(c))
    return makePaddedConv(c, ctx);
  auto g = geometry(c, false);
  if (!g)
    return g.takeError();
  auto w = weightTensor(c, "weight", true, WeightUse::ReadOnly);
  if (!w)
    return w.takeError();
  auto b = weightTensor(c, "bias", false);
  if (!b)
    return b.takeError();
  if (w->numel() != g->OC * (g->C / g->G) * g->KH * g->KW)
    return kernelError(c, "weight shape " + shapeToString(w->shape()) +
                              " does not match the convolution");
  // Winograd pays off once there are enough channels to amortize the
  // transforms; KC_CONV_ALGO=im2col turns it off (for measurements).
  const char *algo = std::getenv("KC_CONV_ALGO");
  bool winograd = !(algo && std::string(algo) == "im2col") && g->KH == 3 && g->KW == 3 &&
                  g->SH == 1 && g->SW == 1 && g->DH == 1 && g->DW == 1 && g->G == 1 &&
                  g->C >= kMinWinogradChannels && g->OC >= 16 && g->OH * g->OW >= 64;
  if (winograd) {
    return makeWinograd43(g->N, g->C, g->H, g->W, g->OC, g->OH, g->OW, g->PH, g->PW,
                          std::move(*w), std::move(*b), c.weight("weight")->data());
  }
  return std::unique_ptr<OpKernel>(
      new Conv2dKernel(*g, std::move(*w), std::move(*b), c.weight("weight")->data()));
}

/// nn.ConvTranspose1d/2d: a GEMM with the transposed weights gives each
/// input pixel's contribution to a KH×KW window; col2im scatters them.
class ConvTranspose2dKernel final : public FusableKernel {
public:
  ConvTranspose2dKernel(ConvGeometry g, Tensor w, Tensor b)
      : g_(g), w_(std::move(w)), b_(std::move(b)) {
    Cg_ = g.C / g.G;
    OCg_ = g.OC / g.G;
    rows_ = OCg_ * g.KH * g.KW;
  }
  size_t workspaceBytes() const override {
    return size_t(rows_ * g_.H * g_.W) * sizeof(float);
  }
  void run(llvm::ArrayRef<const Tensor *> in, llvm::ArrayRef<Tensor *> out,
           ExecContext &ctx) override {
    const ConvGeometry &g = g_;
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    int64_t HWin = g.H * g.W, HW = g.OH * g.OW;
    float *col = static_cast<float *>(ctx.workspace);
    std::memset(y, 0, out[0]->nbytes());
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t grp = 0; grp < g.G; ++grp) {
        const float *xg = x + (n * g.C + grp * Cg_) * HWin;
        float *yg = y + (n * g.OC + grp * OCg_) * HW;
        sgemm(true, false, int(rows_), int(HWin), int(Cg_), 1.f,
                    w_.data<float>() + grp * Cg_ * rows_, int(rows_), xg, int(HWin), 0.f, col,
                    int(HWin));
        parallelFor(OCg_, true, [&](int64_t oc) {
          for (int64_t kh = 0; kh < g.KH; ++kh)
            for (int64_t kw = 0; kw < g.KW; ++kw) {
              const float *src = col + ((oc * g.KH + kh) * g.KW + kw) * HWin;
              float *dst = yg + oc * HW;
              // Input columns whose output column iw*SW + off lies in the
              // output row.
              int64_t off = kw * g.DW - g.PW;
              auto [lo, hi] = insideRange(off, g.SW, g.W, g.OW);
              for (int64_t ih = 0; ih < g.H; ++ih) {
                int64_t oh = ih * g.SH - g.PH + kh * g.DH;
                if (oh < 0 || oh >= g.OH)
                  continue;
                float *drow = dst + oh * g.OW + off + lo * g.SW;
                const float *srow = src + ih * g.W + lo;
                if (g.SW == 2)
                  for (int64_t j = 0; j < hi - lo; ++j)
                    drow[2 * j] += srow[j];
                else
                  for (int64_t j = 0; j < hi - lo; ++j)
                    drow[j * g.SW] += srow[j];
              }
            }
        });
        const float *bias = b_.defined() && b_.numel() ? b_.data<float>() + grp * OCg_ : nullptr;
        biasActivation(yg, OCg_, HW, bias, act_, slope_);
      }
  }

private:
  ConvGeometry g_;
  Tensor w_, b_;
  int64_t Cg_, OCg_, rows_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeConvTranspose(const CallNode &c,
                                                            const KernelBuildContext &) {
  auto g = geometry(c, true);
  if (!g)
    return g.takeError();
  auto w = weightTensor(c, "weight", true, WeightUse::ReadOnly);
  if (!w)
    return w.takeError();
  auto b = weightTensor(c, "bias", false);
  if (!b)
    return b.takeError();
  if (w->numel() != g->C * (g->OC / g->G) * g->KH * g->KW)
    return kernelError(c, "weight shape " + shapeToString(w->shape()) +
                              " does not match the transposed convolution");
  return std::unique_ptr<OpKernel>(new ConvTranspose2dKernel(*g, std::move(*w), std::move(*b)));
}

} // namespace

KC_REGISTER_KERNEL(conv1d, "nn.Conv1d", makeConv);
KC_REGISTER_KERNEL(conv2d, "nn.Conv2d", makeConv);
KC_REGISTER_KERNEL(convt1d, "nn.ConvTranspose1d", makeConvTranspose);
KC_REGISTER_KERNEL(convt2d, "nn.ConvTranspose2d", makeConvTranspose);

} // namespace kc::rt
