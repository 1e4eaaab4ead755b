//===- Patches.cpp - Gathering a convolution's input patches --------------===//
#include "Patches.h"
#include "../PackedGemm.h"
#include "../Copy.h"

#include "llvm/ADT/SmallVector.h"

#include <cstring>

namespace kc::rt {
namespace {

/// out[i] = in[i*stride] for i in [0, n); a compile-time stride (S > 0)
/// lets the compiler vectorize the common stride-2 case.
template <int S> void gatherStrided(float *out, const float *in, int64_t n, int64_t stride) {
  int64_t st = S > 0 ? S : stride;
  for (int64_t i = 0; i < n; ++i)
    out[i] = in[i * st];
}

} // namespace

void splitColumns(const float *in, float *out, int64_t rows, int64_t W, bool parallel) {
  int64_t We = (W + 1) / 2;
  parallelFor(rows, parallel && rows * W > 65536, [&](int64_t r) {
    const float *s = in + r * W;
    float *e = out + r * W, *o = e + We;
    splitPairs(s, e, o, W / 2);
    if (W % 2)
      e[We - 1] = s[W - 1];
  });
}

namespace {
/// n zeros: a plain loop, as the runs of padding are a few floats (a
/// std::fill became a memset call per run).
inline void zeroShort(float *p, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    p[i] = 0.f;
}
} // namespace

void gatherPatches(const float *in, float *col, int64_t ld, int64_t c0, int64_t c1,
                   const ConvGeometry &g, int64_t n0, int64_t cols, bool split) {
  // The positions as runs within one output row, and for each tap column
  // what a run reads: `zeros` of padding, `n` input columns from `src`
  // (an offset in the input row, or in its split form), the rest padding.
  // The same for every channel and tap row, so worked out once: per run
  // and tap they had cost more than the copies on planes of 17 columns.
  struct Run {
    int64_t oh, ow0, j0, len;
  };
  struct Piece {
    int64_t zeros, n, src;
  };
  llvm::SmallVector<Run, 8> runs;
  for (int64_t p = n0; p < n0 + cols;) {
    int64_t oh = p / g.OW, ow0 = p % g.OW, ow1 = std::min(g.OW, ow0 + (n0 + cols - p));
    runs.push_back({oh, ow0, p - n0, ow1 - ow0});
    p += ow1 - ow0;
  }
  llvm::SmallVector<Piece, 32> pieces; // [kw][run]
  for (int64_t kw = 0; kw < g.KW; ++kw) {
    int64_t off = kw * g.DW - g.PW;
    auto [lo, hi] = insideRange(off, g.SW, g.OW, g.W);
    for (const Run &r : runs) {
      int64_t a = std::clamp(lo, r.ow0, r.ow0 + r.len), b = std::clamp(hi, a, r.ow0 + r.len);
      int64_t src = a * g.SW + off;
      if (split) // columns of one parity lie together: evens, then odds
        src = (src % 2 ? (g.W + 1) / 2 : 0) + src / 2;
      pieces.push_back({a - r.ow0, b - a, src});
    }
  }
  const int64_t nRuns = int64_t(runs.size());
  for (int64_t c = c0; c < c1; ++c)
    for (int64_t kh = 0; kh < g.KH; ++kh) {
      const float *src = in + c * g.H * g.W;
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        float *dst = col + ((c * g.KH + kh) * g.KW + kw) * ld;
        const Piece *piece = pieces.data() + kw * nRuns;
        for (int64_t i = 0; i < nRuns; ++i) {
          const Run &r = runs[size_t(i)];
          const Piece &q = piece[i];
          float *row = dst + r.j0;
          int64_t ih = r.oh * g.SH - g.PH + kh * g.DH;
          if (ih < 0 || ih >= g.H) {
            zeroShort(row, r.len);
            continue;
          }
          zeroShort(row, q.zeros);
          float *out = row + q.zeros;
          if (q.n > 0) { // else q.src may lie outside the row
            const float *srow = src + ih * g.W + q.src;
            if (split || g.SW == 1)
              copyShortRow(out, srow, q.n);
            else if (g.SW == 2)
              gatherStrided<2>(out, srow, q.n, 2);
            else
              gatherStrided<0>(out, srow, q.n, g.SW);
          }
          zeroShort(out + q.n, r.len - q.zeros - q.n);
        }
      }
    }
}

void gatherPatchStrip(const float *in, int64_t Cg, const ConvGeometry &g, int64_t n0, int64_t cols,
                      float *strip, float *scratch) {
  constexpr int64_t S = kColumnStrip;
  int64_t taps = g.KH * g.KW;
  int64_t *offsets = reinterpret_cast<int64_t *>(scratch);
  for (int64_t j = 0; j < S; ++j) {
    int64_t oh = (n0 + j) / g.OW, ow = (n0 + j) % g.OW;
    for (int64_t kh = 0; kh < g.KH; ++kh)
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        int64_t ih = oh * g.SH - g.PH + kh * g.DH, iw = ow * g.SW - g.PW + kw * g.DW;
        bool inside = j < cols && ih >= 0 && ih < g.H && iw >= 0 && iw < g.W;
        offsets[(kh * g.KW + kw) * S + j] = inside ? ih * g.W + iw : -1;
      }
  }
  const int64_t *off = offsets;
  for (int64_t c = 0; c < Cg; ++c) {
    const float *plane = in + c * g.H * g.W;
    float *o = strip + c * taps * S;
    for (int64_t i = 0; i < taps * S; ++i)
      o[i] = off[i] >= 0 ? plane[off[i]] : 0.f;
  }
}

void im2col(const float *in, float *col, int64_t Cg, const ConvGeometry &g, int64_t oh0,
            int64_t oh1, bool parallel) {
  int64_t cols = (oh1 - oh0) * g.OW;
  parallelFor(Cg, parallel && Cg * g.KH * g.KW * cols > 32768, [&](int64_t c) {
    gatherPatches(in, col, cols, c, c + 1, g, oh0 * g.OW, cols);
  });
}

} // namespace kc::rt
