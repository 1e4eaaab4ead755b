//===- ArgReduce.cpp - max/min, argmax/argmin, topk, sort, cumsum ---------===//
//
// Reductions that also say where: along one dim, viewed as (outer, len,
// inner), each output position scans its `len` values (without a dim, the
// flattened input is one line). PyTorch's rules: a
// NaN is the maximum and the minimum (the first one wins), ties go to the
// first index; topk orders NaN above every number and, with sorted=True,
// returns the values best first; sort is topk of the whole dim.
//
//===----------------------------------------------------------------------===//
#include "Operands.h"
#include "Parallel.h"

#include <algorithm>
#include <cstring>

namespace kc::rt {
namespace {

/// `v` beats `best` for a maximum (IsMax) or a minimum.
template <bool IsMax> bool better(float v, float best) {
  if (std::isnan(best))
    return false;
  if (std::isnan(v))
    return true;
  return IsMax ? v > best : v < best;
}

/// Values (optional) and indices (optional) of the extreme along the line.
template <bool IsMax> class ExtremeKernel final : public OpKernel {
public:
  ExtremeKernel(AxisLine l, bool values, bool indices)
      : l_(l), values_(values), indices_(indices) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>();
    float *v = values_ ? out[0]->data<float>() : nullptr;
    int64_t *ix = indices_ ? out[values_ ? 1 : 0]->data<int64_t>() : nullptr;
    const int64_t len = l_.len, inner = l_.inner;
    parallelFor(l_.outer, l_.outer * len * inner > 32768, [&](int64_t o) {
      const float *xs = x + o * len * inner;
      if (inner == 1) { // a contiguous line: its extreme, then where it first is
        int64_t at = firstExtreme(xs, len);
        if (v)
          v[o] = xs[at];
        if (ix)
          ix[o] = at;
        return;
      }
      for (int64_t i = 0; i < inner; ++i) {
        float best = xs[i];
        int64_t at = 0;
        for (int64_t j = 1; j < len; ++j)
          if (better<IsMax>(xs[j * inner + i], best))
            best = xs[j * inner + i], at = j;
        if (v)
          v[o * inner + i] = best;
        if (ix)
          ix[o * inner + i] = at;
      }
    });
  }

private:
  /// The index of the first NaN, else of the first maximum (minimum): the
  /// extreme found in 8 lanes without a branch on the data, then searched
  /// for (a value equal to it; -0 equals 0, as the direct scan's strict
  /// comparison keeps the first of them).
  static int64_t firstExtreme(const float *x, int64_t n) {
    constexpr int64_t L = 8;
    float lanes[L];
    bool nan = false;
    std::fill(lanes, lanes + L, x[0]);
    int64_t j = 0;
    for (; j + L <= n; j += L)
      for (int64_t k = 0; k < L; ++k) {
        float e = x[j + k];
        nan |= e != e;
        lanes[k] = IsMax ? (lanes[k] < e ? e : lanes[k]) : (e < lanes[k] ? e : lanes[k]);
      }
    float m = lanes[0];
    for (int64_t k = 1; k < L; ++k)
      m = IsMax ? (m < lanes[k] ? lanes[k] : m) : (lanes[k] < m ? lanes[k] : m);
    for (; j < n; ++j) {
      nan |= x[j] != x[j];
      m = IsMax ? (m < x[j] ? x[j] : m) : (x[j] < m ? x[j] : m);
    }
    for (int64_t i = 0; i < n; ++i)
      if (nan ? x[i] != x[i] : x[i] == m)
        return i;
    return 0;
  }

  AxisLine l_;
  bool values_, indices_;
};

/// torch.max / torch.min (values, and indices when the call has two
/// results) and torch.argmax / torch.argmin (indices alone): along `dim`,
/// or over the flattened input.
template <bool IsMax, bool Values>
llvm::Expected<std::unique_ptr<OpKernel>> makeExtreme(const CallNode &c, const CallShapes &io) {
  const AttrValue *dv = c.attrs().find("dim");
  AxisLine l;
  if (!dv || dv->isNone()) {
    l.len = numElements(io.in);
  } else {
    auto a = axisLine(c, io.in, dv->getInt());
    if (!a)
      return a.takeError();
    l = *a;
  }
  if (l.len == 0)
    return kernelError(c, "reduces an empty dim");
  bool indices = !Values || llvm::isa_and_nonnull<TupleTypeNode>(c.type().get());
  return std::unique_ptr<OpKernel>(new ExtremeKernel<IsMax>(l, Values, indices));
}
KC_REGISTER_KERNEL_DTYPES(max, "torch.max", (withShapes<makeExtreme<true, true>>),
                          (DTypeSet{DType::F32}), (DTypeSet{DType::F32, DType::I64}));
KC_REGISTER_KERNEL_DTYPES(min, "torch.min", (withShapes<makeExtreme<false, true>>),
                          (DTypeSet{DType::F32}), (DTypeSet{DType::F32, DType::I64}));
KC_REGISTER_KERNEL_DTYPES(argmax, "torch.argmax", (withShapes<makeExtreme<true, false>>),
                          (DTypeSet{DType::F32}), (DTypeSet{DType::I64}));
KC_REGISTER_KERNEL_DTYPES(argmin, "torch.argmin", (withShapes<makeExtreme<false, false>>),
                          (DTypeSet{DType::F32}), (DTypeSet{DType::I64}));

/// torch.topk along a dim.
class TopkKernel final : public OpKernel {
public:
  /// A line's index fits the low half of a sort key.
  static constexpr int64_t kMaxLen = int64_t(1) << 32;

  TopkKernel(AxisLine l, int64_t k, bool largest) : l_(l), k_(k), largest_(largest) {
    scratch_.floats = 2 * l.len; // one line's sort keys, 64 bits each
  }
  size_t workspaceBytes() const override { return scratch_.bytes(); }
  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const float *x = in[0]->data<float>();
    float *v = out[0]->data<float>();
    int64_t *ix = out[1]->data<int64_t>();
    const int64_t len = l_.len, inner = l_.inner, k = k_;
    bool largest = largest_;
    const int64_t lines = l_.outer * inner;
    bool worthIt = lines * len > 32768;
    parallelForScratch(lines, worthIt, scratch_, ctx.workspace, [&](int64_t oi, float *s) {
      int64_t o = oi / inner, i = oi % inner;
      const float *xs = x + o * len * inner + i;
      // One 64-bit key per value, ordered as the result: the value's bits
      // mapped to an unsigned order (NaN above every number, -0 equal to
      // 0), complemented when largest first, above the index (ties: the
      // first index first). Integer keys sort several times faster than
      // indices compared through the values.
      uint64_t *keys = reinterpret_cast<uint64_t *>(s);
      for (int64_t j = 0; j < len; ++j) {
        float f = xs[j * inner];
        uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        u = std::isnan(f) ? 0xffffffffu : f == 0.f ? 0x80000000u : (u >> 31) ? ~u : u | 0x80000000u;
        if (largest)
          u = ~u;
        keys[j] = (uint64_t(u) << 32) | uint64_t(j);
      }
      if (k * 8 < len)
        std::partial_sort(keys, keys + k, keys + len);
      else
        std::sort(keys, keys + len);
      for (int64_t j = 0; j < k; ++j) {
        int64_t idx = int64_t(keys[j] & 0xffffffffu);
        v[(o * k + j) * inner + i] = xs[idx * inner];
        ix[(o * k + j) * inner + i] = idx;
      }
    });
  }

private:
  AxisLine l_;
  int64_t k_;
  bool largest_;
  ThreadScratch scratch_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeTopk(const CallNode &c, const CallShapes &io) {
  // PyTorch's order of unsorted results is its selection algorithm's;
  // kc's would be another.
  if (auto e = refuseAttr(c, "sorted", AttrValue::boolean(true),
                          "results in the order of PyTorch's selection algorithm; kc sorts them"))
    return e;
  auto l = axisLine(c, io.in, c.attrs().getInt("dim", -1));
  if (!l)
    return l.takeError();
  int64_t k = c.attrs().getInt("k", 1);
  if (k < 0 || k > l->len)
    return kernelError(c, "k=" + llvm::Twine(k) + " is out of range for a dim of " +
                              llvm::Twine(l->len));
  auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(c.type().get());
  if (!tt || tt->size() != 2)
    return kernelError(c, "needs its two results, values and indices");
  if (l->len > TopkKernel::kMaxLen)
    return kernelError(c, "a dim of " + llvm::Twine(l->len) + " (at most 2^32)");
  return std::unique_ptr<OpKernel>(new TopkKernel(*l, k, c.attrs().getBool("largest", true)));
}
KC_REGISTER_KERNEL_DTYPES(topk, "torch.topk", withShapes<makeTopk>, (DTypeSet{DType::F32}),
                          (DTypeSet{DType::F32, DType::I64}));

/// torch.sort: topk of the whole dim, largest first when descending. Ties
/// keep their order (the first index first), so stable and unstable sorts
/// give PyTorch's stable result; NaN sorts above every number, as in PyTorch.
llvm::Expected<std::unique_ptr<OpKernel>> makeSort(const CallNode &c, const CallShapes &io) {
  auto l = axisLine(c, io.in, c.attrs().getInt("dim", -1));
  if (!l)
    return l.takeError();
  auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(c.type().get());
  if (!tt || tt->size() != 2)
    return kernelError(c, "needs its two results, values and indices");
  if (l->len > TopkKernel::kMaxLen)
    return kernelError(c, "a dim of " + llvm::Twine(l->len) + " (at most 2^32)");
  return std::unique_ptr<OpKernel>(
      new TopkKernel(*l, l->len, c.attrs().getBool("descending", false)));
}
KC_REGISTER_KERNEL_DTYPES(sort, "torch.sort", withShapes<makeSort>, (DTypeSet{DType::F32}),
                          (DTypeSet{DType::F32, DType::I64}));

/// torch.cumsum / torch.cumprod along a dim, accumulated in double (as
/// PyTorch on the CPU), `inner` positions at a time.
template <bool Sum> class ScanKernel final : public OpKernel {
public:
  explicit ScanKernel(AxisLine l) : l_(l) {
    scratch_.floats = 2 * l.inner; // one double accumulator per inner position
  }
  size_t workspaceBytes() const override { return scratch_.bytes(); }
  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const float *x = in[0]->data<float>();
    float *y = out[0]->data<float>();
    const int64_t len = l_.len, inner = l_.inner;
    bool worthIt = l_.outer * len * inner > 32768;
    parallelForScratch(l_.outer, worthIt, scratch_, ctx.workspace, [&](int64_t o, float *s) {
      if (inner == 1) { // a contiguous line, one running value
        const float *xs = x + o * len;
        float *ys = y + o * len;
        double a = Sum ? 0.0 : 1.0;
        for (int64_t j = 0; j < len; ++j) {
          a = Sum ? a + xs[j] : a * xs[j];
          ys[j] = float(a);
        }
        return;
      }
      double *acc = reinterpret_cast<double *>(s);
      std::fill(acc, acc + inner, Sum ? 0.0 : 1.0);
      const float *xs = x + o * len * inner;
      float *ys = y + o * len * inner;
      for (int64_t j = 0; j < len; ++j)
        for (int64_t i = 0; i < inner; ++i) {
          acc[i] = Sum ? acc[i] + xs[j * inner + i] : acc[i] * xs[j * inner + i];
          ys[j * inner + i] = float(acc[i]);
        }
    });
  }

private:
  AxisLine l_;
  ThreadScratch scratch_;
};

template <bool Sum>
llvm::Expected<std::unique_ptr<OpKernel>> makeScan(const CallNode &c, const CallShapes &io) {
  if (outputDType(c) != DType::F32)
    return kernelError(c, "only an f32 result is supported");
  auto l = axisLine(c, io.in, c.attrs().getInt("dim", 0));
  if (!l)
    return l.takeError();
  return std::unique_ptr<OpKernel>(new ScanKernel<Sum>(*l));
}
KC_REGISTER_KERNEL(cumsum, "torch.cumsum", withShapes<makeScan<true>>);
KC_REGISTER_KERNEL(cumprod, "torch.cumprod", withShapes<makeScan<false>>);

} // namespace
} // namespace kc::rt
