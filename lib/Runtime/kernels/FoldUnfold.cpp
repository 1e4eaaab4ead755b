//===- FoldUnfold.cpp - nn.Unfold (im2col) and nn.Fold (col2im) -----------===//
#include "Operands.h"
#include "Parallel.h"

#include "kc/IR/WindowAttrs.h"

#include <cstring>

namespace kc::rt {
namespace {

struct Windows {
  int64_t N, C, H, W, KH, KW, SH, SW, PH, PW, DH, DW, BH, BW; ///< BH x BW blocks
};

/// unfold: out[n, (c, kh, kw), (bh, bw)] = in[n, c, bh*s - p + kh*d, ...] or 0;
/// fold: the same map, summed the other way.
template <bool Fold> class WindowKernel final : public OpKernel {
public:
  explicit WindowKernel(Windows g) : g_(g) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const Windows &g = g_;
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    const int64_t L = g.BH * g.BW, rows = g.C * g.KH * g.KW;
    if (Fold)
      std::memset(y, 0, out[0]->nbytes());
    for (int64_t n = 0; n < g.N; ++n)
      parallelFor(Fold ? g.C : rows, rows * L > 65536, [&](int64_t item) {
        // Fold writes by channel, so that no two threads add to one value.
        int64_t r0 = Fold ? item * g.KH * g.KW : item, r1 = Fold ? r0 + g.KH * g.KW : item + 1;
        for (int64_t r = r0; r < r1; ++r) {
          int64_t c = r / (g.KH * g.KW), kh = r / g.KW % g.KH, kw = r % g.KW;
          const float *plane = x + (n * g.C + c) * g.H * g.W;
          float *col = (Fold ? const_cast<float *>(x) : y) + (n * rows + r) * L;
          float *outPlane = y + (n * g.C + c) * g.H * g.W;
          for (int64_t bh = 0; bh < g.BH; ++bh) {
            int64_t ih = bh * g.SH - g.PH + kh * g.DH;
            for (int64_t bw = 0; bw < g.BW; ++bw) {
              int64_t iw = bw * g.SW - g.PW + kw * g.DW;
              bool ok = ih >= 0 && ih < g.H && iw >= 0 && iw < g.W;
              if (Fold) {
                if (ok)
                  outPlane[ih * g.W + iw] += col[bh * g.BW + bw];
              } else {
                col[bh * g.BW + bw] = ok ? plane[ih * g.W + iw] : 0.f;
              }
            }
          }
        }
      });
  }

private:
  Windows g_;
};

template <bool Fold>
llvm::Expected<std::unique_ptr<OpKernel>> makeWindows(const CallNode &c, const CallShapes &io) {
  auto w = WindowAttrs::from(c, 2, WindowOp::Conv);
  if (!w)
    return kernelError(c, llvm::toString(w.takeError()));
  const std::vector<int64_t> &k = w->kernel, &s = w->stride, &p = w->padBefore, &d = w->dilation;
  const std::vector<int64_t> &img = Fold ? io.out : io.in;
  if (img.size() != 4)
    return kernelError(c, "expects 4-d images, got " + shapeToString(img));
  Windows g{img[0], img[1], img[2], img[3], k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1], 0, 0};
  g.BH = w->outputSize(0, g.H).value_or(0);
  g.BW = w->outputSize(1, g.W).value_or(0);
  const std::vector<int64_t> &cols = Fold ? io.in : io.out;
  if (cols.size() != 3 || cols[1] != g.C * g.KH * g.KW || cols[2] != g.BH * g.BW)
    return kernelError(c, "columns " + shapeToString(cols) + " do not match the windows");
  return std::unique_ptr<OpKernel>(new WindowKernel<Fold>(g));
}
KC_REGISTER_KERNEL(unfold, "nn.Unfold", withShapes<makeWindows<false>>);
KC_REGISTER_KERNEL(fold, "nn.Fold", withShapes<makeWindows<true>>);

} // namespace
} // namespace kc::rt
