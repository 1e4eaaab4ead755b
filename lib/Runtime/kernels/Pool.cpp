//===- Pool.cpp - Max, average and adaptive pooling -----------------------===//
//
// PyTorch's window rules: ceil_mode windows that start in the right padding
// are dropped (the output size comes from the type), average pooling divides
// by the window clipped to the padded input (count_include_pad) or to the
// input, unless divisor_override is set. 1-d pools run as 2-d of height 1.
//
//===----------------------------------------------------------------------===//
#include "../ukernels/MicroKernels.h"
#include "CallInfo.h"
#include "Copy.h"
#include "Parallel.h"
#include "PoolNd.h"

#include <omp.h>
#include <vector>

namespace kc::rt {
namespace {

struct PoolGeometry {
  int64_t planes, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW;
};

class PoolKernel final : public OpKernel {
public:
  PoolKernel(PoolGeometry g, bool isMax, bool includePad, int64_t divisor)
      : g_(g), max_(isMax), includePad_(includePad), divisor_(divisor),
        threads_(omp_get_max_threads()), columns_(columnCounts()) {}

  /// The row buffer, or at stride 1 the plane buffers, one per thread.
  size_t workspaceBytes() const override {
    int64_t floats = planar() ? planeFloats() : rowLength();
    return size_t(threads_) * size_t(perThreadFloats(floats)) * sizeof(float);
  }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    float *ws = static_cast<float *>(ctx.workspace);
    if (planar())
      return runPlanar(x, y, ws);
    if (max_)
      return runMax(x, y, ws);
    runAverage(x, y, ws);
  }

private:
  /// At stride 1 a plane at a time, flattened over its padded width so that
  /// every pass is one long contiguous loop whatever the plane's size (rows
  /// of 7 or 14 leave a vector loop mostly empty): the plane copied into a
  /// buffer bordered with -inf (max) or 0 (average), its window rows
  /// combined, then its window columns, then the outputs copied out (an
  /// average divided by its window's count on the way).
  bool planar() const { return g_.SH == 1 && g_.SW == 1; }
  int64_t paddedW() const { return std::max(g_.W + g_.PW, g_.OW + (g_.KW - 1) * g_.DW); }
  int64_t paddedH() const { return std::max(g_.H + g_.PH, g_.OH + (g_.KH - 1) * g_.DH); }
  /// The padded plane and a row of border after it, the combined rows (a
  /// row longer: the column pass reads past the last), the combined
  /// columns.
  int64_t planeFloats() const {
    const int64_t PWt = paddedW();
    return (paddedH() + 1) * PWt + 2 * (g_.OH + 1) * PWt;
  }

  void runPlanar(const float *x, float *y, float *buffers) const {
    const PoolGeometry &g = g_;
    const int64_t PWt = paddedW(), region = perThreadFloats(planeFloats());
    const int64_t padFloats = (paddedH() + 1) * PWt, Q = g.OH * PWt;
    const float border = max_ ? -INFINITY : 0.f;
    parallelRegion(g.planes * g.OH * g.OW * g.KH * g.KW > 65536, threads_, [&] {
      float *pad = buffers + omp_get_thread_num() * region;
      float *rows = pad + padFloats, *cols = rows + Q + PWt;
      // Only the input's window is ever written: the border stays.
      std::fill(pad, pad + padFloats, border);
#pragma omp for
      for (int64_t p = 0; p < g.planes; ++p) {
        copyRows(pad + g.PH * PWt + g.PW, PWt, x + p * g.H * g.W, g.W, g.H, g.W);
        combine(pad, PWt * g.DH, g.KH, rows, Q + PWt);
        combine(rows, g.DW, g.KW, cols, Q);
        float *dst = y + p * g.OH * g.OW;
        if (max_) {
          copyRows(dst, g.OW, cols, PWt, g.OH, g.OW);
          continue;
        }
        for (int64_t oh = 0; oh < g.OH; ++oh)
          divideRow(cols + oh * PWt, oh, dst + oh * g.OW);
      }
    });
  }

  /// out[q] = the max (or sum) of in[q + k·step] over k < taps, q < n.
  void combine(const float *in, int64_t step, int64_t taps, float *out, int64_t n) const {
    std::copy(in, in + n, out);
    for (int64_t k = 1; k < taps; ++k) {
      const float *src = in + k * step;
      if (max_)
        for (int64_t q = 0; q < n; ++q)
          out[q] = maxNaN(out[q], src[q]);
      else
        for (int64_t q = 0; q < n; ++q)
          out[q] += src[q];
    }
  }

  /// Max pooling, one output row at a time, in two passes: the window's
  /// input rows are reduced into one row (contiguous, vectorized), which is
  /// laid in a buffer bordered with -inf so that the pass along the row
  /// needs no bounds checks; at stride 2 with 2 or 3 taps that pass takes 8
  /// outputs per step. resnet18's 3x3 stride-2 pool took 1.0 ms at one
  /// thread with a pass per tap over strided columns. NaN propagates as in
  /// PyTorch.
  void runMax(const float *x, float *y, float *buffers) const {
    const PoolGeometry &g = g_;
    const int64_t length = rowLength();
    parallelRegion(g.planes * g.OH * g.OW * g.KH * g.KW > 65536, threads_, [&] {
      float *t = buffers + omp_get_thread_num() * perThreadFloats(length);
      std::fill(t, t + length, -INFINITY);
#pragma omp for
      for (int64_t p = 0; p < g.planes; ++p) {
        const float *src = x + p * g.H * g.W;
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          float *mid = t + g.PW;
          bool first = true;
          for (int64_t kh = 0; kh < g.KH; ++kh) {
            int64_t ih = oh * g.SH - g.PH + kh * g.DH;
            if (ih < 0 || ih >= g.H)
              continue;
            const float *in = src + ih * g.W;
            if (first)
              std::copy(in, in + g.W, mid);
            else
              for (int64_t i = 0; i < g.W; ++i)
                mid[i] = maxNaN(mid[i], in[i]);
            first = false;
          }
          if (first) // no input row under the window (not from PyTorch)
            std::fill(mid, mid + g.W, -INFINITY);
          alongRow(t, y + (p * g.OH + oh) * g.OW);
        }
      }
    });
  }

  /// Average pooling the same way: the window's rows summed into a row
  /// bordered with zeros, then the sums along it, then each divided by
  /// its window's count (the rows' part times the columns' part).
  void runAverage(const float *x, float *y, float *buffers) const {
    const PoolGeometry &g = g_;
    const int64_t length = rowLength();
    parallelRegion(g.planes * g.OH * g.OW * g.KH * g.KW > 65536, threads_, [&] {
      float *t = buffers + omp_get_thread_num() * perThreadFloats(length);
      std::fill(t, t + length, 0.f);
#pragma omp for
      for (int64_t p = 0; p < g.planes; ++p) {
        const float *src = x + p * g.H * g.W;
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          const int64_t h0 = oh * g.SH - g.PH, h1 = std::min(h0 + g.KH, g.H + g.PH);
          const int64_t hs = std::max<int64_t>(h0, 0), he = std::min(h1, g.H);
          float *mid = t + g.PW;
          std::fill(mid, mid + g.W, 0.f);
          for (int64_t ih = hs; ih < he; ++ih) {
            const float *in = src + ih * g.W;
            for (int64_t i = 0; i < g.W; ++i)
              mid[i] += in[i];
          }
          float *row = y + (p * g.OH + oh) * g.OW;
          sumAlongRow(t, row);
          divideRow(row, oh, row);
        }
      }
    });
  }

  /// row[ow] = the sum over kw of t[ow*SW + kw*DW].
  void sumAlongRow(const float *t, float *row) const {
    const PoolGeometry &g = g_;
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      const float *q = t + ow * g.SW;
      float sum = q[0];
      for (int64_t kw = 1; kw < g.KW; ++kw)
        sum += q[kw * g.DW];
      row[ow] = sum;
    }
  }

  /// Average pooling's count of positions under output o's window along
  /// one dim (input size `in`, kernel k, stride st, padding pad): clipped
  /// to the padded input (count_include_pad) or to the input.
  int64_t windowCount(int64_t o, int64_t in, int64_t k, int64_t st, int64_t pad) const {
    int64_t begin = o * st - pad, end = std::min(begin + k, in + pad);
    return includePad_ ? end - begin : std::min(end, in) - std::max<int64_t>(begin, 0);
  }
  std::vector<int64_t> columnCounts() const {
    std::vector<int64_t> c(size_t(std::max<int64_t>(g_.OW, 0)));
    for (int64_t ow = 0; ow < g_.OW; ++ow)
      c[size_t(ow)] = windowCount(ow, g_.W, g_.KW, g_.SW, g_.PW);
    return c;
  }

  /// dst[ow] = sums[ow] over the count of output row oh's window (or
  /// divisor_override); dst may be sums.
  void divideRow(const float *sums, int64_t oh, float *dst) const {
    const int64_t rows = windowCount(oh, g_.H, g_.KH, g_.SH, g_.PH);
    for (int64_t ow = 0; ow < g_.OW; ++ow) {
      int64_t div = divisor_ > 0 ? divisor_ : rows * columns_[size_t(ow)];
      dst[ow] = div > 0 ? sums[ow] / float(div) : 0.f;
    }
  }

  /// Floats of max pooling's row buffer: input column iw is at iw + PW; the
  /// strided pass reads up to 18 floats from its last output's window start.
  int64_t rowLength() const {
    return std::max(g_.W + g_.PW, (g_.OW + 8) * g_.SW + g_.KW * g_.DW) + 32;
  }

  /// max(m, v), NaN if either is.
  static float maxNaN(float m, float v) { return (v > m || v != v) ? v : m; }

  /// row[ow] = max over kw of t[ow*SW + kw*DW]; at stride 2 with 2 or 3
  /// taps a vector of outputs a step (f32_maxpool_row_s2).
  void alongRow(const float *t, float *row) const {
    const PoolGeometry &g = g_;
    if (g.SW == 2 && g.DW == 1 && (g.KW == 2 || g.KW == 3)) {
      uk::microKernels().maxRowStride2(t, row, g.OW, g.KW);
      return;
    }
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      const float *q = t + ow * g.SW;
      float m = q[0];
      for (int64_t kw = 1; kw < g.KW; ++kw)
        m = maxNaN(m, q[kw * g.DW]);
      row[ow] = m;
    }
  }

  PoolGeometry g_;
  bool max_, includePad_;
  int64_t divisor_;
  int threads_;                  ///< threads the workspace holds row buffers for
  std::vector<int64_t> columns_; ///< average pooling: columnCounts()
};

template <bool IsMax>
llvm::Expected<std::unique_ptr<OpKernel>> makePool(const CallNode &c, const CallShapes &io) {
  const std::vector<int64_t> *in = &io.in, *out = &io.out;
  bool oneD = c.opDef()->name().find("1d") != std::string::npos;
  size_t n = oneD ? 1 : 2;
  if (in->size() < n + 1 || out->size() != in->size())
    return kernelError(c, "unexpected input " + shapeToString(*in));
  auto w = poolWindow(c, n);
  if (!w)
    return w.takeError();
  std::vector<int64_t> &k = w->kernel, &s = w->stride, &p = w->padBefore, &d = w->dilation;
  if (oneD)
    k.insert(k.begin(), 1), s.insert(s.begin(), 1), p.insert(p.begin(), 0), d.insert(d.begin(), 1);
  int64_t H = oneD ? 1 : (*in)[in->size() - 2], W = in->back();
  int64_t OH = oneD ? 1 : (*out)[out->size() - 2], OW = out->back();
  PoolGeometry g{
      numElements(*in) / (H * W), H, W, OH, OW, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1]};
  const AttrValue *dv = c.attrs().find("divisor_override");
  int64_t divisor = dv && dv->isInt() ? dv->getInt() : 0;
  return std::unique_ptr<OpKernel>(
      new PoolKernel(g, IsMax, c.attrs().getBool("count_include_pad", true), divisor));
}

/// Max pooling that also returns the indices runs on the general kernel
/// (PoolNd.cpp); F the 2-d factory of the other calls.
template <ShapedFactory F>
llvm::Expected<std::unique_ptr<OpKernel>> maxOrWithIndices(const CallNode &c,
                                                           const KernelBuildContext &ctx) {
  if (c.attrs().getBool("return_indices", false))
    return makePoolNd(c, ctx);
  return withShapes<F>(c, ctx);
}

KC_REGISTER_KERNEL_DTYPES(maxpool1d, "nn.MaxPool1d", maxOrWithIndices<makePool<true>>,
                          (DTypeSet{DType::F32}), (DTypeSet{DType::F32, DType::I64}));
KC_REGISTER_KERNEL_DTYPES(maxpool2d, "nn.MaxPool2d", maxOrWithIndices<makePool<true>>,
                          (DTypeSet{DType::F32}), (DTypeSet{DType::F32, DType::I64}));
KC_REGISTER_KERNEL(avgpool1d, "nn.AvgPool1d", withShapes<makePool<false>>);
KC_REGISTER_KERNEL(avgpool2d, "nn.AvgPool2d", withShapes<makePool<false>>);

/// The sum or the NaN-propagating maximum of rows [h0, h1) × columns
/// [w0, w1) of a plane W wide, in two running vectors of 8 lanes: one
/// running value waits on each add in turn (the global pools of
/// squeeze-and-excitation blocks ran at 2-4 GB/s), and an array of 16
/// lanes stayed in memory. A window of whole rows is one run.
template <bool IsMax>
float windowReduce(const float *plane, int64_t W, int64_t h0, int64_t h1, int64_t w0,
                   int64_t w1) {
  typedef float Eight __attribute__((vector_size(32)));
  const float init = IsMax ? -INFINITY : 0.f;
  auto take = [](auto a, auto v) {
    if constexpr (IsMax)
      return (v > a) | (v != v) ? v : a;
    else
      return a + v;
  };
  Eight a0 = Eight{} + init, a1 = a0;
  float tail = init;
  bool wholeRows = w0 == 0 && w1 == W;
  int64_t runs = wholeRows ? 1 : h1 - h0, n = wholeRows ? (h1 - h0) * W : w1 - w0;
  for (int64_t r = 0; r < runs; ++r) {
    const float *p = plane + (h0 + r) * W + w0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      Eight x0, x1;
      std::memcpy(&x0, p + i, sizeof x0);
      std::memcpy(&x1, p + i + 8, sizeof x1);
      a0 = take(a0, x0);
      a1 = take(a1, x1);
    }
    for (; i < n; ++i)
      tail = take(tail, p[i]);
  }
  a0 = take(a0, a1);
  float r = tail;
  for (int j = 0; j < 8; ++j)
    r = take(r, a0[j]);
  return r;
}

/// Adaptive pooling: window i spans [floor(i*in/out), ceil((i+1)*in/out)).
class AdaptivePoolKernel final : public OpKernel {
public:
  AdaptivePoolKernel(int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW, bool isMax)
      : planes_(planes), H_(H), W_(W), OH_(OH), OW_(OW), max_(isMax) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    parallelFor(planes_, planes_ * H_ * W_ > 65536, [&](int64_t p) {
      const float *src = x + p * H_ * W_;
      for (int64_t oh = 0; oh < OH_; ++oh) {
        int64_t h0 = oh * H_ / OH_, h1 = ((oh + 1) * H_ + OH_ - 1) / OH_;
        for (int64_t ow = 0; ow < OW_; ++ow) {
          int64_t w0 = ow * W_ / OW_, w1 = ((ow + 1) * W_ + OW_ - 1) / OW_;
          y[(p * OH_ + oh) * OW_ + ow] =
              max_ ? windowReduce<true>(src, W_, h0, h1, w0, w1)
                   : windowReduce<false>(src, W_, h0, h1, w0, w1) / float((h1 - h0) * (w1 - w0));
        }
      }
    });
  }

private:
  int64_t planes_, H_, W_, OH_, OW_;
  bool max_;
};

template <bool IsMax>
llvm::Expected<std::unique_ptr<OpKernel>> makeAdaptive(const CallNode &c, const CallShapes &io) {
  const std::vector<int64_t> *in = &io.in, *out = &io.out;
  bool oneD = c.opDef()->name().find("1d") != std::string::npos;
  if (in->size() < (oneD ? 2u : 3u) || out->size() != in->size())
    return kernelError(c, "unexpected input " + shapeToString(*in));
  int64_t H = oneD ? 1 : (*in)[in->size() - 2], W = in->back();
  int64_t OH = oneD ? 1 : (*out)[out->size() - 2], OW = out->back();
  return std::unique_ptr<OpKernel>(
      new AdaptivePoolKernel(numElements(*in) / (H * W), H, W, OH, OW, IsMax));
}
KC_REGISTER_KERNEL(aap1d, "nn.AdaptiveAvgPool1d", withShapes<makeAdaptive<false>>);
KC_REGISTER_KERNEL(aap2d, "nn.AdaptiveAvgPool2d", withShapes<makeAdaptive<false>>);
KC_REGISTER_KERNEL_DTYPES(amp1d, "nn.AdaptiveMaxPool1d", maxOrWithIndices<makeAdaptive<true>>,
                          (DTypeSet{DType::F32}), (DTypeSet{DType::F32, DType::I64}));
KC_REGISTER_KERNEL_DTYPES(amp2d, "nn.AdaptiveMaxPool2d", maxOrWithIndices<makeAdaptive<true>>,
                          (DTypeSet{DType::F32}), (DTypeSet{DType::F32, DType::I64}));

} // namespace
} // namespace kc::rt
