//===- Gather.cpp - Embedding, index_select, gather, scatter_add ----------===//
//
// Indexed reads and writes with an i64 index tensor; negative indices
// count from the end as in PyTorch. An index out of range stops the run
// with an error naming the op (ExecContext::error), checked before any
// element moves. Rows are copied with memcpy where they are contiguous
// (an embedding row, an index_select slab).
//
//===----------------------------------------------------------------------===//
#include "Operands.h"
#include "Parallel.h"

#include <cstring>

namespace kc::rt {
namespace {

/// Checks every index against [-n, n); sets the error and returns false.
bool checkIndices(const int64_t *idx, int64_t count, int64_t n, ExecContext &ctx) {
  for (int64_t i = 0; i < count; ++i)
    if (idx[i] < -n || idx[i] >= n) {
      ctx.error =
          "index " + std::to_string(idx[i]) + " is out of range for a dim of " + std::to_string(n);
      return false;
    }
  return true;
}

int64_t wrap(int64_t i, int64_t n) { return i < 0 ? i + n : i; }

/// out[o, j, i] = in[o, index[j], i]: index_select, and embedding (the
/// table as in, outer 1).
class SelectKernel final : public OpKernel {
public:
  SelectKernel(AxisLine l, int64_t count, int input, int index, Tensor table, size_t esize)
      : l_(l), count_(count), input_(input), index_(index), table_(std::move(table)),
        esize_(esize) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const int64_t *idx = in[index_]->data<int64_t>();
    if (!checkIndices(idx, count_, l_.len, ctx))
      return;
    auto *x = static_cast<const uint8_t *>(table_.raw() ? table_.raw() : in[input_]->raw());
    auto *y = static_cast<uint8_t *>(out[0]->raw());
    size_t row = size_t(l_.inner) * esize_;
    parallelFor(l_.outer * count_, l_.outer * count_ * l_.inner > 65536, [&](int64_t oj) {
      int64_t o = oj / count_, j = oj % count_;
      std::memcpy(y + oj * row, x + (o * l_.len + wrap(idx[j], l_.len)) * row, row);
    });
  }

private:
  AxisLine l_;
  int64_t count_;
  int input_, index_;
  Tensor table_;
  size_t esize_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeEmbedding(const CallNode &c,
                                                        const KernelBuildContext &) {
  bool functional = c.calleeName() == "F.embedding";
  if (auto e = refuseAttr(c, "max_norm", AttrValue(),
                          "renormalizing the rows it reads to max_norm; kc reads them as they are"))
    return e;
  int index = namedOperand(c, "input");
  if (index < 0)
    index = 0;
  if (operandDType(c, size_t(index)) != DType::I64)
    return kernelError(c, "the indices must be i64, got " +
                              dtypeName(operandDType(c, size_t(index))).str());
  auto is = inputShape(c, size_t(index));
  if (!is)
    return is.takeError();
  Tensor table;
  int input = -1;
  std::vector<int64_t> ts;
  if (functional) {
    input = namedOperand(c, "weight");
    if (input < 0)
      input = index == 0 ? 1 : 0;
    auto s = inputShape(c, size_t(input));
    if (!s)
      return s.takeError();
    ts = *s;
    if (auto e = requireF32(c, {size_t(input)}))
      return e;
  } else {
    auto w = weightTensor(c, "weight", true, WeightUse::ReadOnly);
    if (!w)
      return w.takeError();
    ts.assign(w->shape().begin(), w->shape().end());
    table = std::move(*w);
  }
  if (ts.size() != 2)
    return kernelError(c, "the table must be 2-d, got " + shapeToString(ts));
  AxisLine l{1, ts[0], ts[1]};
  return std::unique_ptr<OpKernel>(
      new SelectKernel(l, numElements(*is), input, index, std::move(table), sizeof(float)));
}
KC_REGISTER_KERNEL_DTYPES(embedding, "nn.Embedding", makeEmbedding,
                          (DTypeSet{DType::F32, DType::I64}), (DTypeSet{DType::F32}));
KC_REGISTER_KERNEL_DTYPES(fembedding, "F.embedding", makeEmbedding,
                          (DTypeSet{DType::F32, DType::I64}), (DTypeSet{DType::F32}));

llvm::Expected<std::unique_ptr<OpKernel>> makeIndexSelect(const CallNode &c,
                                                          const KernelBuildContext &) {
  int input = namedOperand(c, "input"), index = namedOperand(c, "index");
  if (input < 0)
    input = 0;
  if (index < 0)
    index = 1;
  auto s = inputShape(c, size_t(input));
  if (!s)
    return s.takeError();
  auto is = inputShape(c, size_t(index));
  if (!is)
    return is.takeError();
  if (operandDType(c, size_t(index)) != DType::I64 || is->size() > 1)
    return kernelError(c, "the index must be a 1-d i64 tensor");
  auto l = axisLine(c, *s, c.attrs().getInt("dim", 0));
  if (!l)
    return l.takeError();
  return std::unique_ptr<OpKernel>(
      new SelectKernel(*l, numElements(*is), input, index, Tensor(),
                       std::max<size_t>(dtypeSize(outputDType(c)), 1)));
}
KC_REGISTER_KERNEL_DTYPES(index_select, "torch.index_select", makeIndexSelect, (kRealDTypes),
                          (kRealDTypes));

/// torch.gather (Scatter false) and torch.scatter_add (true) along a dim,
/// the index of the same rank as the input (smaller or equal dims).
template <bool Scatter> class GatherKernel final : public OpKernel {
public:
  GatherKernel(std::vector<int64_t> in, std::vector<int64_t> idx, int dim, int ops[3])
      : in_(std::move(in)), idx_(std::move(idx)), dim_(dim), input_(ops[0]), index_(ops[1]),
        src_(ops[2]) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    const float *x = in[input_]->data<float>();
    const int64_t *idx = in[index_]->data<int64_t>();
    float *y = out[0]->data<float>();
    int64_t count = numElements(idx_), n = in_[dim_];
    if (!checkIndices(idx, count, n, ctx))
      return;
    size_t r = in_.size();
    std::vector<int64_t> stride(r);
    int64_t st = 1;
    for (size_t d = r; d-- > 0;)
      stride[d] = st, st *= in_[d];
    if (Scatter && y != x)
      std::memcpy(y, x, out[0]->nbytes());
    const float *src = Scatter ? in[src_]->data<float>() : nullptr;
    std::vector<int64_t> pos(r, 0);
    for (int64_t k = 0; k < count; ++k) {
      int64_t off = 0;
      for (size_t d = 0; d < r; ++d)
        off += (int(d) == dim_ ? wrap(idx[k], n) : pos[d]) * stride[d];
      if (Scatter)
        y[off] += src[srcOffset(pos)];
      else
        y[k] = x[off];
      for (size_t d = r; d-- > 0;) {
        if (++pos[d] < idx_[d])
          break;
        pos[d] = 0;
      }
    }
  }

private:
  /// src has the index's positions within its own (possibly larger) shape.
  int64_t srcOffset(const std::vector<int64_t> &pos) const {
    int64_t off = 0;
    for (size_t d = 0; d < pos.size(); ++d)
      off = off * srcShape_[d] + pos[d];
    return off;
  }

public:
  std::vector<int64_t> srcShape_;

private:
  std::vector<int64_t> in_, idx_;
  int dim_, input_, index_, src_;
};

template <bool Scatter>
llvm::Expected<std::unique_ptr<OpKernel>> makeGather(const CallNode &c,
                                                     const KernelBuildContext &) {
  int ops[3] = {namedOperand(c, "input"), namedOperand(c, "index"), namedOperand(c, "src")};
  for (int i = 0; i < (Scatter ? 3 : 2); ++i)
    if (ops[i] < 0)
      ops[i] = i;
  auto s = inputShape(c, size_t(ops[0]));
  if (!s)
    return s.takeError();
  auto is = inputShape(c, size_t(ops[1]));
  if (!is)
    return is.takeError();
  if (auto e = requireF32(c, {size_t(ops[0])}))
    return e;
  if (operandDType(c, size_t(ops[1])) != DType::I64)
    return kernelError(c, "the index must be i64");
  int dim = normAxis(c.attrs().getInt("dim", 0), s->size());
  if (dim < 0 || dim >= int(s->size()) || is->size() != s->size())
    return kernelError(c, "input and index need the same rank and a dim in range");
  std::vector<int64_t> srcShape = *is;
  if (Scatter) {
    auto ss = inputShape(c, size_t(ops[2]));
    if (!ss)
      return ss.takeError();
    if (auto e = requireF32(c, {size_t(ops[2])}))
      return e;
    srcShape = *ss;
  }
  for (size_t d = 0; d < s->size(); ++d)
    if ((*is)[d] > srcShape[d] || (int(d) != dim && (*is)[d] > (*s)[d]))
      return kernelError(c, "index " + shapeToString(*is) + " is larger than input " +
                                shapeToString(*s) + (Scatter ? " or src" : ""));
  auto k = std::make_unique<GatherKernel<Scatter>>(*s, *is, dim, ops);
  k->srcShape_ = srcShape;
  return std::unique_ptr<OpKernel>(std::move(k));
}
KC_REGISTER_KERNEL_DTYPES(gather, "torch.gather", makeGather<false>,
                          (DTypeSet{DType::F32, DType::I64}), (DTypeSet{DType::F32}));
KC_REGISTER_KERNEL_DTYPES(scatter_add, "torch.scatter_add", makeGather<true>,
                          (DTypeSet{DType::F32, DType::I64}), (DTypeSet{DType::F32}));

} // namespace
} // namespace kc::rt
