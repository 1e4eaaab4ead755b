//===- Layout.cpp - Roll, flip, repeat, tile, channel shuffle, ... --------===//
//
// Ops whose every output element is one input element, at an offset that
// is a sum of one term per output dim: out[i0, i1, ...] =
// in[base + off0[i0] + off1[i1] + ...]. One kernel runs them all from the
// per-dim offset tables made at load time. Along the last dim it copies
// each contiguous run of the table with one memcpy (a roll is two runs, a
// repeat one per copy), or gathers where runs are short (a flip).
//
//===----------------------------------------------------------------------===//
#include "Parallel.h"
#include "Rebind.h"

#include <cstring>

namespace kc::rt {
namespace {

class IndexMapKernel final : public OpKernel {
public:
  IndexMapKernel(std::vector<int64_t> outShape, std::vector<std::vector<int64_t>> offsets,
                 int64_t base, size_t esize)
      : shape_(std::move(outShape)), off_(std::move(offsets)), base_(base), esize_(esize) {
    if (shape_.empty())
      return;
    mergeTrailingDims();
    const std::vector<int64_t> &last = off_.back();
    for (size_t j = 0; j < last.size();) {
      size_t k = j + 1;
      while (k < last.size() && last[k] == last[k - 1] + 1)
        ++k;
      runs_.push_back({int64_t(j), last[j], int64_t(k - j)});
      j = k;
    }
    useRuns_ = runs_.size() * 8 <= last.size() || esize_ != 4;
  }
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const uint8_t *x = static_cast<const uint8_t *>(in[0]->raw()) + base_ * esize_;
    uint8_t *y = static_cast<uint8_t *>(out[0]->raw());
    size_t r = shape_.size();
    if (r == 0) {
      std::memcpy(y, x, esize_);
      return;
    }
    int64_t inner = shape_[r - 1];
    int64_t rows = numElements(shape_) / std::max<int64_t>(inner, 1);
    if (inner == 0)
      return;
    const int64_t *last = off_.back().data();
    parallelFor(rows, rows * inner > 65536, [&](int64_t row) {
      int64_t rem = row, off = 0;
      for (size_t d = r - 1; d-- > 0;) {
        off += off_[d][rem % shape_[d]];
        rem /= shape_[d];
      }
      uint8_t *o = y + row * inner * esize_;
      const uint8_t *s = x + off * esize_;
      if (useRuns_) {
        for (const Run &u : runs_)
          std::memcpy(o + u.dst * esize_, s + u.src * esize_, u.len * esize_);
        return;
      }
      auto *of = reinterpret_cast<uint32_t *>(o);
      auto *sf = reinterpret_cast<const uint32_t *>(s);
      for (int64_t j = 0; j < inner; ++j)
        of[j] = sf[last[j]];
    });
  }

private:
  /// Folds the last dim into the one before while that pair reads the
  /// input as one dim would (the last from offset 0 by a stride s, the one
  /// before by its size times s): channel shuffle's planes are then one
  /// row each, copied at once, instead of a row of each plane at a time.
  void mergeTrailingDims() {
    while (shape_.size() >= 2) {
      size_t r = shape_.size();
      const std::vector<int64_t> &a = off_[r - 2], &b = off_[r - 1];
      int64_t n = shape_[r - 1], s = n > 1 ? b[1] : 0;
      bool ok = n >= 1 && b[0] == 0;
      for (int64_t j = 0; ok && j < n; ++j)
        ok = b[size_t(j)] == j * s;
      for (int64_t i = 0; ok && i < shape_[r - 2]; ++i)
        ok = a[size_t(i)] == a[0] + i * n * s;
      if (!ok || (n > 1 && s == 0))
        return;
      std::vector<int64_t> merged(size_t(shape_[r - 2] * n));
      for (size_t k = 0; k < merged.size(); ++k)
        merged[k] = a[0] + int64_t(k) * s;
      shape_[r - 2] *= n;
      shape_.pop_back();
      off_.pop_back();
      off_.back() = std::move(merged);
    }
  }

  struct Run {
    int64_t dst, src, len;
  };
  std::vector<int64_t> shape_;
  std::vector<std::vector<int64_t>> off_;
  int64_t base_;
  size_t esize_;
  std::vector<Run> runs_;
  bool useRuns_ = true;
};

std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> s(shape.size());
  int64_t st = 1;
  for (size_t i = shape.size(); i-- > 0;)
    s[i] = st, st *= shape[i];
  return s;
}

size_t elemSize(const CallNode &c) { return std::max<size_t>(dtypeSize(outputDType(c)), 1); }

std::unique_ptr<OpKernel> indexMap(const CallNode &c, std::vector<int64_t> out,
                                   std::vector<std::vector<int64_t>> off, int64_t base = 0) {
  return std::make_unique<IndexMapKernel>(std::move(out), std::move(off), base, elemSize(c));
}

/// Offsets of an identity map of dim d (of `in`, strides `st`).
std::vector<int64_t> identity(int64_t n, int64_t stride) {
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = i * stride;
  return v;
}

/// torch.roll: each of `dims` shifted by its shift, cyclically; without
/// dims, the flattened tensor.
llvm::Expected<std::unique_ptr<OpKernel>> makeRoll(const CallNode &c, const CallShapes &io) {
  std::vector<int64_t> shifts = c.attrs().getInts("shifts");
  const AttrValue *dv = c.attrs().find("dims");
  bool flat = !dv || dv->isNone();
  std::vector<int64_t> shape = flat ? std::vector<int64_t>{numElements(io.in)} : io.in;
  std::vector<int64_t> dims = flat ? std::vector<int64_t>{0} : dv->asIntVector();
  if (shifts.size() != dims.size())
    return kernelError(c, "shifts and dims differ in length");
  auto st = stridesOf(shape);
  // Output element i of a dim reads element (i + start) mod n. PyTorch's
  // roll computes start as (n - shift) mod n, its subtraction wrapping
  // (two's complement) for shifts near INT64_MIN; the same, in unsigned
  // arithmetic where C++ defines the wrap. Several shifts of one dim add.
  std::vector<int64_t> start(shape.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    int d = normAxis(dims[i], shape.size());
    if (d < 0 || d >= int(shape.size()))
      return kernelError(c, "dim " + llvm::Twine(dims[i]) + " out of range");
    int64_t n = shape[d];
    if (n == 0)
      continue;
    int64_t k = int64_t(uint64_t(n) - uint64_t(shifts[i])) % n;
    start[d] = (start[d] + (k < 0 ? k + n : k)) % n;
  }
  std::vector<std::vector<int64_t>> off(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t n = shape[d];
    off[d].resize(n);
    for (int64_t i = 0; i < n; ++i)
      off[d][i] = ((i + start[d]) % n) * st[d];
  }
  return indexMap(c, shape, std::move(off));
}

/// torch.flip: the listed dims reversed.
llvm::Expected<std::unique_ptr<OpKernel>> makeFlip(const CallNode &c, const CallShapes &io) {
  auto st = stridesOf(io.in);
  std::vector<bool> flip(io.in.size());
  for (int64_t d : c.attrs().getInts("dims")) {
    int a = normAxis(d, io.in.size());
    if (a < 0 || a >= int(io.in.size()))
      return kernelError(c, "dim " + llvm::Twine(d) + " out of range");
    flip[a] = true;
  }
  std::vector<std::vector<int64_t>> off(io.in.size());
  for (size_t d = 0; d < io.in.size(); ++d) {
    off[d] = identity(io.in[d], st[d]);
    if (flip[d])
      std::reverse(off[d].begin(), off[d].end());
  }
  return indexMap(c, io.in, std::move(off));
}

/// Tensor.repeat and torch.tile: the input, aligned right against the
/// output's rank, read cyclically along every dim.
llvm::Expected<std::unique_ptr<OpKernel>> makeRepeat(const CallNode &c, const CallShapes &io) {
  if (io.out.size() < io.in.size())
    return kernelError(c, "the result has fewer dims than the input");
  size_t lead = io.out.size() - io.in.size();
  std::vector<int64_t> in(lead, 1);
  in.insert(in.end(), io.in.begin(), io.in.end());
  auto st = stridesOf(in);
  std::vector<std::vector<int64_t>> off(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == 0 || io.out[d] % in[d])
      return kernelError(c, "result dim " + llvm::Twine(d) + " is not a multiple of the input's");
    off[d].resize(io.out[d]);
    for (int64_t i = 0; i < io.out[d]; ++i)
      off[d][i] = (i % in[d]) * st[d];
  }
  return indexMap(c, io.out, std::move(off));
}

/// torch.repeat_interleave with an int `repeats`: each element of `dim`
/// (of the flattened input without one) repeated.
llvm::Expected<std::unique_ptr<OpKernel>> makeRepeatInterleave(const CallNode &c,
                                                               const CallShapes &io) {
  if (c.dataArgs().size() != 1)
    return kernelError(c, "repeats given as a tensor are not supported");
  const AttrValue *rv = c.attrs().find("repeats");
  if (!rv || !rv->isInt() || rv->getInt() <= 0)
    return kernelError(c, "repeats must be a positive int");
  int64_t k = rv->getInt();
  const AttrValue *dv = c.attrs().find("dim");
  bool flat = !dv || dv->isNone();
  std::vector<int64_t> in = flat ? std::vector<int64_t>{numElements(io.in)} : io.in;
  int dim = flat ? 0 : normAxis(dv->getInt(), in.size());
  if (dim < 0 || dim >= int(in.size()))
    return kernelError(c, "dim out of range for " + shapeToString(in));
  std::vector<int64_t> out = in;
  out[dim] *= k;
  if (numElements(out) != numElements(io.out))
    return kernelError(c, "the result type does not hold " + shapeToString(out));
  auto st = stridesOf(in);
  std::vector<std::vector<int64_t>> off(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    off[d] = identity(out[d], st[d]);
    if (int(d) == dim)
      for (int64_t i = 0; i < out[d]; ++i)
        off[d][i] = (i / k) * st[d];
  }
  return indexMap(c, out, std::move(off));
}

/// nn.ChannelShuffle: channel a*groups + b of the result is channel
/// b*(C/groups) + a of the input.
llvm::Expected<std::unique_ptr<OpKernel>> makeChannelShuffle(const CallNode &c,
                                                             const CallShapes &io) {
  int64_t g = c.attrs().getInt("groups", 1);
  if (io.in.size() < 3 || g <= 0 || io.in[1] % g)
    return kernelError(c, "groups=" + llvm::Twine(g) + " does not divide the channels of " +
                              shapeToString(io.in));
  auto st = stridesOf(io.in);
  std::vector<std::vector<int64_t>> off(io.in.size());
  for (size_t d = 0; d < io.in.size(); ++d)
    off[d] = identity(io.in[d], st[d]);
  int64_t per = io.in[1] / g;
  for (int64_t co = 0; co < io.in[1]; ++co)
    off[1][co] = ((co % g) * per + co / g) * st[1];
  return indexMap(c, io.in, std::move(off));
}

/// torch.as_strided over the contiguous input.
llvm::Expected<std::unique_ptr<OpKernel>> makeAsStrided(const CallNode &c, const CallShapes &io) {
  std::vector<int64_t> size = c.attrs().getInts("size"), stride = c.attrs().getInts("stride");
  int64_t base = c.attrs().getInt("storage_offset", 0);
  if (size != io.out || stride.size() != size.size())
    return kernelError(c, "size and stride must match the result " + shapeToString(io.out));
  int64_t last = base;
  for (size_t d = 0; d < size.size(); ++d) {
    if (stride[d] < 0 || size[d] <= 0)
      return kernelError(c, "negative strides and empty sizes are not supported");
    last += (size[d] - 1) * stride[d];
  }
  if (base < 0 || last >= numElements(io.in))
    return kernelError(c, "reads outside the input's " + llvm::Twine(numElements(io.in)) +
                              " elements");
  std::vector<std::vector<int64_t>> off(size.size());
  for (size_t d = 0; d < size.size(); ++d)
    off[d] = identity(size[d], stride[d]);
  return indexMap(c, size, std::move(off), base);
}

KC_REGISTER_MOVE_KERNEL(roll, "torch.roll", withShapes<makeRoll>);
KC_REGISTER_MOVE_KERNEL(flip, "torch.flip", withShapes<makeFlip>);
KC_REGISTER_MOVE_KERNEL(repeat, "Tensor.repeat", withShapes<makeRepeat>);
KC_REGISTER_MOVE_KERNEL(tile, "torch.tile", withShapes<makeRepeat>);
KC_REGISTER_MOVE_KERNEL(repeat_interleave, "torch.repeat_interleave",
                        withShapes<makeRepeatInterleave>);
KC_REGISTER_MOVE_KERNEL(channel_shuffle, "nn.ChannelShuffle", withShapes<makeChannelShuffle>);
KC_REGISTER_MOVE_KERNEL(as_strided, "torch.as_strided", withShapes<makeAsStrided>);

/// torch.diag: a vector's diagonal matrix, or a matrix's diagonal.
class DiagKernel final : public OpKernel {
public:
  DiagKernel(int64_t rows, int64_t cols, int64_t offset, bool toMatrix, size_t esize)
      : rows_(rows), cols_(cols), offset_(offset), toMatrix_(toMatrix), esize_(esize) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    auto *x = static_cast<const uint8_t *>(in[0]->raw());
    auto *y = static_cast<uint8_t *>(out[0]->raw());
    int64_t r0 = offset_ < 0 ? -offset_ : 0, c0 = offset_ > 0 ? offset_ : 0;
    int64_t n = std::min(rows_ - r0, cols_ - c0);
    if (toMatrix_)
      std::memset(y, 0, out[0]->nbytes());
    for (int64_t i = 0; i < n; ++i) {
      int64_t m = (r0 + i) * cols_ + c0 + i;
      if (toMatrix_)
        std::memcpy(y + m * esize_, x + i * esize_, esize_);
      else
        std::memcpy(y + i * esize_, x + m * esize_, esize_);
    }
  }

private:
  int64_t rows_, cols_, offset_;
  bool toMatrix_;
  size_t esize_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeDiag(const CallNode &c, const CallShapes &io) {
  bool toMatrix = io.in.size() == 1;
  const std::vector<int64_t> &m = toMatrix ? io.out : io.in;
  if (m.size() != 2)
    return kernelError(c, "expects a vector or a matrix, got " + shapeToString(io.in));
  return std::unique_ptr<OpKernel>(
      new DiagKernel(m[0], m[1], c.attrs().getInt("diagonal", 0), toMatrix, elemSize(c)));
}
KC_REGISTER_MOVE_KERNEL(diag, "torch.diag", withShapes<makeDiag>);

/// torch.slice_scatter: the input with `src` written over a slice of dim.
class SliceScatterKernel final : public OpKernel {
public:
  SliceScatterKernel(int64_t outer, int64_t len, int64_t inner, int64_t start, int64_t step,
                     int64_t count, size_t esize)
      : outer_(outer), len_(len), inner_(inner), start_(start), step_(step), count_(count),
        esize_(esize) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    auto *x = static_cast<const uint8_t *>(in[0]->raw());
    auto *src = static_cast<const uint8_t *>(in[1]->raw());
    auto *y = static_cast<uint8_t *>(out[0]->raw());
    if (y != x)
      std::memcpy(y, x, out[0]->nbytes());
    size_t row = size_t(inner_) * esize_;
    for (int64_t o = 0; o < outer_; ++o)
      for (int64_t j = 0; j < count_; ++j)
        std::memcpy(y + ((o * len_ + start_ + j * step_) * inner_) * esize_,
                    src + ((o * count_ + j) * inner_) * esize_, row);
  }

private:
  int64_t outer_, len_, inner_, start_, step_, count_;
  size_t esize_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeSliceScatter(const CallNode &c,
                                                           const CallShapes &io) {
  auto src = inputShape(c, 1);
  if (!src)
    return src.takeError();
  auto axis = axisAndOuter(c, io.in);
  if (!axis)
    return axis.takeError();
  auto [dim, outer] = *axis;
  int64_t n = io.in[dim];
  int64_t start = c.attrs().getInt("start", 0), end = c.attrs().getInt("end", n);
  int64_t step = c.attrs().getInt("step", 1);
  if (step <= 0)
    return kernelError(c, "step must be positive");
  start = std::clamp<int64_t>(start < 0 ? start + n : start, 0, n);
  end = std::clamp<int64_t>(end < 0 ? end + n : end, 0, n);
  int64_t count = end > start ? (end - start - 1) / step + 1 : 0;
  std::vector<int64_t> want = io.in;
  want[dim] = count;
  if (*src != want)
    return kernelError(c, "src " + shapeToString(*src) + " does not fill the slice " +
                              shapeToString(want));
  int64_t inner = numElements(llvm::ArrayRef<int64_t>(io.in).drop_front(dim + 1));
  return std::unique_ptr<OpKernel>(
      new SliceScatterKernel(outer, n, inner, start, step, count, elemSize(c)));
}
KC_REGISTER_MOVE_KERNEL(slice_scatter, "torch.slice_scatter", withShapes<makeSliceScatter>);
KC_REGISTER_MOVE_KERNEL(slice_copy, "Tensor.slice_copy", withShapes<makeSliceScatter>);

/// torch.narrow: a slice of `length` from `start`.
llvm::Expected<std::unique_ptr<OpKernel>> makeNarrow(const CallNode &c,
                                                     const KernelBuildContext &ctx) {
  int64_t start = c.attrs().getInt("start", 0), length = c.attrs().getInt("length", 0);
  auto in = inputShape(c, 0);
  if (!in)
    return in.takeError();
  auto axis = axisAndOuter(c, *in);
  if (!axis)
    return axis.takeError();
  int dim = axis->first;
  if (start < 0)
    start += (*in)[dim];
  return kernelAs(c, "Tensor.slice",
                  {{"dim", AttrValue::integer(dim)},
                   {"start", AttrValue::integer(start)},
                   {"end", AttrValue::integer(start + length)},
                   {"step", AttrValue::integer(1)}},
                  ctx);
}
KC_REGISTER_MOVE_KERNEL(narrow, "torch.narrow", makeNarrow);

/// torch.t: a transpose of the two dims of a matrix; fewer dims stay.
llvm::Expected<std::unique_ptr<OpKernel>> makeT(const CallNode &c, const KernelBuildContext &ctx) {
  auto in = inputShape(c, 0);
  if (!in)
    return in.takeError();
  if (in->size() < 2)
    return kernelAs(c, "nn.Identity", {}, ctx);
  return kernelAs(c, "torch.transpose",
                  {{"dim0", AttrValue::integer(0)}, {"dim1", AttrValue::integer(1)}}, ctx);
}
KC_REGISTER_MOVE_KERNEL(t, "torch.t", makeT);

/// Tensor.unflatten and Tensor.reshape_as: the input's bytes, reshaped.
llvm::Expected<std::unique_ptr<OpKernel>> makeViewLike(const CallNode &c,
                                                       const KernelBuildContext &ctx) {
  return kernelAs(c, "Tensor.reshape", {}, ctx);
}
KC_REGISTER_MOVE_KERNEL(unflatten, "Tensor.unflatten", makeViewLike);
KC_REGISTER_KERNEL_DTYPES(reshape_as, "Tensor.reshape_as", makeViewLike, (kRealDTypes),
                          (kRealDTypes));

/// Tensor.expand_as: expand to the other operand's shape.
llvm::Expected<std::unique_ptr<OpKernel>> makeExpandAs(const CallNode &c,
                                                       const KernelBuildContext &ctx) {
  auto out = outputShape(c);
  if (!out)
    return out.takeError();
  return kernelAs(c, "Tensor.expand", {{"sizes", AttrValue::intList(*out)}}, ctx);
}
KC_REGISTER_KERNEL_DTYPES(expand_as, "Tensor.expand_as", makeExpandAs, (kRealDTypes),
                          (kRealDTypes));

/// Tensor.type_as: a conversion to the other operand's element type.
llvm::Expected<std::unique_ptr<OpKernel>> makeTypeAs(const CallNode &c,
                                                     const KernelBuildContext &ctx) {
  return kernelAs(c, "Tensor.to", {}, ctx);
}
KC_REGISTER_KERNEL_DTYPES(type_as, "Tensor.type_as", makeTypeAs, (kRealDTypes), (kRealDTypes));

} // namespace
} // namespace kc::rt
