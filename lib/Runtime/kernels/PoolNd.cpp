//===- PoolNd.cpp - Pooling over 1 to 3 spatial dims ----------------------===//
//
// 3-d max, average and adaptive pooling, power-average (LP) pooling, and
// max pooling that also returns the indices (the position of each
// maximum in its input plane, as PyTorch numbers it). Fewer spatial dims
// are padded to three of size 1. PyTorch's rules: windows that start in
// the right padding are dropped (the output size comes from the type);
// average pooling divides by the window clipped to the padded input
// (count_include_pad) or to the input, unless divisor_override is set; LP
// pooling is PyTorch's avg_pool of x^p (no padding) times the window size,
// to the power 1/p.
//
//===----------------------------------------------------------------------===//
#include "PoolNd.h"
#include "Operands.h"
#include "Parallel.h"

namespace kc::rt {
namespace {

enum class PoolKind { Max, Avg, Lp, AdaptiveMax, AdaptiveAvg };

struct PoolDims {
  int64_t planes = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1},
          p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
};

class PoolNdKernel final : public OpKernel {
public:
  PoolNdKernel(PoolKind kind, PoolDims g, bool includePad, int64_t divisor, double norm,
               bool indices)
      : kind_(kind), g_(g), includePad_(includePad), divisor_(divisor), norm_(norm) {
    separable_ = !indices && kind_ != PoolKind::Lp;
    if (separable_) { // two intermediate planes of doubles
      scratch_.floats = 2 * (g.in[0] * g.in[1] * g.out[2] + g.in[0] * g.out[1] * g.out[2]);
      for (int i = 0; i < 3; ++i)
        for (int64_t o = 0; o < g.out[i]; ++o)
          ranges_[i].push_back(range(i, o));
    }
  }
  size_t workspaceBytes() const override { return scratch_.bytes(); }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    if (separable_)
      return runSeparable(in[0]->data<float>(), out[0]->data<float>(), ctx.workspace);
    const PoolDims &g = g_;
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    int64_t *idx = out.size() > 1 ? out[1]->data<int64_t>() : nullptr;
    int64_t inPlane = g.in[0] * g.in[1] * g.in[2], outPlane = g.out[0] * g.out[1] * g.out[2];
    parallelFor(g.planes, g.planes * outPlane > 4096, [&](int64_t plane) {
      const float *src = x + plane * inPlane;
      int64_t o = plane * outPlane;
      for (int64_t a = 0; a < g.out[0]; ++a)
        for (int64_t b = 0; b < g.out[1]; ++b)
          for (int64_t c = 0; c < g.out[2]; ++c, ++o) {
            Range r[3];
            int64_t pos[3] = {a, b, c};
            for (int i = 0; i < 3; ++i)
              r[i] = range(i, pos[i]);
            if (kind_ == PoolKind::Max || kind_ == PoolKind::AdaptiveMax)
              max(src, r, y + o, idx ? idx + o : nullptr);
            else
              average(src, r, y + o);
          }
    });
  }

private:
  /// The taps of one window along one dim: first, step, count; and what
  /// average pooling divides by along it.
  struct Range {
    int64_t first, step, count, padded;
  };

  /// One dim's pass: dst[a][o][c] from src[a][first + t * step][c] over
  /// the taps of each output o (`in` rows in, r.size() out, `inner` values
  /// a row): the maximum (NaN winning, -inf for no tap) or the sum.
  template <class S, class D>
  static void pass(const S *src, D *dst, int64_t outer, int64_t in, llvm::ArrayRef<Range> r,
                   int64_t inner, bool isMax) {
    const int64_t n = int64_t(r.size());
    if (inner == 1) { // along the contiguous dim: one value per output
      for (int64_t a = 0; a < outer; ++a) {
        const S *row = src + a * in;
        D *d = dst + a * n;
        for (int64_t o = 0; o < n; ++o) {
          const Range &q = r[size_t(o)];
          const S *s = row + q.first;
          D m = isMax ? D(-INFINITY) : D(0);
          if (isMax) { // without a branch on the data: NaN is noted, then wins
            bool nan = false;
            for (int64_t t = 0; t < q.count; ++t, s += q.step) {
              D v = D(*s);
              nan |= v != v;
              m = m < v ? v : m;
            }
            d[o] = nan ? D(NAN) : m;
          } else {
            for (int64_t t = 0; t < q.count; ++t, s += q.step)
              m += D(*s);
            d[o] = m;
          }
        }
      }
      return;
    }
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t o = 0; o < n; ++o) {
        D *d = dst + (a * n + o) * inner;
        const Range &q = r[size_t(o)];
        std::fill(d, d + inner, isMax ? D(-INFINITY) : D(0));
        for (int64_t t = 0; t < q.count; ++t) {
          const S *s = src + (a * in + q.first + t * q.step) * inner;
          if (isMax)
            for (int64_t c = 0; c < inner; ++c)
              d[c] = (s[c] > d[c] || s[c] != s[c]) ? D(s[c]) : d[c];
          else
            for (int64_t c = 0; c < inner; ++c)
              d[c] += D(s[c]);
        }
      }
  }

  /// Max and average pooling (adaptive too, without indices) one dim at a
  /// time, W, H, then D: a box's maximum or sum is that of its rows' ones.
  /// Sums run in double, as the direct form; each output is divided once.
  void runSeparable(const float *x, float *y, void *workspace) const {
    const PoolDims &g = g_;
    const bool isMax = kind_ == PoolKind::Max || kind_ == PoolKind::AdaptiveMax;
    const int64_t inPlane = g.in[0] * g.in[1] * g.in[2], outPlane = g.out[0] * g.out[1] * g.out[2];
    const int64_t n1 = g.in[0] * g.in[1] * g.out[2];
    const std::vector<Range> *ranges = ranges_;
    parallelForScratch(g.planes, g.planes * outPlane > 4096, scratch_, workspace,
                       [&](int64_t plane, float *scratch) {
      const float *src = x + plane * inPlane;
      float *dst = y + plane * outPlane;
      if (isMax) {
        float *t1 = scratch, *t2 = scratch + n1;
        pass(src, t1, g.in[0] * g.in[1], g.in[2], ranges[2], 1, true);
        pass(t1, t2, g.in[0], g.in[1], ranges[1], g.out[2], true);
        pass(t2, dst, 1, g.in[0], ranges[0], g.out[1] * g.out[2], true);
        return;
      }
      double *t1 = reinterpret_cast<double *>(scratch), *t2 = t1 + n1;
      pass(src, t1, g.in[0] * g.in[1], g.in[2], ranges[2], 1, false);
      pass(t1, t2, g.in[0], g.in[1], ranges[1], g.out[2], false);
      // The D pass one output slice at a time into t1 (free again), each
      // sum then divided by its window's product of per-dim counts.
      for (int64_t oa = 0; oa < g.out[0]; ++oa) {
        const Range &ra = ranges[0][size_t(oa)];
        pass(t2, t1, 1, g.in[0], llvm::ArrayRef<Range>(ra), g.out[1] * g.out[2], false);
        for (int64_t ob = 0; ob < g.out[1]; ++ob) {
          const Range &rb = ranges[1][size_t(ob)];
          for (int64_t oc = 0; oc < g.out[2]; ++oc) {
            const Range &rc = ranges[2][size_t(oc)];
            int64_t inside = ra.count * rb.count * rc.count;
            int64_t div = kind_ == PoolKind::AdaptiveAvg ? inside
                          : divisor_ > 0                 ? divisor_
                          : includePad_                  ? ra.padded * rb.padded * rc.padded
                                                         : inside;
            double sum = t1[ob * g.out[2] + oc];
            dst[(oa * g.out[1] + ob) * g.out[2] + oc] = div > 0 ? float(sum / double(div)) : 0.f;
          }
        }
      }
    });
  }
  Range range(int i, int64_t o) const {
    const PoolDims &g = g_;
    if (kind_ == PoolKind::AdaptiveMax || kind_ == PoolKind::AdaptiveAvg) {
      int64_t lo = o * g.in[i] / g.out[i], hi = ((o + 1) * g.in[i] + g.out[i] - 1) / g.out[i];
      return {lo, 1, hi - lo, hi - lo};
    }
    int64_t start = o * g.s[i] - g.p[i];
    // The window clipped to the padded input (avg pooling's pool size).
    int64_t padded = std::min(start + g.k[i], g.in[i] + g.p[i]) - start;
    int64_t t0 = start >= 0 ? 0 : (-start + g.d[i] - 1) / g.d[i];
    int64_t t1 = std::min(g.k[i], (g.in[i] - 1 - start) / g.d[i] + 1);
    if (g.in[i] - 1 - start < 0)
      t1 = 0;
    return {start + t0 * g.d[i], g.d[i], std::max<int64_t>(0, t1 - t0), padded};
  }

  void max(const float *src, const Range *r, float *y, int64_t *idx) const {
    const PoolDims &g = g_;
    float m = -INFINITY;
    int64_t best = (r[0].first * g.in[1] + r[1].first) * g.in[2] + r[2].first;
    for (int64_t a = 0; a < r[0].count; ++a)
      for (int64_t b = 0; b < r[1].count; ++b) {
        int64_t row =
            ((r[0].first + a * r[0].step) * g.in[1] + r[1].first + b * r[1].step) * g.in[2];
        for (int64_t c = 0; c < r[2].count; ++c) {
          int64_t at = row + r[2].first + c * r[2].step;
          float v = src[at];
          if (v > m || std::isnan(v)) { // PyTorch's test: NaN wins, the last one
            m = v;
            best = at;
          }
        }
      }
    *y = m;
    if (idx)
      *idx = best;
  }

  void average(const float *src, const Range *r, float *y) const {
    const PoolDims &g = g_;
    double sum = 0;
    for (int64_t a = 0; a < r[0].count; ++a)
      for (int64_t b = 0; b < r[1].count; ++b) {
        const float *row =
            src + ((r[0].first + a * r[0].step) * g.in[1] + r[1].first + b * r[1].step) * g.in[2] +
            r[2].first;
        if (kind_ == PoolKind::Lp)
          for (int64_t c = 0; c < r[2].count; ++c)
            sum += std::pow(double(row[c]), norm_);
        else
          for (int64_t c = 0; c < r[2].count; ++c)
            sum += row[c];
      }
    int64_t inside = r[0].count * r[1].count * r[2].count;
    if (kind_ == PoolKind::AdaptiveAvg) {
      *y = float(sum / double(inside));
      return;
    }
    int64_t padded = r[0].padded * r[1].padded * r[2].padded;
    if (kind_ == PoolKind::Lp) {
      // avg_pool(x^p) with no padding divides by the clipped window.
      double avg = float(sum / double(padded));
      *y = float(std::pow(avg * double(g.k[0] * g.k[1] * g.k[2]), 1.0 / norm_));
      return;
    }
    int64_t div = divisor_ > 0 ? divisor_ : includePad_ ? padded : inside;
    *y = div > 0 ? float(sum / double(div)) : 0.f;
  }

  PoolKind kind_;
  PoolDims g_;
  bool includePad_;
  int64_t divisor_;
  double norm_;
  bool separable_ = false;      ///< runSeparable applies
  std::vector<Range> ranges_[3]; ///< its windows along D, H, W
  ThreadScratch scratch_;
};

/// The number of spatial dims of an op, from its name.
size_t spatialDims(llvm::StringRef op) { return op.contains("3d") ? 3 : op.contains("2d") ? 2 : 1; }

} // namespace

llvm::Expected<std::unique_ptr<OpKernel>> makePoolNd(const CallNode &c,
                                                     const KernelBuildContext &) {
  llvm::StringRef op = c.calleeName();
  PoolKind kind = op.contains("Adaptive")
                      ? (op.contains("Max") ? PoolKind::AdaptiveMax : PoolKind::AdaptiveAvg)
                  : op.contains("LPPool") ? PoolKind::Lp
                  : op.contains("Max")    ? PoolKind::Max
                                          : PoolKind::Avg;
  size_t n = spatialDims(op);
  auto io = callShapes(c);
  if (!io)
    return io.takeError();
  const std::vector<int64_t> &in = io->in, &out = io->out;
  if (in.size() < n + 1 || out.size() != in.size())
    return kernelError(c, "expects at least " + llvm::Twine(n + 1) + " dims, got " +
                              shapeToString(in));
  bool indices = c.attrs().getBool("return_indices", false);
  if (indices && kind != PoolKind::Max && kind != PoolKind::AdaptiveMax)
    return kernelError(c, "return_indices is only for max pooling");
  PoolDims g;
  g.planes = numElements(in) / numElements(llvm::ArrayRef<int64_t>(in).take_back(n));
  size_t lead = 3 - n;
  for (size_t i = 0; i < n; ++i) {
    g.in[lead + i] = in[in.size() - n + i];
    g.out[lead + i] = out[out.size() - n + i];
  }
  if (kind == PoolKind::Max || kind == PoolKind::Avg || kind == PoolKind::Lp) {
    auto w = poolWindow(c, n);
    if (!w)
      return w.takeError();
    std::vector<int64_t> &k = w->kernel, &s = w->stride, &p = w->padBefore, &d = w->dilation;
    if (kind == PoolKind::Lp)
      p.assign(n, 0), d.assign(n, 1);
    for (size_t i = 0; i < n; ++i) {
      g.k[lead + i] = k[i], g.s[lead + i] = s[i], g.p[lead + i] = p[i], g.d[lead + i] = d[i];
    }
  }
  if (indices && (c.type() == nullptr || !llvm::isa<TupleTypeNode>(c.type().get())))
    return kernelError(c, "return_indices needs two results");
  const AttrValue *dv = c.attrs().find("divisor_override");
  int64_t divisor = dv && dv->isInt() ? dv->getInt() : 0;
  double norm = c.attrs().getFloat("norm_type", 2.0);
  if (kind == PoolKind::Lp && !(norm != 0))
    return kernelError(c, "norm_type must not be 0");
  return std::unique_ptr<OpKernel>(
      new PoolNdKernel(kind, g, c.attrs().getBool("count_include_pad", true), divisor, norm,
                       indices));
}

KC_REGISTER_KERNEL_DTYPES(maxpool3d, "nn.MaxPool3d", makePoolNd, (DTypeSet{DType::F32}),
                          (DTypeSet{DType::F32, DType::I64}));
KC_REGISTER_KERNEL(avgpool3d, "nn.AvgPool3d", makePoolNd);
KC_REGISTER_KERNEL(aap3d, "nn.AdaptiveAvgPool3d", makePoolNd);
KC_REGISTER_KERNEL_DTYPES(amp3d, "nn.AdaptiveMaxPool3d", makePoolNd, (DTypeSet{DType::F32}),
                          (DTypeSet{DType::F32, DType::I64}));
KC_REGISTER_KERNEL(lppool1d, "nn.LPPool1d", makePoolNd);
KC_REGISTER_KERNEL(lppool2d, "nn.LPPool2d", makePoolNd);

} // namespace kc::rt
