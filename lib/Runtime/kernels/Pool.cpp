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

/// Max and average pooling in two passes of the poolRow micro-kernel (a
/// vector of outputs a step; at stride 2 the window's even columns split
/// out in registers), over buffers bordered with -inf (max) or zeros
/// (average), averages divided by their window's count on the way. NaN
/// propagates as in PyTorch.
///
/// - At stride 1, and at stride 2 on rows of at most kPlanarMaxWidth, a
///   plane at a time, flattened over its padded width so that each pass is
///   one long contiguous run whatever the plane's size (rows of 7 or 14
///   leave a vector loop mostly empty): the plane copied into the buffer,
///   its window rows combined, then its window columns, then each output
///   row copied out. At stride s, output (oh, ow) is column-pass value
///   oh·PWt + ow, the window at s·(oh·PWt + ow) of the combined rows: one
///   stride-s pass, of which the values between output rows are dropped.
/// - Otherwise an output row at a time: the window's input rows combined
///   into one row laid in the buffer, then its window columns. Rows of all
///   planes are shared over the threads, so one large plane is too.
class PoolKernel final : public OpKernel {
public:
  PoolKernel(PoolGeometry g, bool isMax, bool includePad, int64_t divisor)
      : g_(g), max_(isMax), includePad_(includePad), divisor_(divisor), counts_(columnCounts()) {
    scratch_.floats = planar() ? planeFloats() : rowLength();
  }

  size_t workspaceBytes() const override { return scratch_.bytes(); }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const PoolGeometry &g = g_;
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    const int64_t items = planar() ? g.planes : g.planes * g.OH;
    parallelRegion(items > 1 && g.planes * g.OH * g.OW * g.KH * g.KW > 65536, scratch_.threads,
                   [&] {
                     float *t = static_cast<float *>(ctx.workspace) +
                                omp_get_thread_num() * perThreadFloats(scratch_.floats);
                     // Only the input's window is ever written: the border stays.
                     std::fill(t, t + scratch_.floats, max_ ? -INFINITY : 0.f);
                     if (planar())
                       runPlanes(x, y, t);
                     else
                       runRows(x, y, t);
                   });
  }

private:
  /// Rows of at most this many floats pool a plane at a time at stride 2.
  /// A row at a time costs ~100 cycles a row beyond the pooling, more than
  /// the pooling on rows of 7 outputs; a plane at a time combines every
  /// padded row and drops half the column pass, which rows of 28 and up
  /// lose again (docs/performance.md).
  static constexpr int64_t kPlanarMaxWidth = 16;

  /// The stride of a plane-at-a-time pool, 0 where rows are pooled.
  int64_t planarStride() const {
    const PoolGeometry &g = g_;
    if (g.SH == 1 && g.SW == 1)
      return 1;
    return g.SH == 2 && g.SW == 2 && g.W <= kPlanarMaxWidth ? 2 : 0;
  }
  bool planar() const { return planarStride() > 0; }
  /// Padded sizes: the input and its padding before, and every window.
  int64_t paddedW() const {
    return std::max(g_.W + g_.PW, (g_.OW - 1) * g_.SW + (g_.KW - 1) * g_.DW + 1);
  }
  int64_t paddedH() const {
    return std::max(g_.H + g_.PH, (g_.OH - 1) * g_.SH + (g_.KH - 1) * g_.DH + 1);
  }
  /// The padded plane and s rows of border after it, the combined rows (a
  /// row longer: the column pass reads past the last), the combined
  /// columns, and the micro-kernel's reach past each.
  int64_t planeFloats() const {
    const int64_t PWt = paddedW(), s = planarStride(), Q = g_.OH * PWt;
    return (paddedH() + s) * PWt + (s * Q + PWt) + Q + 3 * uk::kPoolRowReach;
  }

  /// Inside the team: the planes shared out, each through buffer t.
  void runPlanes(const float *x, float *y, float *t) const {
    const PoolGeometry &g = g_;
    const uk::PoolRowFn pass = uk::microKernels().poolRow[max_];
    const int64_t PWt = paddedW(), Q = g.OH * PWt, s = planarStride();
    float *rows = t + (paddedH() + s) * PWt + uk::kPoolRowReach;
    float *cols = rows + s * Q + PWt + uk::kPoolRowReach;
#pragma omp for schedule(static)
    for (int64_t p = 0; p < g.planes; ++p) {
      copyRows(t + g.PH * PWt + g.PW, PWt, x + p * g.H * g.W, g.W, g.H, g.W);
      pass(t, rows, {s * Q + PWt, 1, g.KH, PWt * g.DH});
      pass(rows, cols, {Q, s, g.KW, g.DW});
      float *plane = y + p * g.OH * g.OW;
      if (max_)
        copyRows(plane, g.OW, cols, PWt, g.OH, g.OW);
      else
        for (int64_t oh = 0; oh < g.OH; ++oh)
          pass(cols + oh * PWt, plane + oh * g.OW, divided(oh, {g.OW, 1, 1, 1}));
    }
  }

  /// Inside the team: the output rows shared out, each through buffer t.
  void runRows(const float *x, float *y, float *t) const {
    const PoolGeometry &g = g_;
    const uk::PoolRowFn pass = uk::microKernels().poolRow[max_];
    // The rows split as `omp for` would, walked without a division a row.
    const int64_t rows = g.planes * g.OH, team = omp_get_num_threads();
    const int64_t id = omp_get_thread_num(), begin = rows * id / team;
    int64_t p = begin / g.OH, oh = begin % g.OH;
    for (int64_t row = begin, end = rows * (id + 1) / team; row < end; ++row) {
      combineRows(x + p * g.H * g.W, oh, t + g.PW);
      uk::PoolRow r = divided(oh, {g.OW, g.SW, g.KW, g.DW});
      if (g.SW <= 2)
        pass(t, y + row * g.OW, r);
      else
        alongRowAnyStride(t, y + row * g.OW, r);
      if (++oh == g.OH)
        oh = 0, ++p;
    }
  }

  /// Pass r, dividing by output row oh's window counts when averaging.
  uk::PoolRow divided(int64_t oh, uk::PoolRow r) const {
    if (!max_) {
      r.counts = counts_.data();
      r.rowCount = divisor_ > 0 ? 1.f : countOrInfinity(windowCount(oh, g_.H, g_.KH, g_.SH, g_.PH));
    }
    return r;
  }

  /// mid[iw] = the max or sum over the input rows under output row oh's
  /// window of their column iw; the border value where no row is. The
  /// window's rows are a run of rows DH apart: one poolRow pass over them
  /// in place, on rows wide enough that it reads nothing past them.
  void combineRows(const float *plane, int64_t oh, float *mid) const {
    const PoolGeometry &g = g_;
    const int64_t ih0 = oh * g.SH - g.PH;
    const int64_t k0 = ih0 >= 0 ? 0 : (-ih0 + g.DH - 1) / g.DH;
    const int64_t k1 = ih0 >= g.H ? 0 : std::min(g.KH, (g.H - 1 - ih0) / g.DH + 1);
    if (k1 <= k0) { // no input row under the window (not from PyTorch)
      std::fill(mid, mid + g.W, max_ ? -INFINITY : 0.f);
      return;
    }
    const float *first = plane + (ih0 + k0 * g.DH) * g.W;
    if (g.W >= uk::kPoolRowInPlaceWidth) {
      uk::microKernels().poolRow[max_](first, mid, {g.W, 1, k1 - k0, g.DH * g.W});
      return;
    }
    std::copy(first, first + g.W, mid);
    for (int64_t k = k0 + 1; k < k1; ++k) {
      const float *in = plane + (ih0 + k * g.DH) * g.W;
      for (int64_t i = 0; i < g.W; ++i)
        mid[i] = max_ ? maxNaN(mid[i], in[i]) : mid[i] + in[i];
    }
  }

  /// The poolRow micro-kernel's work at strides beyond 2, a value at a time.
  void alongRowAnyStride(const float *t, float *row, const uk::PoolRow &r) const {
    for (int64_t ow = 0; ow < r.OW; ++ow) {
      const float *q = t + ow * r.S;
      float a = q[0];
      for (int64_t k = 1; k < r.K; ++k)
        a = max_ ? maxNaN(a, q[k * r.D]) : a + q[k * r.D];
      row[ow] = r.counts ? a / (r.rowCount * r.counts[ow]) : a;
    }
  }

  /// Average pooling's count of positions under output o's window along
  /// one dim (input size `in`, kernel k, stride st, padding pad): clipped
  /// to the padded input (count_include_pad) or to the input.
  int64_t windowCount(int64_t o, int64_t in, int64_t k, int64_t st, int64_t pad) const {
    int64_t begin = o * st - pad, end = std::min(begin + k, in + pad);
    return includePad_ ? end - begin : std::min(end, in) - std::max<int64_t>(begin, 0);
  }
  /// A divisor whose quotient is 0 where a window holds nothing (not from
  /// PyTorch, which needs padding of at most half the window).
  static float countOrInfinity(int64_t n) { return n > 0 ? float(n) : INFINITY; }
  /// Each output column's divisor (all divisor_override when set), and
  /// ones after them, which the micro-kernel's last vector may read.
  std::vector<float> columnCounts() const {
    std::vector<float> c(size_t(std::max<int64_t>(g_.OW, 0) + uk::kPoolRowCountsReach), 1.f);
    for (int64_t ow = 0; ow < g_.OW; ++ow)
      c[size_t(ow)] = divisor_ > 0 ? float(divisor_)
                                   : countOrInfinity(windowCount(ow, g_.W, g_.KW, g_.SW, g_.PW));
    return c;
  }

  /// Floats of the row buffer: input column iw is at iw + PW, and the
  /// micro-kernel's reach past its last window.
  int64_t rowLength() const {
    return std::max(g_.W + g_.PW, (g_.OW - 1) * g_.SW + (g_.KW - 1) * g_.DW + 1) +
           uk::kPoolRowReach;
  }

  /// max(m, v), NaN if either is.
  static float maxNaN(float m, float v) { return (v > m || v != v) ? v : m; }

  PoolGeometry g_;
  bool max_, includePad_;
  int64_t divisor_;
  std::vector<float> counts_; ///< average pooling: columnCounts()
  ThreadScratch scratch_;     ///< a plane or row buffer per thread
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
