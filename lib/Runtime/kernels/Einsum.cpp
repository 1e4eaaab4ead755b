//===- Einsum.cpp - torch.einsum ------------------------------------------===//
//
// The equation (kc/IR/Einsum.h) becomes a plan at load time. Each operand
// is first reduced to the labels still needed (a diagonal for a repeated
// label, a sum for a label used nowhere else); then the operands are
// contracted left to right, each contraction a batched sgemm over
// [batch, M, K] x [batch, K, N] after copying both factors into that
// order (broadcast ellipsis dims are expanded by the copy); a last copy
// puts the labels in the result's order. So 'bhqd,bhkd->bhqk' is one
// sgemm per (b, h), and a permute or a trace is one pass of copies.
//
//===----------------------------------------------------------------------===//
#include "Blas.h"
#include "Operands.h"

#include "kc/IR/Einsum.h"

#include <cstring>

namespace kc::rt {
namespace {

/// A tensor of the plan: a kernel input, a scratch buffer, or the output.
struct Buf {
  enum Where { Input, Temp, Output } where = Temp;
  int index = 0;
  std::vector<int> labels;
  std::vector<int64_t> shape;
};

struct Step {
  bool contract = false;
  Buf a, b, dst; ///< b: the second factor of a contraction
  int64_t batch = 1, M = 1, N = 1, K = 1;
  Buf pa, pb; ///< the factors in [batch, M, K] / [batch, K, N] order
  bool transA = false, transB = false; ///< pa is [batch, K, M], pb [batch, N, K]
};

/// dst[i] = Σ src over the labels of src not in dst, dims of dst read
/// through their labels' strides in src (0 where src has size 1: the
/// broadcast); repeated labels of src take the diagonal.
void reduceInto(const float *src, const Buf &s, float *dst, const Buf &d) {
  std::vector<int64_t> stride(kEllipsisLabel + 16, 0);
  int64_t st = 1;
  for (size_t i = s.shape.size(); i-- > 0;) {
    if (s.shape[i] != 1)
      stride[s.labels[i]] += st;
    st *= s.shape[i];
  }
  std::vector<int> summed;
  std::vector<int64_t> summedSize;
  for (size_t i = 0; i < s.labels.size(); ++i) {
    int l = s.labels[i];
    if (std::count(d.labels.begin(), d.labels.end(), l) == 0 &&
        std::count(summed.begin(), summed.end(), l) == 0) {
      summed.push_back(l);
      summedSize.push_back(s.shape[i]);
    }
  }
  int64_t nOut = numElements(d.shape), nSum = numElements(summedSize);
  std::vector<int64_t> oi(d.shape.size(), 0), si(summed.size(), 0);
  int64_t base = 0;
  if (nSum == 1 && !d.shape.empty()) {
    // A copy (a permutation, a diagonal, a broadcast): rows of the last dim.
    const int64_t W = d.shape.back(), ws = stride[d.labels.back()];
    const size_t r = d.shape.size();
    for (int64_t o = 0; o < nOut; o += W) {
      for (int64_t j = 0; j < W; ++j)
        dst[o + j] = src[base + j * ws];
      for (size_t k = r - 1; k-- > 0;) {
        base += stride[d.labels[k]];
        if (++oi[k] < d.shape[k])
          break;
        base -= oi[k] * stride[d.labels[k]];
        oi[k] = 0;
      }
    }
    return;
  }
  for (int64_t o = 0; o < nOut; ++o) {
    double acc = 0;
    std::fill(si.begin(), si.end(), 0);
    int64_t off = 0;
    for (int64_t r = 0; r < nSum; ++r) {
      acc += src[base + off];
      for (size_t k = summed.size(); k-- > 0;) {
        off += stride[summed[k]];
        if (++si[k] < summedSize[k])
          break;
        off -= si[k] * stride[summed[k]];
        si[k] = 0;
      }
    }
    dst[o] = float(acc);
    for (size_t k = d.shape.size(); k-- > 0;) {
      base += stride[d.labels[k]];
      if (++oi[k] < d.shape[k])
        break;
      base -= oi[k] * stride[d.labels[k]];
      oi[k] = 0;
    }
  }
}

class EinsumKernel final : public OpKernel {
public:
  /// Temporaries of `temps` floats each, laid out in the workspace.
  EinsumKernel(std::vector<Step> steps, std::vector<int64_t> temps) : steps_(std::move(steps)) {
    for (int64_t n : temps) {
      tempOffsets_.push_back(workspaceFloats_);
      workspaceFloats_ += size_t(n + 15) / 16 * 16;
    }
  }
  size_t workspaceBytes() const override { return workspaceFloats_ * sizeof(float); }
  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    auto ptr = [&](const Buf &b) -> float * {
      switch (b.where) {
      case Buf::Input:
        return const_cast<float *>(in[b.index]->data<float>());
      case Buf::Output:
        return out[0]->data<float>();
      case Buf::Temp:
        return static_cast<float *>(ctx.workspace) + tempOffsets_[b.index];
      }
      return nullptr;
    };
    for (const Step &s : steps_) {
      if (!s.contract) {
        reduceInto(ptr(s.a), s.a, ptr(s.dst), s.dst);
        continue;
      }
      const float *a = ptr(s.a), *b = ptr(s.b);
      if (!s.transA && (s.pa.labels != s.a.labels || s.pa.shape != s.a.shape)) {
        reduceInto(a, s.a, ptr(s.pa), s.pa);
        a = ptr(s.pa);
      }
      if (!s.transB && (s.pb.labels != s.b.labels || s.pb.shape != s.b.shape)) {
        reduceInto(b, s.b, ptr(s.pb), s.pb);
        b = ptr(s.pb);
      }
      float *c = ptr(s.dst);
      for (int64_t t = 0; t < s.batch; ++t)
        sgemm(s.transA, s.transB, s.M, s.N, s.K, 1.f, a + t * s.M * s.K, s.transA ? s.M : s.K,
              b + t * s.K * s.N, s.transB ? s.K : s.N, 0.f, c + t * s.M * s.N, s.N);
    }
  }

private:
  std::vector<Step> steps_;
  std::vector<size_t> tempOffsets_;
  size_t workspaceFloats_ = 0;
};

class Planner {
public:
  explicit Planner(const EinsumSpec &spec) : spec_(spec) {}

  Buf temp(std::vector<int> labels) {
    Buf b;
    b.where = Buf::Temp;
    b.index = int(temps.size());
    b.labels = std::move(labels);
    for (int l : b.labels)
      b.shape.push_back(spec_.sizes[l]);
    temps.push_back(numElements(b.shape));
    return b;
  }

  /// `b` reduced to the labels in `keep`, in first-appearance order.
  Buf reduce(const Buf &b, const std::vector<bool> &keep) {
    std::vector<int> labels;
    for (int l : b.labels)
      if (keep[l] && std::count(labels.begin(), labels.end(), l) == 0)
        labels.push_back(l);
    if (labels == b.labels)
      return b;
    Buf d = temp(labels);
    Step s;
    s.a = b, s.dst = d;
    steps.push_back(s);
    return d;
  }

  Buf contract(const Buf &a, const Buf &b, const std::vector<bool> &keep) {
    auto in = [](const Buf &x, int l) {
      return std::count(x.labels.begin(), x.labels.end(), l) != 0;
    };
    std::vector<int> batch, M, N, K;
    for (int l : a.labels)
      (in(b, l) ? (keep[l] ? batch : K) : M).push_back(l);
    for (int l : b.labels)
      if (!in(a, l))
        N.push_back(l);
    Step s;
    s.contract = true;
    s.a = a, s.b = b;
    auto cat = [](std::initializer_list<const std::vector<int> *> parts) {
      std::vector<int> r;
      for (auto *p : parts)
        r.insert(r.end(), p->begin(), p->end());
      return r;
    };
    auto size = [&](const std::vector<int> &ls) {
      int64_t n = 1;
      for (int l : ls)
        n *= spec_.sizes[l];
      return n;
    };
    s.batch = size(batch), s.M = size(M), s.N = size(N), s.K = size(K);
    // A factor already in transposed order is read so by sgemm, not copied
    // ('bhqd,bhkd->bhqk' reads k as [bh, N, K]).
    s.transA = M.size() && K.size() && asIs(a, cat({&batch, &K, &M}));
    s.transB = N.size() && K.size() && asIs(b, cat({&batch, &N, &K}));
    s.pa = s.transA ? a : layout(a, cat({&batch, &M, &K}));
    s.pb = s.transB ? b : layout(b, cat({&batch, &K, &N}));
    s.dst = temp(cat({&batch, &M, &N}));
    steps.push_back(s);
    return s.dst;
  }

  /// Whether `x` has `labels` in that order, at full size.
  bool asIs(const Buf &x, const std::vector<int> &labels) const {
    std::vector<int64_t> shape;
    for (int l : labels)
      shape.push_back(spec_.sizes[l]);
    return labels == x.labels && shape == x.shape;
  }

  /// `x` itself if its labels already are `labels` at full size, else a
  /// scratch buffer for that layout.
  Buf layout(const Buf &x, std::vector<int> labels) {
    if (asIs(x, labels))
      return x;
    return temp(std::move(labels));
  }

  std::vector<Step> steps;
  std::vector<int64_t> temps;

private:
  const EinsumSpec &spec_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeEinsum(const CallNode &c,
                                                     const KernelBuildContext &) {
  auto shapes = inputShapes(c, 1);
  if (!shapes)
    return shapes.takeError();
  auto spec = parseEinsum(c.attrs().getString("equation", ""), *shapes);
  if (!spec)
    return kernelError(c, llvm::toString(spec.takeError()));
  Planner plan(*spec);
  const size_t n = shapes->size(), L = spec->sizes.size();
  auto labelsOf = [&](size_t from, bool withOutput) {
    std::vector<bool> used(L, false);
    if (withOutput)
      for (int l : spec->output)
        used[l] = true;
    for (size_t j = from; j < n; ++j)
      for (int l : spec->inputs[j])
        used[l] = true;
    return used;
  };
  std::vector<Buf> ops;
  for (size_t i = 0; i < n; ++i) {
    Buf b;
    b.where = Buf::Input, b.index = int(i), b.labels = spec->inputs[i], b.shape = (*shapes)[i];
    // Needed: in the result or in another operand.
    std::vector<bool> keep(L, false);
    for (int l : spec->output)
      keep[l] = true;
    for (size_t j = 0; j < n; ++j)
      if (j != i)
        for (int l : spec->inputs[j])
          keep[l] = true;
    ops.push_back(plan.reduce(b, keep));
  }
  Buf acc = ops[0];
  for (size_t i = 1; i < n; ++i)
    acc = plan.contract(acc, ops[i], labelsOf(i + 1, true));
  // The last copy, into the result in its label order.
  Buf outBuf;
  outBuf.where = Buf::Output, outBuf.labels = spec->output;
  for (int l : spec->output)
    outBuf.shape.push_back(spec->sizes[l]);
  auto out = outputShape(c);
  if (!out)
    return out.takeError();
  if (*out != outBuf.shape)
    return kernelError(c, "the result type " + shapeToString(*out) + " does not match " +
                              shapeToString(outBuf.shape));
  // A last contraction already in the result's order writes the result.
  if (acc.where == Buf::Temp && acc.labels == outBuf.labels && !plan.steps.empty() &&
      plan.steps.back().contract && plan.steps.back().dst.index == acc.index &&
      plan.steps.back().dst.where == Buf::Temp) {
    plan.steps.back().dst = outBuf;
  } else {
    Step last;
    last.a = acc, last.dst = outBuf;
    plan.steps.push_back(last);
  }
  return std::unique_ptr<OpKernel>(new EinsumKernel(std::move(plan.steps), std::move(plan.temps)));
}
KC_REGISTER_KERNEL(einsum, "torch.einsum", makeEinsum);

} // namespace
} // namespace kc::rt
