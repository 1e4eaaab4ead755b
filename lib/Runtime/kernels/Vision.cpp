//===- Vision.cpp - torchvision's RoIAlign and DeformConv2d ---------------===//
//
// As torchvision's CPU kernels compute them, in float. RoIAlign averages,
// per output bin, a grid of bilinear samples (sampling_ratio per side, or
// ceil(bin size) when it is not positive); aligned shifts the boxes by
// half a pixel, unaligned ones are at least 1 pixel wide. DeformConv2d
// samples each kernel tap at its offset position (bilinearly, 0 outside),
// times the mask when given, into columns that one sgemm per group
// multiplies with the weights.
//
//===----------------------------------------------------------------------===//
#include "Blas.h"
#include "Operands.h"
#include "Parallel.h"

#include "kc/IR/WindowAttrs.h"
#include "kc/Support/FloatToInt.h"

namespace kc::rt {
namespace {

/// torchvision's RoIAlign sampler: 0 beyond one pixel outside, clamped
/// at the borders. A NaN position (a NaN box) reads 0, as outside: there
/// torchvision converts NaN to an index and crashes.
float roiBilinear(const float *plane, int64_t H, int64_t W, float y, float x) {
  if (!(y >= -1.f && y <= float(H) && x >= -1.f && x <= float(W)))
    return 0.f;
  y = std::max(y, 0.f), x = std::max(x, 0.f);
  int64_t y0 = clampedIndex(y, 0, H - 1), x0 = clampedIndex(x, 0, W - 1), y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= H - 1)
    y1 = y0, y = float(y0);
  if (x0 >= W - 1)
    x1 = x0, x = float(x0);
  float ly = y - float(y0), lx = x - float(x0), hy = 1 - ly, hx = 1 - lx;
  return hy * hx * plane[y0 * W + x0] + hy * lx * plane[y0 * W + x1] +
         ly * hx * plane[y1 * W + x0] + ly * lx * plane[y1 * W + x1];
}

/// Samples per side of a bin: sampling_ratio, or torchvision's int of
/// ceil(bin size), which is INT32_MIN (no sample, hence 0) for a bin that
/// is NaN, infinite or wider than int32 (x86-64's conversion).
int64_t roiGrid(int64_t ratio, float binSize) {
  return ratio > 0 ? ratio : torchCast<int32_t>(std::ceil(binSize));
}

class RoiAlignKernel final : public OpKernel {
public:
  RoiAlignKernel(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t OH, int64_t OW,
                 float scale, int64_t ratio, bool aligned)
      : N_(N), C_(C), H_(H), W_(W), K_(K), OH_(OH), OW_(OW), scale_(scale), ratio_(ratio),
        aligned_(aligned) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>(), *rois = in[1]->data<float>();
    float *y = out[0]->data<float>();
    const float off = aligned_ ? 0.5f : 0.f;
    for (int64_t k = 0; k < K_; ++k) {
      const float *r = rois + k * 5;
      // A batch index that is NaN or names no image gives zeros.
      std::optional<int64_t> b = truncToInt64(r[0]);
      float sw = r[1] * scale_ - off, sh = r[2] * scale_ - off;
      float rw = r[3] * scale_ - off - sw, rh = r[4] * scale_ - off - sh;
      if (!aligned_)
        rw = std::max(rw, 1.f), rh = std::max(rh, 1.f);
      float bh = rh / float(OH_), bw = rw / float(OW_);
      int64_t gh = roiGrid(ratio_, rh / float(OH_)), gw = roiGrid(ratio_, rw / float(OW_));
      float count = float(std::max<int64_t>(gh * gw, 1));
      bool valid = b && *b >= 0 && *b < N_;
      for (int64_t ch = 0; ch < C_; ++ch) {
        const float *plane = valid ? x + (*b * C_ + ch) * H_ * W_ : nullptr;
        for (int64_t ph = 0; ph < OH_; ++ph)
          for (int64_t pw = 0; pw < OW_; ++pw) {
            float sum = 0;
            for (int64_t iy = 0; iy < gh && valid; ++iy) {
              float yy = sh + float(ph) * bh + (float(iy) + .5f) * bh / float(gh);
              for (int64_t ix = 0; ix < gw; ++ix) {
                float xx = sw + float(pw) * bw + (float(ix) + .5f) * bw / float(gw);
                sum += roiBilinear(plane, H_, W_, yy, xx);
              }
            }
            y[((k * C_ + ch) * OH_ + ph) * OW_ + pw] = sum / count;
          }
      }
    }
  }

private:
  int64_t N_, C_, H_, W_, K_, OH_, OW_;
  float scale_;
  int64_t ratio_;
  bool aligned_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeRoiAlign(const CallNode &c, const CallShapes &io) {
  const std::vector<int64_t> &in = io.in, &out = io.out;
  auto rois = inputShape(c, 1);
  if (!rois)
    return rois.takeError();
  if (in.size() != 4 || rois->size() != 2 || (*rois)[1] != 5 || out.size() != 4)
    return kernelError(c, "expects (N, C, H, W) and (K, 5) boxes");
  if (in[2] == 0 || in[3] == 0)
    return kernelError(c, "the input " + shapeToString(in) + " has no pixel to sample");
  return std::unique_ptr<OpKernel>(new RoiAlignKernel(
      in[0], in[1], in[2], in[3], (*rois)[0], out[2], out[3],
      float(c.attrs().getFloat("spatial_scale", 1.0)), c.attrs().getInt("sampling_ratio", -1),
      c.attrs().getBool("aligned", false)));
}
KC_REGISTER_KERNEL(roi_align, "torchvision.ops.RoIAlign", withShapes<makeRoiAlign>);

/// torchvision's deformable-convolution sampler: 0 beyond one pixel
/// outside, each corner read only where it is inside. A NaN position
/// gives NaN, as torchvision's NaN weights do.
float deformBilinear(const float *plane, int64_t H, int64_t W, float h, float w) {
  if (std::isnan(h) || std::isnan(w))
    return NAN;
  if (h <= -1 || float(H) <= h || w <= -1 || float(W) <= w)
    return 0.f;
  int64_t h0 = clampedIndex(std::floor(h), -1, H), w0 = clampedIndex(std::floor(w), -1, W),
          h1 = h0 + 1, w1 = w0 + 1;
  float lh = h - float(h0), lw = w - float(w0), hh = 1 - lh, hw = 1 - lw;
  auto at = [&](int64_t yy, int64_t xx) {
    return yy >= 0 && xx >= 0 && yy < H && xx < W ? plane[yy * W + xx] : 0.f;
  };
  return hh * hw * at(h0, w0) + hh * lw * at(h0, w1) + lh * hw * at(h1, w0) + lh * lw * at(h1, w1);
}

class DeformConvKernel final : public OpKernel {
public:
  struct Dims {
    int64_t N, C, H, W, OC, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, G, OG;
  };
  DeformConvKernel(Dims g, Tensor w, Tensor b, bool masked)
      : g_(g), w_(std::move(w)), b_(std::move(b)), masked_(masked) {}
  size_t workspaceBytes() const override {
    return size_t(g_.C * g_.KH * g_.KW * g_.OH * g_.OW) * sizeof(float);
  }
  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const Dims &g = g_;
    const float *x = in[0]->data<float>(), *offset = in[1]->data<float>();
    const float *mask = masked_ ? in[2]->data<float>() : nullptr;
    float *y = out[0]->data<float>(), *col = static_cast<float *>(ctx.workspace);
    const int64_t P = g.OH * g.OW, T = g.KH * g.KW, Cg = g.C / g.G, OCg = g.OC / g.G;
    const int64_t perOffsetGroup = g.C / g.OG;
    for (int64_t n = 0; n < g.N; ++n) {
      const float *off = offset + n * 2 * g.OG * T * P;
      const float *msk = mask ? mask + n * g.OG * T * P : nullptr;
      parallelFor(g.C * T, g.C * T * P > 32768, [&](int64_t row) {
        int64_t ch = row / T, t = row % T, i = t / g.KW, j = t % g.KW, og = ch / perOffsetGroup;
        const float *plane = x + (n * g.C + ch) * g.H * g.W;
        const float *dy = off + (og * 2 * T + 2 * t) * P, *dx = dy + P;
        const float *m = msk ? msk + (og * T + t) * P : nullptr;
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            int64_t p = oh * g.OW + ow;
            float hh = float(oh * g.SH - g.PH + i * g.DH) + dy[p];
            float ww = float(ow * g.SW - g.PW + j * g.DW) + dx[p];
            float v = deformBilinear(plane, g.H, g.W, hh, ww);
            col[row * P + p] = m ? v * m[p] : v;
          }
      });
      for (int64_t grp = 0; grp < g.G; ++grp) {
        float *yg = y + (n * g.OC + grp * OCg) * P;
        sgemm(false, false, OCg, P, Cg * T, 1.f, w_.data<float>() + grp * OCg * Cg * T, Cg * T,
              col + grp * Cg * T * P, P, 0.f, yg, P);
        if (b_.raw())
          for (int64_t oc = 0; oc < OCg; ++oc)
            for (int64_t p = 0; p < P; ++p)
              yg[oc * P + p] += b_.data<float>()[grp * OCg + oc];
      }
    }
  }

private:
  Dims g_;
  Tensor w_, b_;
  bool masked_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeDeformConv(const CallNode &c, const CallShapes &io) {
  const std::vector<int64_t> &in = io.in, &out = io.out;
  auto args = inputShapes(c, 2); // the input, the offsets and perhaps a mask
  if (!args)
    return args.takeError();
  const std::vector<int64_t> &off = (*args)[1];
  bool masked = args->size() > 2;
  Tensor w, b;
  if (llvm::Error e = takeWeights(
          c, {{"weight", &w, true, WeightUse::ReadOnly}, {"bias", &b, false, WeightUse::ReadOnly}}))
    return std::move(e);
  if (in.size() != 4 || w.rank() != 4 || off.size() != 4 || out.size() != 4)
    return kernelError(c, "expects 4-d input, offset and weight");
  auto win = WindowAttrs::from(c, 2, WindowOp::Conv, {w.dim(2), w.dim(3)});
  if (!win)
    return kernelError(c, llvm::toString(win.takeError()));
  const std::vector<int64_t> &s = win->stride, &p = win->padBefore, &d = win->dilation;
  DeformConvKernel::Dims g{in[0],  in[1],    in[2],    in[3],       out[1], out[2],
                           out[3], w.dim(2), w.dim(3), s[0],        s[1],   p[0],
                           p[1],   d[0],     d[1],     win->groups, 1};
  int64_t T = g.KH * g.KW;
  if (g.G <= 0 || g.C % g.G || g.OC % g.G || w.dim(1) != g.C / g.G || w.dim(0) != g.OC)
    return kernelError(c, "weight " + shapeToString(w.shape()) + " does not match the channels");
  if (off[1] % (2 * T) || off[2] != g.OH || off[3] != g.OW)
    return kernelError(c, "offset " + shapeToString(off) + " does not match the kernel");
  g.OG = off[1] / (2 * T);
  if (g.OG <= 0 || g.C % g.OG)
    return kernelError(c, "the offset groups do not divide the channels");
  if (masked && (*args)[2] != std::vector<int64_t>{g.N, g.OG * T, g.OH, g.OW})
    return kernelError(c, "mask " + shapeToString((*args)[2]) + " does not match the offsets");
  return std::unique_ptr<OpKernel>(new DeformConvKernel(g, std::move(w), std::move(b), masked));
}
KC_REGISTER_KERNEL(deform_conv2d, "torchvision.ops.DeformConv2d", withShapes<makeDeformConv>);

} // namespace
} // namespace kc::rt
