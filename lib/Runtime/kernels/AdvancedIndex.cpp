//===- AdvancedIndex.cpp - Tensor.index: x[None, idx, ...] ----------------===//
//
// PyTorch's advanced indexing with i64 index tensors, as pnnx writes it:
// `Tensor.index(input, expr)` where expr is a list of index operands and
// Nones (`[None, @0]` is x[:, idx]). The index tensors broadcast together
// to a shape B; when the indexed dims are adjacent, B takes their place in
// the result, otherwise B comes first and the sliced dims follow (NumPy's
// rule). Dims after the list are whole and move as contiguous rows.
// Negative indices count from the end; one out of range stops the run
// naming the op, before any element moves.
//
//===----------------------------------------------------------------------===//
#include "Operands.h"
#include "Parallel.h"

#include "kc/IR/Rpn.h"
#include "kc/Support/Quote.h"

#include <cstring>

namespace kc::rt {
namespace {

/// One dim of the result over the indexed dims: a sliced input dim, or a
/// dim of the broadcast index shape.
struct OutAxis {
  bool broadcast;
  int dim; ///< input dim (sliced) or dim of B
};

class IndexKernel final : public OpKernel {
public:
  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    for (size_t j = 0; j < idx_.size(); ++j) {
      const int64_t *p = in[1 + j]->data<int64_t>();
      int64_t n = inShape_[idx_[j].dim];
      for (int64_t i = 0, e = numElements(idx_[j].shape); i < e; ++i)
        if (p[i] < -n || p[i] >= n) {
          ctx.error = "index " + std::to_string(p[i]) + " is out of range for dim " +
                      std::to_string(idx_[j].dim) + " of size " + std::to_string(n);
          return;
        }
    }
    auto *x = static_cast<const uint8_t *>(in[0]->raw());
    auto *y = static_cast<uint8_t *>(out[0]->raw());
    const size_t row = size_t(inner_) * esize_;
    // The last axis of the indexed part is walked in a loop of its own:
    // along it only its own term of the offset changes.
    const size_t A = axes_.size();
    const int64_t last = outDims_.back(), lines = numElements(outDims_) / std::max<int64_t>(last, 1);
    const OutAxis &la = axes_.back();
    parallelFor(lines, lines * last * inner_ > 65536, [&](int64_t r) {
      int64_t rem = r, off = 0;
      int64_t bpos[16] = {0};
      for (size_t a = A - 1; a-- > 0;) {
        int64_t c = rem % outDims_[a];
        rem /= outDims_[a];
        if (axes_[a].broadcast)
          bpos[axes_[a].dim] = c;
        else
          off += c * inStride_[axes_[a].dim];
      }
      // Each index tensor's element at position 0 of the last axis, and
      // its step along it.
      int64_t k0[16], kstep[16];
      const int64_t *ip[16];
      for (size_t j = 0; j < idx_.size(); ++j) {
        ip[j] = in[1 + j]->data<int64_t>();
        k0[j] = 0;
        for (size_t b = 0; b < bShape_.size(); ++b)
          k0[j] += bpos[b] * idx_[j].bstride[b];
        kstep[j] = la.broadcast ? idx_[j].bstride[size_t(la.dim)] : 0;
      }
      const int64_t sliceStep = la.broadcast ? 0 : inStride_[la.dim];
      uint8_t *dst = y + r * last * row;
      if (idx_.size() == 1 && la.broadcast && inner_ == 1 && esize_ == sizeof(float)) {
        // One index along the line, 4-byte elements one by one: a gather.
        const int64_t n = inShape_[idx_[0].dim], st = inStride_[idx_[0].dim];
        const int64_t *p = ip[0] + k0[0];
        const float *src = reinterpret_cast<const float *>(x) + off;
        float *d = reinterpret_cast<float *>(dst);
        for (int64_t i = 0; i < last; ++i) {
          int64_t v = p[i * kstep[0]];
          d[i] = src[(v + (v < 0 ? n : 0)) * st];
        }
        return;
      }
      for (int64_t i = 0; i < last; ++i) {
        int64_t at = off + i * sliceStep;
        for (size_t j = 0; j < idx_.size(); ++j) {
          int64_t v = ip[j][k0[j] + i * kstep[j]], n = inShape_[idx_[j].dim];
          at += (v < 0 ? v + n : v) * inStride_[idx_[j].dim];
        }
        std::memcpy(dst + size_t(i) * row, x + at * int64_t(esize_), row);
      }
    });
  }

  struct Index {
    int dim;                      ///< the input dim it indexes
    std::vector<int64_t> shape;   ///< its own shape
    std::vector<int64_t> bstride; ///< its element stride per dim of B (0: broadcast)
  };
  std::vector<int64_t> inShape_, inStride_, bShape_, outDims_;
  std::vector<Index> idx_;
  std::vector<OutAxis> axes_;
  int64_t inner_ = 1;
  size_t esize_ = 4;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeIndex(const CallNode &c,
                                                    const KernelBuildContext &ctx) {
  if (!ctx.module)
    return kernelError(c, "needs the module its list of index operands is a function of");
  const Module &m = *ctx.module;
  const ExprNode *list = nullptr;
  for (size_t i = 0; i < c.numArgs(); ++i)
    if (c.keys()[i].role != ArgRole::Weight && listExpressionItems(*c.arg(i), m))
      list = c.arg(i).get();
  if (c.numArgs() == 1 && c.attrs().has("expr"))
    return kernelError(c, "indices written into the call as constants (expr=" +
                              clipInput(c.attrs().getString("expr", "")) +
                              ") are not supported; only index operands");
  if (!list || c.numArgs() != 2 || list != c.arg(1).get())
    return kernelError(c, "expects an input, then a list of index operands and Nones");
  auto s = staticShape(c, c.arg(0)->type());
  if (!s)
    return s.takeError();
  auto items = *listExpressionItems(*list, m);
  auto *lc = llvm::cast<CallNode>(list);
  auto k = std::make_unique<IndexKernel>();
  k->inShape_ = *s;
  size_t rank = s->size();
  if (items.size() > rank || rank > 16)
    return kernelError(c, llvm::Twine(items.size()) + " indices for a " + llvm::Twine(rank) +
                              "-d input");
  k->inStride_.assign(rank, 1);
  for (size_t d = rank; d-- > 1;)
    k->inStride_[d - 1] = k->inStride_[d] * (*s)[d];
  for (size_t d = items.size(); d < rank; ++d)
    k->inner_ *= (*s)[d];
  // The index tensors, and their broadcast shape B.
  for (size_t d = 0; d < items.size(); ++d) {
    if (items[d] < 0)
      continue;
    const ExprNode *a = lc->arg(size_t(items[d])).get();
    auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(a->type().get());
    if (!tt || tt->dtype() != DType::I64)
      return kernelError(c, "index " + llvm::Twine(d) + " must be an i64 tensor, got " +
                                (tt ? dtypeName(tt->dtype()).str() : std::string("?")) +
                                " (bool masks give a shape known only at run time)");
    auto is = staticShape(c, a->type());
    if (!is)
      return is.takeError();
    k->idx_.push_back({int(d), *is, {}});
    if (is->size() > k->bShape_.size())
      k->bShape_.insert(k->bShape_.begin(), is->size() - k->bShape_.size(), 1);
    for (size_t i = 0; i < is->size(); ++i) {
      int64_t &b = k->bShape_[k->bShape_.size() - is->size() + i];
      int64_t v = (*is)[i];
      if (b != v && b != 1 && v != 1)
        return kernelError(c, "index shapes do not broadcast: " + shapeToString(*is));
      b = b == 1 ? v : b;
    }
  }
  if (k->idx_.empty() || k->bShape_.size() > 16)
    return kernelError(c, "expects at least one index tensor");
  for (auto &ix : k->idx_) {
    size_t lead = k->bShape_.size() - ix.shape.size();
    ix.bstride.assign(k->bShape_.size(), 0);
    int64_t st = 1;
    for (size_t i = ix.shape.size(); i-- > 0;) {
      ix.bstride[lead + i] = ix.shape[i] == 1 ? 0 : st;
      st *= ix.shape[i];
    }
  }
  // Adjacent index dims keep their place; otherwise B goes first.
  int first = k->idx_.front().dim, last = k->idx_.back().dim;
  bool adjacent = last - first + 1 == int(k->idx_.size());
  auto addB = [&] {
    for (size_t b = 0; b < k->bShape_.size(); ++b)
      k->axes_.push_back({true, int(b)});
  };
  if (!adjacent)
    addB();
  for (int d = 0; d < int(items.size()); ++d) {
    if (adjacent && d == first)
      addB();
    if (items[size_t(d)] < 0)
      k->axes_.push_back({false, d});
  }
  if (k->axes_.size() > 16)
    return kernelError(c, "too many result dims");
  std::vector<int64_t> outShape;
  for (const OutAxis &a : k->axes_) {
    k->outDims_.push_back(a.broadcast ? k->bShape_[size_t(a.dim)] : (*s)[size_t(a.dim)]);
    outShape.push_back(k->outDims_.back());
  }
  for (size_t d = items.size(); d < rank; ++d)
    outShape.push_back((*s)[d]);
  auto os = outputShape(c);
  if (!os)
    return os.takeError();
  if (*os != outShape)
    return kernelError(c, "the result is " + shapeToString(outShape) + ", the graph declares " +
                              shapeToString(*os));
  k->esize_ = std::max<size_t>(dtypeSize(outputDType(c)), 1);
  return std::unique_ptr<OpKernel>(std::move(k));
}
KC_REGISTER_KERNEL_DTYPES(tensor_index, "Tensor.index", makeIndex, (kRealDTypes), (kRealDTypes));

} // namespace
} // namespace kc::rt
