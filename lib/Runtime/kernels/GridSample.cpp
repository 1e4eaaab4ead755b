//===- GridSample.cpp - F.grid_sample and F.affine_grid -------------------===//
//
// PyTorch's grid sampler: grid coordinates in [-1, 1] are unnormalized
// (align_corners: -1 and 1 are the corner pixels' centres; otherwise their
// outer edges), then, for bilinear and nearest, clipped (border) or
// reflected and clipped (reflection); a tap outside the input reads 0.
// Nearest rounds half to even. Bicubic unnormalizes only and applies the
// padding to each of its 16 taps, with A = -0.75. 5-d inputs take
// bilinear (trilinear) and nearest.
//
//===----------------------------------------------------------------------===//
#include "Operands.h"
#include "Parallel.h"

#include <cmath>

namespace kc::rt {
namespace {

enum class Pad { Zeros, Border, Reflection };
enum class Interp { Bilinear, Nearest, Bicubic };

float unnormalize(float coord, int64_t size, bool align) {
  return align ? (coord + 1) / 2 * float(size - 1) : ((coord + 1) * float(size) - 1) / 2;
}

float clip(float x, int64_t size) { return std::min(float(size - 1), std::max(x, 0.f)); }

/// Reflects x into [low, high] given as twice their values.
float reflect(float x, int64_t twiceLow, int64_t twiceHigh) {
  if (twiceLow == twiceHigh)
    return 0;
  float lo = float(twiceLow) / 2, span = float(twiceHigh - twiceLow) / 2;
  x = std::fabs(x - lo);
  float extra = std::fmod(x, span);
  int flips = int(std::floor(x / span));
  return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

/// The padding applied to a (unnormalized) coordinate.
float applyPad(float x, int64_t size, Pad pad, bool align) {
  if (pad == Pad::Border)
    return clip(x, size);
  if (pad == Pad::Reflection) {
    x = align ? reflect(x, 0, 2 * (size - 1)) : reflect(x, -1, 2 * size - 1);
    return clip(x, size);
  }
  return x;
}

float cubicInner(float x, float A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
float cubicOuter(float x, float A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

void cubicWeights(float t, float w[4]) {
  const float A = -0.75f;
  w[0] = cubicOuter(t + 1, A), w[1] = cubicInner(t, A), w[2] = cubicInner(1 - t, A),
  w[3] = cubicOuter(2 - t, A);
}

class GridSampleKernel final : public OpKernel {
public:
  GridSampleKernel(std::vector<int64_t> in, std::vector<int64_t> out, Interp interp, Pad pad,
                   bool align)
      : in_(std::move(in)), out_(std::move(out)), interp_(interp), pad_(pad), align_(align) {}
  void run(llvm::ArrayRef<const Tensor *> in, llvm::ArrayRef<Tensor *> out,
           ExecContext &) const override {
    const float *x = in[0]->data<float>(), *grid = in[1]->data<float>();
    float *y = out[0]->data<float>();
    bool volume = in_.size() == 5;
    const int64_t N = in_[0], C = in_[1];
    const int64_t D = volume ? in_[2] : 1, H = in_[in_.size() - 2], W = in_.back();
    const int64_t points = numElements(llvm::ArrayRef<int64_t>(out_).drop_front(2));
    const int k = volume ? 3 : 2;
    parallelFor(N * points, N * points * C > 16384, [&](int64_t np) {
      int64_t n = np / points, q = np % points;
      const float *g = grid + np * k;
      float gx = unnormalize(g[0], W, align_), gy = unnormalize(g[1], H, align_);
      float gz = volume ? unnormalize(g[2], D, align_) : 0.f;
      const float *xn = x + n * C * D * H * W;
      float *yn = y + n * C * points + q;
      if (interp_ == Interp::Bicubic)
        return bicubic(xn, yn, gx, gy, C, H, W, points);
      gx = applyPad(gx, W, pad_, align_);
      gy = applyPad(gy, H, pad_, align_);
      if (volume)
        gz = applyPad(gz, D, pad_, align_);
      auto inside = [&](int64_t z, int64_t yy, int64_t xx) {
        return z >= 0 && z < D && yy >= 0 && yy < H && xx >= 0 && xx < W;
      };
      if (interp_ == Interp::Nearest) {
        int64_t ix = int64_t(std::nearbyint(gx)), iy = int64_t(std::nearbyint(gy));
        int64_t iz = volume ? int64_t(std::nearbyint(gz)) : 0;
        bool ok = inside(iz, iy, ix);
        for (int64_t ch = 0; ch < C; ++ch)
          yn[ch * points] = ok ? xn[((ch * D + iz) * H + iy) * W + ix] : 0.f;
        return;
      }
      // Bilinear (trilinear): the 4 (8) corners around the point.
      int64_t x0 = int64_t(std::floor(gx)), y0 = int64_t(std::floor(gy));
      int64_t z0 = volume ? int64_t(std::floor(gz)) : 0;
      float fx = gx - float(x0), fy = gy - float(y0), fz = volume ? gz - float(z0) : 0.f;
      int64_t off[8];
      float w[8];
      int taps = 0;
      for (int dz = 0; dz < (volume ? 2 : 1); ++dz)
        for (int dy = 0; dy < 2; ++dy)
          for (int dx = 0; dx < 2; ++dx) {
            int64_t zz = z0 + dz, yy = y0 + dy, xx = x0 + dx;
            float wt = (dx ? fx : 1 - fx) * (dy ? fy : 1 - fy) * (volume ? (dz ? fz : 1 - fz) : 1);
            if (!inside(zz, yy, xx))
              continue;
            off[taps] = (zz * H + yy) * W + xx;
            w[taps++] = wt;
          }
      for (int64_t ch = 0; ch < C; ++ch) {
        const float *xc = xn + ch * D * H * W;
        float acc = 0;
        for (int t = 0; t < taps; ++t)
          acc += xc[off[t]] * w[t];
        yn[ch * points] = acc;
      }
    });
  }

private:
  void bicubic(const float *xn, float *yn, float gx, float gy, int64_t C, int64_t H, int64_t W,
               int64_t points) const {
    float fx0 = std::floor(gx), fy0 = std::floor(gy);
    float wx[4], wy[4];
    cubicWeights(gx - fx0, wx);
    cubicWeights(gy - fy0, wy);
    int64_t off[16];
    float w[16];
    int taps = 0;
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) {
        // Each tap takes the padding of its own coordinate.
        float tx = applyPad(fx0 - 1 + float(i), W, pad_, align_);
        float ty = applyPad(fy0 - 1 + float(j), H, pad_, align_);
        int64_t ix = int64_t(tx), iy = int64_t(ty);
        if (tx < 0 || ty < 0 || ix >= W || iy >= H)
          continue;
        off[taps] = iy * W + ix;
        w[taps++] = wx[i] * wy[j];
      }
    for (int64_t ch = 0; ch < C; ++ch) {
      const float *xc = xn + ch * H * W;
      float acc = 0;
      for (int t = 0; t < taps; ++t)
        acc += xc[off[t]] * w[t];
      yn[ch * points] = acc;
    }
  }

  std::vector<int64_t> in_, out_;
  Interp interp_;
  Pad pad_;
  bool align_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeGridSample(const CallNode &c,
                                                         const KernelBuildContext &) {
  auto in = inputShape(c, 0);
  if (!in)
    return in.takeError();
  auto out = outputShape(c);
  if (!out)
    return out.takeError();
  if (auto e = requireF32(c, {0, 1}))
    return e;
  std::string mode = c.attrs().getString("mode", "bilinear"),
              pad = c.attrs().getString("padding_mode", "zeros");
  Interp interp;
  if (mode == "bilinear")
    interp = Interp::Bilinear;
  else if (mode == "nearest")
    interp = Interp::Nearest;
  else if (mode == "bicubic" && in->size() == 4)
    interp = Interp::Bicubic;
  else
    return kernelError(c, "mode '" + mode + "' is not supported for " + shapeToString(*in));
  Pad p;
  if (pad == "zeros")
    p = Pad::Zeros;
  else if (pad == "border")
    p = Pad::Border;
  else if (pad == "reflection")
    p = Pad::Reflection;
  else
    return kernelError(c, "padding_mode '" + pad + "' is not supported");
  if (in->size() != 4 && in->size() != 5)
    return kernelError(c, "expects a 4-d or 5-d input, got " + shapeToString(*in));
  return std::unique_ptr<OpKernel>(
      new GridSampleKernel(*in, *out, interp, p, c.attrs().getBool("align_corners", false)));
}
KC_REGISTER_KERNEL(grid_sample, "F.grid_sample", makeGridSample);

/// F.affine_grid: grid[n, ..., :] = theta[n] @ (x, y[, z], 1) over the
/// base grid of the output size.
class AffineGridKernel final : public OpKernel {
public:
  AffineGridKernel(std::vector<int64_t> size, bool align) : size_(std::move(size)), align_(align) {}
  void run(llvm::ArrayRef<const Tensor *> in, llvm::ArrayRef<Tensor *> out,
           ExecContext &) const override {
    const float *theta = in[0]->data<float>();
    float *g = out[0]->data<float>();
    bool volume = size_.size() == 5;
    const int k = volume ? 3 : 2;
    const int64_t N = size_[0], D = volume ? size_[2] : 1, H = size_[size_.size() - 2],
                  W = size_.back();
    auto base = [&](int64_t i, int64_t n) {
      if (n <= 1)
        return 0.f;
      float v = -1.f + 2.f * float(i) / float(n - 1);
      return align_ ? v : v * float(n - 1) / float(n);
    };
    for (int64_t b = 0; b < N; ++b) {
      const float *t = theta + b * k * (k + 1);
      for (int64_t z = 0; z < D; ++z)
        for (int64_t yy = 0; yy < H; ++yy)
          for (int64_t xx = 0; xx < W; ++xx) {
            float p[4] = {base(xx, W), base(yy, H), volume ? base(z, D) : 1.f, 1.f};
            for (int r = 0; r < k; ++r) {
              float acc = 0;
              for (int j = 0; j <= k; ++j)
                acc += t[r * (k + 1) + j] * p[j];
              *g++ = acc;
            }
          }
    }
  }

private:
  std::vector<int64_t> size_;
  bool align_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeAffineGrid(const CallNode &c,
                                                         const KernelBuildContext &) {
  if (auto e = requireF32(c))
    return e;
  std::vector<int64_t> size = c.attrs().getInts("size");
  if (size.size() != 4 && size.size() != 5)
    return kernelError(c, "size must have 4 or 5 entries");
  auto out = outputShape(c);
  if (!out)
    return out.takeError();
  return std::unique_ptr<OpKernel>(
      new AffineGridKernel(size, c.attrs().getBool("align_corners", false)));
}
KC_REGISTER_KERNEL(affine_grid, "F.affine_grid", makeAffineGrid);

} // namespace
} // namespace kc::rt
