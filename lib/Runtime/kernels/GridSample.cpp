//===- GridSample.cpp - F.grid_sample and F.affine_grid -------------------===//
//
// PyTorch's grid sampler: grid coordinates in [-1, 1] are unnormalized
// (align_corners: -1 and 1 are the corner pixels' centres; otherwise their
// outer edges), then, for bilinear and nearest, clipped (border) or
// reflected and clipped (reflection); a tap outside the input reads 0.
// Nearest rounds half to even for 4-d inputs and half away from zero for
// 5-d ones (PyTorch's two samplers differ). Bicubic unnormalizes only and applies the
// padding to each of its 16 taps, with A = -0.75. 5-d inputs take
// bilinear (trilinear) and nearest. Each form follows the PyTorch code
// that runs it, NaN and huge coordinates included (GridCoords.h).
//
//===----------------------------------------------------------------------===//
#include "GridCoords.h"
#include "Operands.h"
#include "Parallel.h"

#include <cmath>

namespace kc::rt {
namespace {

enum class Interp { Bilinear, Nearest, Bicubic };

float cubicInner(float x, float A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
float cubicOuter(float x, float A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

/// PyTorch's get_cubic_upsample_coefficients, A = -0.75.
void cubicWeights(float t, float w[4]) {
  const float A = -0.75f;
  float u = 1 - t;
  w[0] = cubicOuter(t + 1, A), w[1] = cubicInner(t, A), w[2] = cubicInner(u, A),
  w[3] = cubicOuter(u + 1, A);
}

class GridSampleKernel final : public OpKernel {
public:
  GridSampleKernel(std::vector<int64_t> in, std::vector<int64_t> out, Interp interp, GridPad pad,
                   bool align)
      : in_(std::move(in)), out_(std::move(out)), interp_(interp), pad_(pad), align_(align) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>(), *grid = in[1]->data<float>();
    float *y = out[0]->data<float>();
    bool volume = in_.size() == 5;
    const int64_t N = in_[0], C = in_[1];
    const int64_t plane = numElements(llvm::ArrayRef<int64_t>(in_).drop_front(2));
    const int64_t points = numElements(llvm::ArrayRef<int64_t>(out_).drop_front(2));
    const int k = volume ? 3 : 2;
    if (!volume && interp_ != Interp::Bicubic) {
      // Blocks of points: their taps first, then channel by channel, so
      // each channel's plane is read and its output row written in one go.
      constexpr int64_t kPoints = 256;
      const int64_t blocks = (points + kPoints - 1) / kPoints;
      parallelFor(N * blocks, N * points * C > 16384, [&](int64_t nb) {
        int64_t n = nb / blocks, q0 = (nb % blocks) * kPoints, m = std::min(kPoints, points - q0);
        int64_t off[kPoints][4];
        bool ok[kPoints][4];
        float w[kPoints][4];
        int taps = 1;
        bool allInside = true;
        for (int64_t q = 0; q < m; ++q) {
          taps = taps2d(grid + (n * points + q0 + q) * 2, off[q], ok[q], w[q]);
          for (int t = 0; t < taps; ++t)
            allInside = allInside && ok[q][t];
        }
        for (int64_t ch = 0; ch < C; ++ch) {
          const float *xc = x + (n * C + ch) * plane;
          float *yc = y + (n * C + ch) * points + q0;
          if (allInside && taps == 4) {
            for (int64_t q = 0; q < m; ++q)
              yc[q] = ((xc[off[q][0]] * w[q][0] + xc[off[q][1]] * w[q][1]) +
                       xc[off[q][2]] * w[q][2]) +
                      xc[off[q][3]] * w[q][3];
            continue;
          }
          for (int64_t q = 0; q < m; ++q) {
            float acc = 0;
            for (int t = 0; t < taps; ++t)
              acc += (ok[q][t] ? xc[off[q][t]] : 0.f) * w[q][t];
            yc[q] = acc;
          }
        }
      });
      return;
    }
    parallelFor(N * points, N * points * C > 16384, [&](int64_t np) {
      int64_t n = np / points, q = np % points;
      Sample s{x + n * C * plane, y + n * C * points + q, plane, points, C};
      const float *g = grid + np * k;
      if (volume)
        sample3d(s, g);
      else
        bicubic2d(s, g);
    });
  }

private:
  /// One grid point of one image: its input planes and output column.
  struct Sample {
    const float *x;
    float *y;
    int64_t plane, points, C;
  };

  /// Writes, for every channel, the sum of the taps' values times their
  /// weights, a tap outside the input reading 0 (its weight still counts:
  /// a NaN weight makes the sample NaN, as in PyTorch's 4-d sampler).
  static void blend(const Sample &s, const int64_t *off, const bool *ok, const float *w, int taps) {
    for (int64_t ch = 0; ch < s.C; ++ch) {
      const float *xc = s.x + ch * s.plane;
      float acc = 0;
      for (int t = 0; t < taps; ++t)
        acc += (ok[t] ? xc[off[t]] : 0.f) * w[t];
      s.y[ch * s.points] = acc;
    }
  }

  /// The taps of grid point `g` of a 4-d input, bilinear (4) or nearest
  /// (1, PyTorch's vectorized sampler): their offsets in the plane, whether
  /// they are inside it, their weights; returns how many.
  int taps2d(const float *g, int64_t *off, bool *ok, float *w) const {
    const int64_t H = in_[2], W = in_[3];
    GridAxis2d ax{W, pad_, align_}, ay{H, pad_, align_};
    float gx = ax.compute(ax.unnormalize(g[0])), gy = ay.compute(ay.unnormalize(g[1]));
    auto inside = [&](int64_t yy, int64_t xx) { return yy >= 0 && yy < H && xx >= 0 && xx < W; };
    if (interp_ == Interp::Nearest) {
      int64_t ix = gridIndex(std::nearbyint(gx)), iy = gridIndex(std::nearbyint(gy));
      ok[0] = inside(iy, ix);
      off[0] = ok[0] ? iy * W + ix : 0;
      w[0] = 1;
      return 1;
    }
    float fx0 = std::floor(gx), fy0 = std::floor(gy);
    float wx = gx - fx0, ex = 1 - wx, ny = gy - fy0, sy = 1 - ny;
    int64_t x0 = gridIndex(fx0), y0 = gridIndex(fy0);
    w[0] = sy * ex, w[1] = sy * wx, w[2] = ny * ex, w[3] = ny * wx; // nw, ne, sw, se
    for (int t = 0; t < 4; ++t) {
      int64_t yy = y0 + t / 2, xx = x0 + t % 2;
      ok[t] = inside(yy, xx);
      off[t] = ok[t] ? yy * W + xx : 0;
    }
    return 4;
  }

  /// Bicubic of a 4-d input: four rows of four taps, each tap padded on
  /// its own, the rows then weighted (PyTorch's order of sums).
  void bicubic2d(const Sample &s, const float *g) const {
    const int64_t H = in_[2], W = in_[3];
    GridAxis2d ax{W, pad_, align_}, ay{H, pad_, align_};
    float gx = ax.unnormalize(g[0]), gy = ay.unnormalize(g[1]);
    float fx0 = std::floor(gx), fy0 = std::floor(gy);
    float cx[4], cy[4];
    cubicWeights(gx - fx0, cx);
    cubicWeights(gy - fy0, cy);
    int64_t off[16];
    bool ok[16];
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) {
        int64_t ix = gridIndex(ax.compute(fx0 - 1 + float(i)));
        int64_t iy = gridIndex(ay.compute(fy0 - 1 + float(j)));
        ok[j * 4 + i] = iy >= 0 && iy < H && ix >= 0 && ix < W;
        off[j * 4 + i] = ok[j * 4 + i] ? iy * W + ix : 0;
      }
    for (int64_t ch = 0; ch < s.C; ++ch) {
      const float *xc = s.x + ch * s.plane;
      float acc = 0;
      for (int j = 0; j < 4; ++j) {
        float row = 0;
        for (int i = 0; i < 4; ++i)
          row += cx[i] * (ok[j * 4 + i] ? xc[off[j * 4 + i]] : 0.f);
        acc += cy[j] * row;
      }
      s.y[ch * s.points] = acc;
    }
  }

  /// Trilinear or nearest of a 5-d input (PyTorch's scalar sampler, whose
  /// coordinates are finite and within int32, or -100, outside).
  void sample3d(const Sample &s, const float *g) const {
    const int64_t D = in_[2], H = in_[3], W = in_[4];
    GridAxis3d ax{W, pad_, align_}, ay{H, pad_, align_}, az{D, pad_, align_};
    float gx = ax.compute(ax.unnormalize(g[0])), gy = ay.compute(ay.unnormalize(g[1]));
    float gz = az.compute(az.unnormalize(g[2]));
    auto inside = [&](int64_t z, int64_t yy, int64_t xx) {
      return z >= 0 && z < D && yy >= 0 && yy < H && xx >= 0 && xx < W;
    };
    auto index = [](float v) { return saturatingInt64(v); };
    if (interp_ == Interp::Nearest) {
      // std::round: half away from zero, unlike the 4-d sampler.
      int64_t ix = index(std::round(gx)), iy = index(std::round(gy)), iz = index(std::round(gz));
      int64_t off = (iz * H + iy) * W + ix;
      bool ok = inside(iz, iy, ix);
      float one = 1;
      return blend(s, &off, &ok, &one, 1);
    }
    int64_t x0 = index(std::floor(gx)), y0 = index(std::floor(gy)), z0 = index(std::floor(gz));
    float fx = gx - float(x0), fy = gy - float(y0), fz = gz - float(z0);
    int64_t off[8];
    bool ok[8];
    float w[8];
    for (int t = 0; t < 8; ++t) {
      int dz = t / 4, dy = t / 2 % 2, dx = t % 2;
      int64_t zz = z0 + dz, yy = y0 + dy, xx = x0 + dx;
      w[t] = (dx ? fx : 1 - fx) * (dy ? fy : 1 - fy) * (dz ? fz : 1 - fz);
      ok[t] = inside(zz, yy, xx);
      off[t] = ok[t] ? (zz * H + yy) * W + xx : 0;
    }
    blend(s, off, ok, w, 8);
  }

  std::vector<int64_t> in_, out_;
  Interp interp_;
  GridPad pad_;
  bool align_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeGridSample(const CallNode &c, const CallShapes &io) {
  const std::vector<int64_t> &in = io.in;
  std::string mode = c.attrs().getString("mode", "bilinear"),
              pad = c.attrs().getString("padding_mode", "zeros");
  Interp interp;
  if (mode == "bilinear")
    interp = Interp::Bilinear;
  else if (mode == "nearest")
    interp = Interp::Nearest;
  else if (mode == "bicubic" && in.size() == 4)
    interp = Interp::Bicubic;
  else
    return kernelError(c, "mode '" + mode + "' is not supported for " + shapeToString(in));
  GridPad p;
  if (pad == "zeros")
    p = GridPad::Zeros;
  else if (pad == "border")
    p = GridPad::Border;
  else if (pad == "reflection")
    p = GridPad::Reflection;
  else
    return kernelError(c, "padding_mode '" + pad + "' is not supported");
  if (in.size() != 4 && in.size() != 5)
    return kernelError(c, "expects a 4-d or 5-d input, got " + shapeToString(in));
  for (size_t d = 2; d < in.size(); ++d)
    if (in[d] == 0)
      return kernelError(c, "the input " + shapeToString(in) + " has an empty spatial dim");
  return std::unique_ptr<OpKernel>(
      new GridSampleKernel(in, io.out, interp, p, c.attrs().getBool("align_corners", false)));
}
KC_REGISTER_KERNEL(grid_sample, "F.grid_sample", withShapes<makeGridSample>);

/// F.affine_grid: grid[n, ..., :] = theta[n] @ (x, y[, z], 1) over the
/// base grid of the output size.
class AffineGridKernel final : public OpKernel {
public:
  AffineGridKernel(std::vector<int64_t> size, bool align) : size_(std::move(size)), align_(align) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
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
