//===- Resample.cpp - Interpolation over 1 to 3 spatial dims --------------===//
//
// Separable resampling: along each spatial dim every output index reads
// 1 (nearest), 2 (linear) or 4 (cubic) input indices with weights, all
// computed at load time with PyTorch's source-index rules and precision:
// the scale in float (a given scale_factor is used as 1/scale unless
// recompute_scale_factor, else in/out; align_corners uses (in-1)/(out-1)),
// the linear and cubic source index from it in double (in float, indices
// past ~1000 move by an ulp and the result by up to 3e-4);
// linear modes clamp the source index at 0, cubic ones clamp each tap to
// the input (A = -0.75). Fewer spatial dims are padded to three of size 1.
// The last dim is the inner loop, over contiguous output.
//
//===----------------------------------------------------------------------===//
#include "Resample.h"
#include "Operands.h"
#include "Parallel.h"
#include "kc/Support/FloatToInt.h"

#include <cmath>

namespace kc::rt {
namespace {

double cubicInner(double x, double A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
double cubicOuter(double x, double A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

} // namespace

ResampleAxis resampleAxis(ResampleMode mode, int64_t in, int64_t out, bool align,
                          double scaleFactor) {
  using Mode = ResampleMode;
  ResampleAxis a;
  // area_pixel_compute_scale
  float scale;
  if (align && mode != Mode::Nearest && mode != Mode::NearestExact)
    scale = out > 1 ? float(in - 1) / float(out - 1) : 0.f;
  else
    scale = scaleFactor > 0 ? float(1.0 / scaleFactor) : float(in) / float(out);
  a.T = mode == Mode::Cubic ? 4 : mode == Mode::Linear ? 2 : 1;
  for (int64_t o = 0; o < out; ++o) {
    switch (mode) {
    case Mode::Nearest:
    case Mode::NearestExact: {
      float src = mode == Mode::Nearest ? std::floor(float(o) * scale)
                                        : std::floor((float(o) + 0.5f) * scale);
      a.idx.push_back(clampedIndex(src, 0, in - 1));
      a.w.push_back(1.f);
      break;
    }
    case Mode::Linear: {
      double src = align ? double(scale) * double(o)
                         : std::max(double(scale) * (double(o) + 0.5) - 0.5, 0.0);
      int64_t i0 = clampedIndex(src, 0, in - 1);
      int64_t i1 = std::min<int64_t>(i0 + 1, in - 1);
      float l = float(std::min(src - double(i0), 1.0));
      a.idx.push_back(i0), a.idx.push_back(i1);
      a.w.push_back(1.f - l), a.w.push_back(l);
      break;
    }
    case Mode::Cubic: {
      double src = align ? double(scale) * double(o) : double(scale) * (double(o) + 0.5) - 0.5;
      double f = std::floor(src);
      double t = src - f;
      const double A = -0.75;
      double w[4] = {cubicOuter(t + 1, A), cubicInner(t, A), cubicInner(1 - t, A),
                     cubicOuter(2 - t, A)};
      for (int k = 0; k < 4; ++k) {
        a.idx.push_back(std::clamp<int64_t>(clampedIndex(f, -2, in) - 1 + k, 0, in - 1));
        a.w.push_back(float(w[k]));
      }
      break;
    }
    }
  }
  return a;
}

namespace {

/// Separable: each input row the output needs is resampled along W once,
/// into a cache of T rows per depth tap (the taps of consecutive output
/// rows are consecutive input rows, so row r lives in slot r mod T), and
/// each output row is the weighted sum of its taps' cached rows.
class ResampleKernel final : public OpKernel {
public:
  ResampleKernel(int64_t planes, std::array<int64_t, 3> in, std::array<ResampleAxis, 3> axes)
      : planes_(planes), in_(in), ax_(std::move(axes)) {
    for (int i = 0; i < 3; ++i)
      out_[i] = int64_t(ax_[i].idx.size()) / ax_[i].T;
    scratch_.floats = int64_t(ax_[0].T) * ax_[1].T * out_[2];
    // A W axis that maps each column to itself with weight 1 (a size kept
    // while other dims change) is a copy.
    const ResampleAxis &C = ax_[2];
    copyW_ = out_[2] == in_[2];
    for (int64_t o = 0; copyW_ && o < out_[2]; ++o)
      for (int t = 0; t < C.T; ++t)
        copyW_ = C.w[o * C.T + t] == (t == 0 ? 1.f : 0.f) && (t > 0 || C.idx[o * C.T] == o);
  }
  size_t workspaceBytes() const override { return scratch_.bytes(); }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    const int64_t inPlane = in_[0] * in_[1] * in_[2], outPlane = out_[0] * out_[1] * out_[2];
    const ResampleAxis &A = ax_[0], &B = ax_[1], &C = ax_[2];
    const int64_t OW = out_[2];
    const int Tw = C.T, Th = B.T;
    const int64_t *wi = C.idx.data();
    const float *ww = C.w.data();
    parallelForScratch(
        planes_ * out_[0], planes_ * outPlane > 32768, scratch_, ctx.workspace,
        [&](int64_t pd, float *cache) {
          int64_t p = pd / out_[0], od = pd % out_[0];
          const float *src = x + p * inPlane;
          // Input row held by each cache slot, per depth tap.
          int64_t held[4][4];
          for (auto &h : held)
            std::fill(h, h + 4, int64_t(-1));
          for (int64_t oh = 0; oh < out_[1]; ++oh) {
            float *dst = y + p * outPlane + (od * out_[1] + oh) * OW;
            bool first = true;
            for (int td = 0; td < A.T; ++td)
              for (int th = 0; th < Th; ++th) {
                int64_t r = B.idx[oh * Th + th];
                int slot = int(r % Th);
                float *row = cache + (td * Th + slot) * OW;
                if (held[td][slot] != r) {
                  const float *in = src + (A.idx[od * A.T + td] * in_[1] + r) * in_[2];
                  if (copyW_)
                    std::copy(in, in + OW, row);
                  else
                  for (int64_t ow = 0; ow < OW; ++ow) {
                    float acc = 0;
                    for (int tw = 0; tw < Tw; ++tw)
                      acc += ww[ow * Tw + tw] * in[wi[ow * Tw + tw]];
                    row[ow] = acc;
                  }
                  held[td][slot] = r;
                }
                float w = A.w[od * A.T + td] * B.w[oh * Th + th];
                if (w == 0.f && !(first && td == A.T - 1 && th == Th - 1))
                  continue; // a tap of weight 0 (the last one stands in if all are)
                if (first)
                  for (int64_t ow = 0; ow < OW; ++ow)
                    dst[ow] = w * row[ow];
                else
                  for (int64_t ow = 0; ow < OW; ++ow)
                    dst[ow] += w * row[ow];
                first = false;
              }
          }
        });
  }

private:
  int64_t planes_;
  std::array<int64_t, 3> in_, out_;
  std::array<ResampleAxis, 3> ax_;
  ThreadScratch scratch_;
  bool copyW_ = false; ///< the W axis is the identity
};

} // namespace

llvm::Expected<std::unique_ptr<OpKernel>> makeResample(const CallNode &c, const CallShapes &io) {
  const std::vector<int64_t> &in = io.in, &out = io.out;
  if (in.size() < 3 || in.size() > 5 || out.size() != in.size())
    return kernelError(c, "expects (N, C) and 1 to 3 spatial dims, got " + shapeToString(in));
  size_t n = in.size() - 2;
  std::string m = c.attrs().getString("mode", "nearest");
  ResampleMode mode;
  size_t wantDims = 0; // the spatial dims a mode needs (0: any)
  if (m == "nearest")
    mode = ResampleMode::Nearest;
  else if (m == "nearest-exact")
    mode = ResampleMode::NearestExact;
  else if (m == "linear")
    mode = ResampleMode::Linear, wantDims = 1;
  else if (m == "bilinear")
    mode = ResampleMode::Linear, wantDims = 2;
  else if (m == "trilinear")
    mode = ResampleMode::Linear, wantDims = 3;
  else if (m == "bicubic")
    mode = ResampleMode::Cubic, wantDims = 2;
  else
    return kernelError(c, "mode '" + m + "' is not supported");
  if (wantDims && wantDims != n)
    return kernelError(c, "mode '" + m + "' needs " + llvm::Twine(wantDims) +
                              " spatial dims, got " + shapeToString(in));
  bool align = c.attrs().getBool("align_corners", false);
  std::vector<double> sf = c.attrs().getFloats("scale_factor");
  if (c.attrs().getBool("recompute_scale_factor", false))
    sf.clear();
  if (sf.size() == 1)
    sf.assign(n, sf[0]);
  if (!sf.empty() && sf.size() != n)
    return kernelError(c, "scale_factor has " + llvm::Twine(sf.size()) + " entries for " +
                              llvm::Twine(n) + " spatial dims");
  std::array<int64_t, 3> inDims = {1, 1, 1};
  std::array<ResampleAxis, 3> axes;
  size_t lead = 3 - n;
  for (size_t i = 0; i < 3; ++i) {
    if (i < lead) {
      axes[i] = resampleAxis(ResampleMode::Nearest, 1, 1, false, 0);
      continue;
    }
    int64_t a = in[2 + i - lead], b = out[2 + i - lead];
    inDims[i] = a;
    axes[i] = resampleAxis(mode, a, b, align, sf.empty() ? 0.0 : sf[i - lead]);
  }
  return std::unique_ptr<OpKernel>(new ResampleKernel(in[0] * in[1], inDims, std::move(axes)));
}

} // namespace kc::rt
