//===- TensorOps.cpp - Shape, data movement, matmul, reductions -----------===//
//
// The torch.* and Tensor.* operators that move data or change shapes, with
// PyTorch's semantics as type rules: reshape's -1 (infer) and 0 (copy the
// input dim), negative dims, split/chunk/unbind producing tuples, matmul
// broadcasting.
//
//===----------------------------------------------------------------------===//
#include "TypeRuleUtils.h"

#include "kc/IR/Permutation.h"
#include "kc/Support/Quote.h"

#include <numeric>

using namespace kc;
using namespace kc::typerules;

namespace {

AttrValue ints(std::vector<int64_t> v) { return AttrValue::intList(std::move(v)); }

llvm::Expected<Type> reshape(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  const AttrValue *sv = c.attrs().find("shape");
  if (!sv || sv->isNone())
    return c.type(); // a dynamic shape input: keep what the model declares
  std::vector<int64_t> shape = sv->asIntVector();
  CheckedInt known = 1;
  int64_t infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && i < in->rank())
      shape[i] = in->dims()[i];
    if (shape[i] == -1) {
      if (infer >= 0)
        return fail(c, "more than one -1 in shape");
      infer = int64_t(i);
    } else if (shape[i] < 0) {
      return Type(); // dynamic
    } else {
      known = known * shape[i];
    }
  }
  if (known.overflowed())
    return fail(c, "shape has more elements than int64 holds");
  auto total = in->numElements();
  if (!total) {
    if (infer >= 0)
      shape[infer] = -1;
    return tensorType(in->dtype(), shape);
  }
  // PyTorch's infer_size: -1 stands for the quotient, which must be exact
  // (the product of the shape then equals the input's elements again).
  int64_t n = known.value();
  std::string into =
      "cannot reshape " + shown(c.arg(0)->type()) + " into shape " + clipInput(attrToString(*sv));
  if (infer >= 0 && n == 0 && *total == 0)
    return fail(c, into + ": with a 0, the -1 could be any size");
  if (infer >= 0 ? n == 0 || *total % n != 0 : *total != n)
    return fail(c, into);
  if (infer >= 0)
    shape[infer] = *total / n;
  return tensorType(in->dtype(), shape);
}

llvm::Expected<Type> flatten(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  int64_t r = in->rank();
  if (r == 0)
    return tensorType(in->dtype(), {1});
  int64_t s = normDim(c.attrs().getInt("start_dim", 0), r);
  int64_t e = normDim(c.attrs().getInt("end_dim", -1), r);
  if (s < 0 || e < 0 || s > e)
    return fail(c, "bad start_dim/end_dim for rank " + llvm::Twine(r));
  std::vector<int64_t> d(in->dims().begin(), in->dims().begin() + s);
  CheckedInt prod = 1;
  for (int64_t i = s; i <= e; ++i)
    prod = (prod.value() < 0 || in->dims()[i] < 0) ? CheckedInt(-1) : prod * in->dims()[i];
  if (prod.overflowed())
    return fail(c, "the flattened dim has more elements than int64 holds");
  d.push_back(prod.value());
  d.insert(d.end(), in->dims().begin() + e + 1, in->dims().end());
  return tensorType(in->dtype(), d);
}

llvm::Expected<Type> permute(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  auto p = permutationOf(c, int64_t(in->rank()));
  if (!p)
    return fail(c, llvm::toString(p.takeError()));
  std::vector<int64_t> d;
  for (int64_t k : *p)
    d.push_back(in->dims()[size_t(k)]);
  return tensorType(in->dtype(), d);
}

llvm::Expected<Type> transpose(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  int64_t a = normDim(c.attrs().getInt("dim0", 0), in->rank());
  int64_t b = normDim(c.attrs().getInt("dim1", 1), in->rank());
  if (a < 0 || b < 0)
    return fail(c, "dim0/dim1 out of range");
  std::vector<int64_t> d(in->dims().begin(), in->dims().end());
  std::swap(d[a], d[b]);
  return tensorType(in->dtype(), d);
}

llvm::Expected<Type> concat(const CallNode &c, bool stack) {
  auto args = c.dataArgs();
  size_t n = args.size();
  const TensorTypeNode *first =
      n ? llvm::dyn_cast_or_null<TensorTypeNode>(args[0]->type().get()) : nullptr;
  if (!first)
    return Type();
  int64_t r = first->rank() + (stack ? 1 : 0);
  int64_t dim = normDim(c.attrs().getInt("dim", 0), r);
  if (dim < 0)
    return fail(c, "dim out of range");
  std::vector<int64_t> d(first->dims().begin(), first->dims().end());
  if (stack) {
    d.insert(d.begin() + dim, int64_t(n));
    return tensorType(first->dtype(), d);
  }
  for (size_t i = 1; i < n; ++i) {
    const TensorTypeNode *t = llvm::dyn_cast_or_null<TensorTypeNode>(args[i]->type().get());
    if (!t)
      return Type();
    if (t->rank() != first->rank())
      return fail(c, "operands of different rank");
    for (int64_t k = 0; k < r; ++k)
      if (k != dim && t->dims()[k] != d[k] && t->dims()[k] >= 0 && d[k] >= 0)
        return fail(c, "operand " + llvm::Twine(i) + " " + shown(args[i]->type()) +
                           " does not match " + shown(args[0]->type()) +
                           " outside dim " + llvm::Twine(dim));
    if (d[dim] < 0 || t->dims()[dim] < 0) {
      d[dim] = -1;
      continue;
    }
    CheckedInt sum = CheckedInt(d[dim]) + t->dims()[dim];
    if (sum.overflowed())
      return fail(c, "the concatenated dim has more elements than int64 holds");
    d[dim] = sum.value();
  }
  return tensorType(first->dtype(), d);
}
llvm::Expected<Type> cat(const CallNode &c) { return concat(c, false); }
llvm::Expected<Type> stack(const CallNode &c) { return concat(c, true); }

/// Pieces of `dim` as [start, end) ranges → a tuple of slices.
llvm::Expected<Type> pieces(const CallNode &c, const TensorTypeNode *in, int64_t dim,
                            const std::vector<std::pair<int64_t, int64_t>> &ranges, bool drop) {
  std::vector<Type> fields;
  for (auto [s, e] : ranges) {
    std::vector<int64_t> d(in->dims().begin(), in->dims().end());
    if (drop)
      d.erase(d.begin() + dim);
    else
      d[dim] = std::max<int64_t>(0, e - s);
    fields.push_back(tensorType(in->dtype(), d));
  }
  return tupleType(fields);
}

llvm::Expected<Type> splitLike(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  llvm::StringRef op = c.calleeName();
  int64_t dim = normDim(c.attrs().getInt("dim", 0), in->rank());
  if (dim < 0)
    return fail(c, "dim out of range");
  int64_t n = in->dims()[dim];
  if (n < 0)
    return c.type();
  std::vector<std::pair<int64_t, int64_t>> r;
  auto tooMany = [&](int64_t count) {
    return fail(c, "would produce " + llvm::Twine(count) + " outputs, more than the limit of " +
                       llvm::Twine(kMaxPieces));
  };
  // Consecutive pieces of `step` elements, the last one shorter.
  auto steps = [&](int64_t step) -> llvm::Error {
    if (step <= 0)
      return llvm::Error::success();
    int64_t count = n / step + (n % step != 0);
    if (count > kMaxPieces)
      return tooMany(count);
    for (int64_t s = 0; s < n;) {
      int64_t e = n - s > step ? s + step : n;
      r.push_back({s, e});
      s = e;
    }
    return llvm::Error::success();
  };
  if (op == "torch.unbind") {
    if (n > kMaxPieces)
      return tooMany(n);
    for (int64_t i = 0; i < n; ++i)
      r.push_back({i, i + 1});
    return pieces(c, in, dim, r, true);
  }
  if (op == "torch.chunk") {
    int64_t k = c.attrs().getInt("chunks", 1);
    if (auto e = steps(k > 0 ? n / k + (n % k != 0) : n))
      return e;
  } else if (op == "torch.split") {
    std::vector<int64_t> sz = c.attrs().getInts("split_size_or_sections");
    if (sz.size() == 1) {
      if (auto e = steps(sz[0]))
        return e;
    } else {
      CheckedInt s = 0;
      for (int64_t x : sz) {
        CheckedInt e = s + x;
        if (e.overflowed())
          return fail(c, "split_size_or_sections adds up to more than int64 holds");
        r.push_back({s.value(), e.value()});
        s = e;
      }
    }
  } else { // torch.tensor_split
    if (c.attrs().has("indices")) {
      int64_t s = 0;
      for (int64_t x : c.attrs().getInts("indices")) {
        int64_t e = std::min(n, x < 0 ? x + n : x);
        r.push_back({s, std::max(s, e)});
        s = std::max(s, e);
      }
      r.push_back({s, n});
    } else {
      int64_t k = c.attrs().getInt("sections", 1), s = 0;
      if (k > kMaxPieces)
        return tooMany(k);
      for (int64_t i = 0; i < k; ++i) {
        int64_t len = n / k + (i < n % k ? 1 : 0);
        r.push_back({s, s + len});
        s += len;
      }
    }
  }
  if (int64_t(r.size()) > kMaxPieces)
    return tooMany(int64_t(r.size()));
  return pieces(c, in, dim, r, false);
}

llvm::Expected<Type> squeeze(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  std::vector<int64_t> d;
  std::vector<int64_t> dims = c.attrs().getInts("dim");
  for (int64_t i = 0; i < int64_t(in->rank()); ++i) {
    bool listed = dims.empty();
    for (int64_t x : dims)
      listed |= normDim(x, in->rank()) == i;
    if (!(listed && in->dims()[i] == 1))
      d.push_back(in->dims()[i]);
  }
  return tensorType(in->dtype(), d);
}

llvm::Expected<Type> unsqueeze(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  std::vector<int64_t> d(in->dims().begin(), in->dims().end());
  for (int64_t x : c.attrs().getInts("dim")) {
    int64_t k = normDim(x, d.size() + 1);
    if (k < 0)
      return fail(c, "dim out of range");
    d.insert(d.begin() + k, 1);
  }
  return tensorType(in->dtype(), d);
}

llvm::Expected<Type> slice(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  std::vector<int64_t> d(in->dims().begin(), in->dims().end());
  std::vector<int64_t> dims = c.attrs().getInts("dims"), starts, ends, steps, selects;
  if (dims.empty()) {
    dims = {c.attrs().getInt("dim", 0)};
    starts = {c.attrs().getInt("start", 0)};
    ends = {c.attrs().getInt("end", INT32_MAX)};
    steps = {c.attrs().getInt("step", 1)};
  } else {
    starts = c.attrs().getInts("starts");
    ends = c.attrs().getInts("ends");
    steps = c.attrs().getInts("steps", std::vector<int64_t>(dims.size(), 1));
    selects = c.attrs().getInts("selects");
    if (starts.size() != dims.size() || ends.size() != dims.size())
      return c.type(); // dynamic indexes
    if (steps.size() != dims.size())
      return fail(c, "steps has " + llvm::Twine(steps.size()) + " entries for " +
                         llvm::Twine(dims.size()) + " dims");
  }
  std::vector<bool> drop(d.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t k = normDim(dims[i], d.size());
    if (k < 0)
      return fail(c, "dim out of range");
    if (!selects.empty() && i < selects.size() && selects[i] != INT32_MAX) {
      drop[k] = true;
      continue;
    }
    int64_t n = d[k];
    if (n < 0)
      continue;
    int64_t s = starts[i], e = ends[i], st = std::max<int64_t>(1, steps[i]);
    if (s < 0)
      s += n;
    if (e < 0)
      e += n;
    s = std::clamp<int64_t>(s, 0, n);
    e = std::clamp<int64_t>(e, 0, n);
    d[k] = e > s ? (e - s - 1) / st + 1 : 0;
  }
  std::vector<int64_t> out;
  for (size_t k = 0; k < d.size(); ++k)
    if (!drop[k])
      out.push_back(d[k]);
  return tensorType(in->dtype(), out);
}

llvm::Expected<Type> select(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  int64_t k = normDim(c.attrs().getInt("dim", 0), in->rank());
  if (k < 0)
    return fail(c, "dim out of range");
  std::vector<int64_t> d(in->dims().begin(), in->dims().end());
  d.erase(d.begin() + k);
  return tensorType(in->dtype(), d);
}

llvm::Expected<Type> matmul(const CallNode &c) {
  const TensorTypeNode *a = dataType(c, 0), *b = dataType(c, 1);
  if (!a || !b)
    return Type();
  std::vector<int64_t> x(a->dims().begin(), a->dims().end()), y(b->dims().begin(), b->dims().end());
  if (x.empty() || y.empty())
    return fail(c, "operands must have at least one dim");
  bool va = x.size() == 1, vb = y.size() == 1;
  if (va)
    x.insert(x.begin(), 1);
  if (vb)
    y.push_back(1);
  int64_t k1 = x.back(), k2 = y[y.size() - 2];
  if (k1 >= 0 && k2 >= 0 && k1 != k2)
    return fail(c, "inner dims differ: " + shown(c.dataArg(0)->type()) + " @ " +
                       shown(c.dataArg(1)->type()));
  auto batch = broadcast(llvm::ArrayRef<int64_t>(x).drop_back(2),
                         llvm::ArrayRef<int64_t>(y).drop_back(2));
  if (!batch)
    return fail(c, "batch dims do not broadcast");
  std::vector<int64_t> d = *batch;
  if (!va)
    d.push_back(x[x.size() - 2]);
  if (!vb)
    d.push_back(y.back());
  return tensorType(a->dtype(), d);
}

llvm::Expected<Type> reduce(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  std::vector<int64_t> dims = c.attrs().getInts("dim");
  bool keep = c.attrs().getBool("keepdim", false);
  std::vector<bool> red(in->rank(), dims.empty());
  for (int64_t x : dims) {
    int64_t k = normDim(x, in->rank());
    if (k < 0)
      return fail(c, "dim out of range");
    red[k] = true;
  }
  // A maximum or minimum of nothing is undefined: PyTorch refuses to reduce
  // an empty dim (sum, mean and prod of nothing are 0, NaN and 1).
  llvm::StringRef op = c.opDef() ? llvm::StringRef(c.opDef()->name()) : "";
  if (op == "torch.amax" || op == "torch.amin")
    for (size_t k = 0; k < in->rank(); ++k)
      if (red[k] && in->dims()[k] == 0)
        return fail(c, "cannot reduce dim " + llvm::Twine(k) + " of " +
                           shown(c.dataArg(0)->type()) + ", which is empty");
  std::vector<int64_t> d;
  for (size_t k = 0; k < in->rank(); ++k)
    if (!red[k])
      d.push_back(in->dims()[k]);
    else if (keep)
      d.push_back(1);
  return tensorType(in->dtype(), d);
}

llvm::Expected<Type> toType(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  std::optional<DType> dt = parseTorchDType(c.attrs().getString("dtype", ""));
  return tensorType(dt ? *dt : in->dtype(), in->dims());
}

llvm::Expected<Type> expand(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  std::vector<int64_t> s = c.attrs().getInts("sizes");
  if (s.size() < in->rank())
    return fail(c, "sizes has fewer entries than the input has dims");
  for (size_t k = 0; k < in->rank(); ++k)
    if (s[s.size() - in->rank() + k] == -1)
      s[s.size() - in->rank() + k] = in->dims()[k];
  return tensorType(in->dtype(), s);
}

const OpFlags kPure = OpFlags::Pure;

} // namespace

KC_REGISTER_OP(reshape_, "Tensor.reshape")
    .describe("view with a new shape (-1 inferred, 0 copies the input dim)")
    .alias("Tensor.view")
    .alias("torch.reshape")
    .input("input")
    .attr("shape", AttrValue())
    .flags(kPure | OpFlags::Reshape | OpFlags::SameTypeIsInput)
    .typeRule(reshape);
KC_REGISTER_OP(flatten_, "torch.flatten")
    .describe("merge dims start_dim..end_dim")
    .alias("nn.Flatten")
    .input("input")
    .attr("start_dim", AttrValue::integer(0))
    .attr("end_dim", AttrValue::integer(-1))
    .flags(kPure | OpFlags::Reshape | OpFlags::SameTypeIsInput)
    .typeRule(flatten);
KC_REGISTER_OP(permute_, "Tensor.permute")
    .describe("reorder dims")
    .alias("torch.permute")
    .input("input")
    .attr("dims", ints({}), true)
    .flags(kPure)
    .typeRule(permute);
KC_REGISTER_OP(transpose_, "torch.transpose")
    .describe("swap two dims")
    .alias("Tensor.transpose")
    .input("input")
    .attr("dim0", AttrValue::integer(0), true)
    .attr("dim1", AttrValue::integer(1), true)
    .flags(kPure)
    .typeRule(transpose);
KC_REGISTER_OP(cat_, "torch.cat")
    .describe("concatenate along dim")
    .alias("torch.concat")
    .attr("dim", AttrValue::integer(0))
    .flags(kPure | OpFlags::Variadic)
    .typeRule(cat);
KC_REGISTER_OP(stack_, "torch.stack")
    .describe("stack along a new dim")
    .attr("dim", AttrValue::integer(0))
    .flags(kPure | OpFlags::Variadic)
    .typeRule(stack);
KC_REGISTER_OP(unbind_, "torch.unbind")
    .describe("remove dim, returning each slice")
    .input("input")
    .attr("dim", AttrValue::integer(0))
    .outputs(-1)
    .flags(kPure)
    .typeRule(splitLike);
KC_REGISTER_OP(chunk_, "torch.chunk")
    .describe("split into chunks of equal size")
    .input("input")
    .attr("chunks", AttrValue::integer(1), true)
    .attr("dim", AttrValue::integer(0))
    .outputs(-1)
    .flags(kPure)
    .typeRule(splitLike);
KC_REGISTER_OP(split_, "torch.split")
    .describe("split by size or sections")
    .input("tensor")
    .attr("split_size_or_sections", AttrValue(), true)
    .attr("dim", AttrValue::integer(0))
    .outputs(-1)
    .flags(kPure)
    .typeRule(splitLike);
KC_REGISTER_OP(tensor_split_, "torch.tensor_split")
    .describe("split at indices or into sections")
    .input("input")
    .attr("indices", AttrValue())
    .attr("sections", AttrValue())
    .attr("dim", AttrValue::integer(0))
    .outputs(-1)
    .flags(kPure)
    .typeRule(splitLike);
KC_REGISTER_OP(squeeze_, "torch.squeeze")
    .describe("remove size-1 dims")
    .alias("Tensor.squeeze")
    .input("input")
    .attr("dim", AttrValue())
    .flags(kPure | OpFlags::Reshape | OpFlags::SameTypeIsInput)
    .typeRule(squeeze);
KC_REGISTER_OP(unsqueeze_, "torch.unsqueeze")
    .describe("insert a size-1 dim")
    .alias("Tensor.unsqueeze")
    .input("input")
    .attr("dim", AttrValue::integer(0), true)
    .flags(kPure | OpFlags::Reshape | OpFlags::SameTypeIsInput)
    .typeRule(unsqueeze);
KC_REGISTER_OP(slice_, "Tensor.slice")
    .describe("start:end:step along dims (single or multi-dim form)")
    .input("input")
    .attr("dim", AttrValue())
    .attr("start", AttrValue())
    .attr("end", AttrValue())
    .attr("step", AttrValue())
    .attr("dims", AttrValue())
    .attr("starts", AttrValue())
    .attr("ends", AttrValue())
    .attr("steps", AttrValue())
    .attr("selects", AttrValue())
    .flags(kPure | OpFlags::Variadic | OpFlags::SameTypeIsInput)
    .typeRule(slice);
KC_REGISTER_OP(select_, "Tensor.select")
    .describe("index one position of dim, removing it")
    .input("input")
    .attr("dim", AttrValue::integer(0), true)
    .attr("index", AttrValue::integer(0), true)
    .flags(kPure)
    .typeRule(select);
KC_REGISTER_OP(matmul_, "torch.matmul")
    .describe("matrix product with broadcast batch dims")
    .alias("torch.bmm")
    .alias("torch.mm")
    .input("input")
    .input("other")
    .flags(kPure | OpFlags::FusesActivation)
    .typeRule(matmul);
#define KC_REDUCE(ID, NAME, DOC)                                                                   \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe(DOC)                                                                               \
      .input("input")                                                                              \
      .attr("dim", AttrValue())                                                                    \
      .attr("keepdim", AttrValue::boolean(false))                                                  \
      .flags(kPure)                                                                                \
      .typeRule(reduce)
KC_REDUCE(mean_, "torch.mean", "mean over dims");
KC_REDUCE(sum_, "torch.sum", "sum over dims");
KC_REDUCE(prod_, "torch.prod", "product over dims");
KC_REDUCE(amax_, "torch.amax", "maximum over dims");
KC_REDUCE(amin_, "torch.amin", "minimum over dims");
KC_REGISTER_OP(clamp_, "torch.clamp")
    .describe("clamp to [min, max]")
    .alias("torch.clip")
    .input("input")
    .attr("min", AttrValue())
    .attr("max", AttrValue())
    .flags(kPure | OpFlags::Elementwise)
    .typeRule(sameAsInput);
KC_REGISTER_OP(to_, "Tensor.to")
    .describe("convert dtype")
    .input("input")
    .attr("dtype", AttrValue())
    .attr("copy", AttrValue::boolean(false))
    .flags(kPure)
    .typeRule(toType);
KC_REGISTER_OP(expand_, "Tensor.expand")
    .describe("broadcast to sizes")
    .input("input")
    .attr("sizes", ints({}), true)
    .flags(kPure | OpFlags::SameTypeIsInput)
    .typeRule(expand);
