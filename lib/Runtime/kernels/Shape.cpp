//===- Shape.cpp - Views, permutes, concatenation, splits and slices ------===//
//
// Reshape-like ops are views: the planner aliases their output with their
// input, so they cost nothing. The rest move bytes with one strided copy
// whose innermost run is a memcpy whenever the source is contiguous there.
//
//===----------------------------------------------------------------------===//
#include "CallInfo.h"
#include "Parallel.h"
#include "StridedCopy.h"

#include "llvm/ADT/SmallVector.h"

#include <cstring>

namespace kc::rt {
namespace {

std::vector<int64_t> contiguousStrides(llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> s(shape.size());
  int64_t st = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = st;
    st *= shape[i];
  }
  return s;
}

/// Output 0 has input 0's bytes: reshape, flatten, squeeze, identity.
class ViewKernel final : public OpKernel {
public:
  int viewOfInput() const override { return 0; }
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    if (out[0]->raw() != in[0]->raw())
      std::memcpy(out[0]->raw(), in[0]->raw(), out[0]->nbytes());
  }
};

llvm::Expected<std::unique_ptr<OpKernel>> makeView(const CallNode &c, const CallShapes &io) {
  const std::vector<int64_t> *in = &io.in, *out = &io.out;
  if (numElements(*in) != numElements(*out))
    return kernelError(c, "cannot view " + shapeToString(*in) + " as " + shapeToString(*out));
  return std::unique_ptr<OpKernel>(new ViewKernel());
}
KC_REGISTER_MOVE_KERNEL(reshape, "Tensor.reshape", withShapes<makeView>);
KC_REGISTER_MOVE_KERNEL(flatten, "torch.flatten", withShapes<makeView>);
KC_REGISTER_MOVE_KERNEL(squeeze, "torch.squeeze", withShapes<makeView>);
KC_REGISTER_MOVE_KERNEL(unsqueeze, "torch.unsqueeze", withShapes<makeView>);
KC_REGISTER_MOVE_KERNEL(identity, "nn.Identity", withShapes<makeView>);

/// A copy of input 0 read through fixed strides: permute, transpose,
/// slice, select, expand.
class StridedKernel final : public OpKernel {
public:
  StridedKernel(std::vector<int64_t> shape, std::vector<int64_t> strides, int64_t offset,
                size_t esize)
      : shape_(std::move(shape)), strides_(std::move(strides)), offset_(offset), esize_(esize) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    stridedCopy(static_cast<const uint8_t *>(in[0]->raw()) + offset_ * esize_,
                static_cast<uint8_t *>(out[0]->raw()), shape_, strides_, esize_);
  }

private:
  std::vector<int64_t> shape_, strides_;
  int64_t offset_;
  size_t esize_;
};

size_t elemSize(const CallNode &c) { return std::max<size_t>(dtypeSize(outputDType(c)), 1); }

llvm::Expected<std::unique_ptr<OpKernel>> makePermute(const CallNode &c,
                                                      const KernelBuildContext &) {
  auto in = inputShape(c, 0);
  if (!in)
    return in.takeError();
  size_t r = in->size();
  std::vector<int64_t> perm;
  if (c.opDef()->name() == "torch.transpose") {
    perm.resize(r);
    for (size_t i = 0; i < r; ++i)
      perm[i] = i;
    int a = normAxis(c.attrs().getInt("dim0", 0), r), b = normAxis(c.attrs().getInt("dim1", 1), r);
    if (a < 0 || b < 0 || a >= int(r) || b >= int(r))
      return kernelError(c, "dims out of range for " + shapeToString(*in));
    std::swap(perm[a], perm[b]);
  } else {
    perm = c.attrs().getInts("dims");
    if (perm.size() != r)
      return kernelError(c, "dims has " + llvm::Twine(perm.size()) + " entries for rank " +
                                llvm::Twine(r));
    for (auto &p : perm)
      p = normAxis(p, r);
  }
  auto src = contiguousStrides(*in);
  std::vector<int64_t> shape(r), strides(r);
  for (size_t i = 0; i < r; ++i) {
    if (perm[i] < 0 || perm[i] >= int64_t(r))
      return kernelError(c, "bad permutation");
    shape[i] = (*in)[perm[i]];
    strides[i] = src[perm[i]];
  }
  return std::unique_ptr<OpKernel>(new StridedKernel(shape, strides, 0, elemSize(c)));
}
KC_REGISTER_MOVE_KERNEL(permute, "Tensor.permute", makePermute);
KC_REGISTER_MOVE_KERNEL(transpose, "torch.transpose", makePermute);

llvm::Expected<std::unique_ptr<OpKernel>> makeExpand(const CallNode &c, const CallShapes &io) {
  const std::vector<int64_t> *in = &io.in, *out = &io.out;
  if (out->size() < in->size())
    return kernelError(c, "cannot expand " + shapeToString(*in) + " to " + shapeToString(*out));
  auto src = contiguousStrides(*in);
  std::vector<int64_t> strides(out->size(), 0);
  size_t lead = out->size() - in->size();
  for (size_t i = 0; i < in->size(); ++i) {
    if ((*in)[i] != 1 && (*in)[i] != (*out)[lead + i])
      return kernelError(c, "cannot expand " + shapeToString(*in) + " to " + shapeToString(*out));
    strides[lead + i] = (*in)[i] == 1 ? 0 : src[i];
  }
  return std::unique_ptr<OpKernel>(new StridedKernel(*out, strides, 0, elemSize(c)));
}
KC_REGISTER_MOVE_KERNEL(expand, "Tensor.expand", withShapes<makeExpand>);

/// Tensor.slice (`dim/start/end/step` or the `dims/starts/ends/steps` form)
/// and Tensor.select. The output type fixes each extent; only the start of
/// each sliced dim is computed here, with PyTorch's clamping.
llvm::Expected<std::unique_ptr<OpKernel>> makeSlice(const CallNode &c, const CallShapes &io) {
  const std::vector<int64_t> *in = &io.in, *out = &io.out;
  if (c.dataArgs().size() != 1)
    return kernelError(c, "slice bounds given as tensors are not supported (only attributes)");
  size_t r = in->size();
  auto src = contiguousStrides(*in);
  llvm::SmallVector<int64_t, 8> starts(r, 0), steps(r, 1);
  bool isSelect = c.opDef()->name() == "Tensor.select";
  std::vector<int64_t> dims, st, sp, sel;
  if (isSelect) {
    dims = {c.attrs().getInt("dim", 0)};
    st = {c.attrs().getInt("index", 0)};
    sp = {1};
  } else if (c.attrs().has("dims")) {
    dims = c.attrs().getInts("dims");
    st = c.attrs().getInts("starts");
    sp = c.attrs().getInts("steps", std::vector<int64_t>(dims.size(), 1));
    sel = c.attrs().getInts("selects");
  } else {
    dims = {c.attrs().getInt("dim", 0)};
    st = {c.attrs().getInt("start", 0)};
    sp = {c.attrs().getInt("step", 1)};
  }
  if (st.size() != dims.size() || sp.size() != dims.size())
    return kernelError(c, "dims/starts/steps disagree in length");
  std::vector<bool> dropped(r, false);
  for (size_t i = 0; i < dims.size(); ++i) {
    int d = normAxis(dims[i], r);
    if (d < 0 || d >= int(r))
      return kernelError(c, "dim out of range for " + shapeToString(*in));
    int64_t n = (*in)[d], s = st[i];
    bool selects = isSelect || (i < sel.size() && sel[i] != 2147483647 && sel[i] != INT64_MAX);
    if (selects) {
      int64_t idx = isSelect ? s : sel[i];
      if (idx < 0)
        idx += n;
      if (idx < 0 || idx >= n)
        return kernelError(c, "index " + llvm::Twine(idx) + " out of range for dim of " +
                                  llvm::Twine(n));
      starts[d] = idx;
      dropped[d] = true;
      continue;
    }
    if (sp[i] <= 0)
      return kernelError(c, "slice step must be positive");
    if (s < 0)
      s += n;
    starts[d] = std::clamp<int64_t>(s, 0, n);
    steps[d] = sp[i];
  }
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
  for (size_t d = 0; d < r; ++d) {
    offset += starts[d] * src[d];
    if (dropped[d])
      continue;
    strides.push_back(src[d] * steps[d]);
  }
  if (strides.size() != out->size())
    return kernelError(c, "result rank does not match " + shapeToString(*out));
  return std::unique_ptr<OpKernel>(new StridedKernel(*out, strides, offset, elemSize(c)));
}
KC_REGISTER_MOVE_KERNEL(slice, "Tensor.slice", withShapes<makeSlice>);
KC_REGISTER_MOVE_KERNEL(select, "Tensor.select", withShapes<makeSlice>);

/// torch.cat / torch.stack: each input is a block of `inner` × its extent
/// along the axis, copied into every outer slice.
class ConcatKernel final : public OpKernel {
public:
  ConcatKernel(int64_t outer, std::vector<int64_t> chunk, size_t esize)
      : outer_(outer), chunk_(std::move(chunk)), esize_(esize) {
    for (int64_t c : chunk_)
      total_ += c;
  }
  bool joinsInputsEndToEnd() const override { return outer_ == 1; }
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    auto *dst = static_cast<uint8_t *>(out[0]->raw());
    parallelFor(outer_, outer_ * total_ > 262144, [&](int64_t o) {
      int64_t pos = 0;
      for (size_t i = 0; i < in.size(); ++i) {
        std::memcpy(dst + (o * total_ + pos) * esize_,
                    static_cast<const uint8_t *>(in[i]->raw()) + o * chunk_[i] * esize_,
                    chunk_[i] * esize_);
        pos += chunk_[i];
      }
    });
  }

private:
  int64_t outer_, total_ = 0;
  std::vector<int64_t> chunk_;
  size_t esize_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeConcat(const CallNode &c,
                                                     const KernelBuildContext &) {
  auto out = outputShape(c);
  if (!out)
    return out.takeError();
  auto axis = axisAndOuter(c, *out);
  if (!axis)
    return axis.takeError();
  int64_t outer = axis->second;
  auto shapes = inputShapes(c, 1);
  if (!shapes)
    return shapes.takeError();
  std::vector<int64_t> chunk;
  for (const std::vector<int64_t> &s : *shapes)
    chunk.push_back(numElements(s) / std::max<int64_t>(outer, 1));
  return std::unique_ptr<OpKernel>(new ConcatKernel(outer, std::move(chunk), elemSize(c)));
}
KC_REGISTER_MOVE_KERNEL(cat, "torch.cat", makeConcat);
KC_REGISTER_MOVE_KERNEL(stack, "torch.stack", makeConcat);

/// chunk / split / tensor_split / unbind: consecutive pieces along an axis;
/// the result types give each piece's extent.
class SplitKernel final : public OpKernel {
public:
  SplitKernel(int64_t outer, int64_t total, std::vector<int64_t> chunk, size_t esize)
      : outer_(outer), total_(total), chunk_(std::move(chunk)), esize_(esize) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    auto *src = static_cast<const uint8_t *>(in[0]->raw());
    parallelFor(outer_, outer_ * total_ > 262144, [&](int64_t o) {
      int64_t pos = 0;
      for (size_t i = 0; i < out.size(); ++i) {
        std::memcpy(static_cast<uint8_t *>(out[i]->raw()) + o * chunk_[i] * esize_,
                    src + (o * total_ + pos) * esize_, chunk_[i] * esize_);
        pos += chunk_[i];
      }
    });
  }

private:
  int64_t outer_, total_;
  std::vector<int64_t> chunk_;
  size_t esize_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeSplit(const CallNode &c, const KernelBuildContext &) {
  auto in = inputShape(c, 0);
  if (!in)
    return in.takeError();
  auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(c.type().get());
  size_t nout = tt ? tt->size() : 1;
  auto axis = axisAndOuter(c, *in);
  if (!axis)
    return axis.takeError();
  int64_t outer = axis->second;
  int64_t total = numElements(*in) / std::max<int64_t>(outer, 1), sum = 0;
  std::vector<int64_t> chunk;
  for (size_t i = 0; i < nout; ++i) {
    auto s = outputShape(c, i);
    if (!s)
      return s.takeError();
    chunk.push_back(numElements(*s) / std::max<int64_t>(outer, 1));
    sum += chunk.back();
  }
  if (sum != total)
    return kernelError(c, "the pieces do not add up to " + shapeToString(*in));
  return std::unique_ptr<OpKernel>(new SplitKernel(outer, total, std::move(chunk), elemSize(c)));
}
KC_REGISTER_MOVE_KERNEL(chunk, "torch.chunk", makeSplit);
KC_REGISTER_MOVE_KERNEL(split, "torch.split", makeSplit);
KC_REGISTER_MOVE_KERNEL(tensor_split, "torch.tensor_split", makeSplit);
KC_REGISTER_MOVE_KERNEL(unbind, "torch.unbind", makeSplit);

} // namespace
} // namespace kc::rt
