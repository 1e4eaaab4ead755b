//===- NnOps.cpp - Convolution, normalization, pooling, activations -------===//
//
// The torch.nn modules and their functional forms, with PyTorch's argument
// names and defaults and PyTorch's output-size formulas as type rules.
//
//===----------------------------------------------------------------------===//
#include "TypeRuleUtils.h"

#include "kc/IR/Padding.h"
#include "kc/IR/WindowAttrs.h"

#include <cmath>

using namespace kc;
using namespace kc::typerules;

namespace {

AttrValue ints(std::vector<int64_t> v) { return AttrValue::intList(std::move(v)); }

llvm::Error outsideInt64(const CallNode &c, llvm::StringRef what) {
  return fail(c, what + " give an output size outside int64");
}

/// PyTorch's pools, transposed convolutions and upsampling refuse an input
/// with an empty dim other than the batch (padding: kc/IR/Padding.h): `from` is the first dim
/// checked (1, the channels, or the first spatial dim).
llvm::Error refuseEmptyDims(const CallNode &c, const TensorTypeNode *in, size_t from) {
  for (size_t k = from; k < in->rank(); ++k)
    if (in->dims()[k] == 0)
      return fail(c, "dim " + llvm::Twine(k) + " of the input " +
                         shown(c.dataArg(0)->type()) +
                         " is empty (PyTorch allows an empty batch only)");
  return llvm::Error::success();
}

/// Convolutions and pools over the trailing `n` spatial dims.
llvm::Expected<Type> windowRule(const CallNode &c, size_t n, bool isPool, bool transposed) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  if (in->rank() < n + 1)
    return fail(c, "expects at least " + llvm::Twine(n + 1) + " dims, got " +
                       llvm::Twine(in->rank()));
  // A convolution's weight, when known, must agree with kernel_size.
  std::vector<int64_t> weightKernel;
  if (const ConstantNode *weight = isPool ? nullptr : c.weight("weight"))
    if (auto *wt = llvm::dyn_cast_or_null<TensorTypeNode>(weight->type().get());
        wt && wt->rank() == n + 2)
      weightKernel.assign(wt->dims().begin() + 2, wt->dims().end());
  auto w = WindowAttrs::from(c, n,
                             isPool       ? WindowOp::Pool
                             : transposed ? WindowOp::ConvTranspose
                                          : WindowOp::Conv,
                             weightKernel);
  if (!w)
    return fail(c, llvm::toString(w.takeError()));
  std::vector<int64_t> dims(in->dims().begin(), in->dims().end());
  size_t r = dims.size();
  // PyTorch 1.13 gives a convolution of an input without channels an empty
  // result with no channels either; empty spatial dims, and for the others
  // empty channels too, it refuses.
  bool noChannels = !isPool && !transposed && dims[r - n - 1] == 0;
  if (auto e = refuseEmptyDims(c, in, isPool || transposed ? r - n - 1 : r - n))
    return std::move(e);
  if (noChannels) {
    dims[r - n - 1] = 0;
  } else if (!isPool) {
    CheckedInt outC = c.attrs().getInt("out_channels", -1);
    if (outC.value() < 0)
      if (const ConstantNode *weight = c.weight("weight"))
        if (auto *wt = llvm::dyn_cast_or_null<TensorTypeNode>(weight->type().get());
            wt && wt->rank() >= (transposed ? 2u : 1u))
          outC = transposed ? CheckedInt(wt->dim(1)) * w->groups : wt->dim(0);
    if (outC.overflowed())
      return outsideInt64(c, "groups and the weight's shape");
    dims[r - n - 1] = outC.value();
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t x = dims[r - n + i];
    if (x < 0)
      continue;
    std::optional<int64_t> out = w->outputSize(i, x);
    if (!out)
      return outsideInt64(c, "kernel_size, stride, padding and dilation");
    // An input smaller than the (dilated) kernel leaves no output: PyTorch
    // refuses it, and kernels would divide by the empty size.
    if (*out <= 0)
      return fail(c, "input size " + llvm::Twine(x) + " in spatial dim " + llvm::Twine(i) +
                         " leaves an output size of " + llvm::Twine(*out) +
                         " (smaller than the padded, dilated kernel)");
    dims[r - n + i] = *out;
  }
  return tensorType(in->dtype(), dims);
}

llvm::Expected<Type> conv1d(const CallNode &c) { return windowRule(c, 1, false, false); }
llvm::Expected<Type> conv2d(const CallNode &c) { return windowRule(c, 2, false, false); }
llvm::Expected<Type> conv3d(const CallNode &c) { return windowRule(c, 3, false, false); }
llvm::Expected<Type> convT2d(const CallNode &c) { return windowRule(c, 2, false, true); }
llvm::Expected<Type> convT1d(const CallNode &c) { return windowRule(c, 1, false, true); }
llvm::Expected<Type> convT3d(const CallNode &c) { return windowRule(c, 3, false, true); }

/// Max pools with return_indices give (values, i64 indices into each
/// plane) of the same shape.
llvm::Expected<Type> withIndices(const CallNode &c, llvm::Expected<Type> t) {
  if (!t || !*t || !c.attrs().getBool("return_indices", false))
    return t;
  auto *tt = llvm::cast<TensorTypeNode>(t->get());
  return tupleType({*t, tensorType(DType::I64, tt->dims())});
}
llvm::Expected<Type> pool1d(const CallNode &c) {
  return withIndices(c, windowRule(c, 1, true, false));
}
llvm::Expected<Type> pool2d(const CallNode &c) {
  return withIndices(c, windowRule(c, 2, true, false));
}
llvm::Expected<Type> pool3d(const CallNode &c) {
  return withIndices(c, windowRule(c, 3, true, false));
}

llvm::Expected<Type> adaptivePool(const CallNode &c, size_t n) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  if (in->rank() < n)
    return fail(c, "input has fewer dims than the pooled ones");
  std::vector<int64_t> o = intsN(c, "output_size", n, {});
  if (o.size() != n)
    return fail(c, "missing or malformed output_size");
  if (auto e = refuseEmptyDims(c, in, in->rank() - n))
    return std::move(e);
  std::vector<int64_t> dims(in->dims().begin(), in->dims().end());
  for (size_t i = 0; i < n; ++i)
    if (o[i] > 0) // 0 (None) keeps the input size
      dims[dims.size() - n + i] = o[i];
  return tensorType(in->dtype(), dims);
}
llvm::Expected<Type> adaptive1d(const CallNode &c) { return withIndices(c, adaptivePool(c, 1)); }
llvm::Expected<Type> adaptive2d(const CallNode &c) { return withIndices(c, adaptivePool(c, 2)); }
llvm::Expected<Type> adaptive3d(const CallNode &c) { return withIndices(c, adaptivePool(c, 3)); }

llvm::Expected<Type> linear(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in || in->rank() == 0)
    return Type();
  int64_t out = c.attrs().getInt("out_features", -1);
  if (out < 0)
    if (const ConstantNode *w = c.weight("weight"))
      if (auto *wt = llvm::dyn_cast_or_null<TensorTypeNode>(w->type().get()); wt && wt->rank())
        out = wt->dim(0);
  std::vector<int64_t> dims(in->dims().begin(), in->dims().end());
  dims.back() = out;
  return tensorType(in->dtype(), dims);
}

llvm::Expected<Type> upsample(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  size_t n = in->rank() >= 2 ? in->rank() - 2 : 0;
  if (auto e = refuseEmptyDims(c, in, 1))
    return std::move(e);
  std::vector<int64_t> dims(in->dims().begin(), in->dims().end());
  std::vector<int64_t> size = c.attrs().getInts("size");
  std::vector<double> scale = c.attrs().getFloats("scale_factor");
  if (size.size() == 1)
    size.assign(n, size[0]);
  if (scale.size() == 1)
    scale.assign(n, scale[0]);
  for (size_t i = 0; i < n; ++i) {
    int64_t &d = dims[2 + i];
    if (size.size() == n) {
      d = size[i];
    } else if (scale.size() == n) {
      if (d < 0)
        continue;
      double v = std::floor(double(d) * scale[i]);
      if (!(v >= 0 && v < 9223372036854775808.0))
        return fail(c, "scale_factor gives an output size outside [0, 2^63)");
      d = int64_t(v);
    } else {
      return fail(c, "needs size or scale_factor");
    }
  }
  return tensorType(in->dtype(), dims);
}

/// The type of the i-th positional operand of an nn.MultiheadAttention
/// (query, key, value), skipping the named masks, which pnnx may write
/// first; null when absent or unknown.
const TensorTypeNode *mhaOperand(const CallNode &c, size_t i) {
  for (size_t k = 0; k < c.numArgs(); ++k) {
    const ArgKey &key = c.keys()[k];
    if (key.role == ArgRole::Weight ||
        (key.role == ArgRole::Named && (key.name == "attn_mask" || key.name == "key_padding_mask")))
      continue;
    if (i-- == 0)
      return llvm::dyn_cast_or_null<TensorTypeNode>(c.arg(k)->type().get());
  }
  return nullptr;
}

/// Whether two dims disagree, both being known.
bool differ(int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; }

/// PyTorch's shape contract of F.multi_head_attention_forward: query,
/// key and value all 3-d (L|S, N, E), batch first (N, L|S, E), or all 2-d
/// (unbatched); query's E is embed_dim, key's kdim and value's vdim; key and
/// value of one shape (of one length and batch when kdim or vdim differs
/// from embed_dim); key's batch the query's, unless there are no keys (then
/// PyTorch's reshapes of the keys hold nothing and succeed).
llvm::Error checkMhaShapes(const CallNode &c, const TensorTypeNode *q, const TensorTypeNode *k,
                           const TensorTypeNode *v, int64_t e) {
  auto what = [&] {
    return ": query " + shown(Type(q)) + ", key " + shown(Type(k)) + ", value " + shown(Type(v));
  };
  if ((q->rank() != 2 && q->rank() != 3) || k->rank() != q->rank() || v->rank() != q->rank())
    return fail(c, "query, key and value must all be 3-d (batched) or all 2-d" + what());
  int64_t kdim = c.attrs().getInt("kdim", e), vdim = c.attrs().getInt("vdim", e);
  if (differ(q->dim(-1), e) || differ(k->dim(-1), kdim) || differ(v->dim(-1), vdim))
    return fail(c, "the last dims must be embed_dim " + llvm::Twine(e) + ", kdim " +
                       llvm::Twine(kdim) + " and vdim " + llvm::Twine(vdim) + what());
  for (size_t i = 0; i + 1 < k->rank(); ++i)
    if (differ(k->dims()[i], v->dims()[i]))
      return fail(c, "key and value differ in length or batch" + what());
  if (q->rank() == 3) {
    bool bf = c.attrs().getBool("batch_first", false);
    int64_t batch = bf ? 0 : 1, keys = k->dim(bf ? 1 : 0);
    if (keys != 0 && differ(k->dims()[batch], q->dims()[batch]))
      return fail(c, "key's batch " + llvm::Twine(k->dims()[batch]) + " is not the query's " +
                         llvm::Twine(q->dims()[batch]) + what());
  }
  return llvm::Error::success();
}

llvm::Expected<Type> mha(const CallNode &c) {
  const TensorTypeNode *q = mhaOperand(c, 0);
  if (!q)
    return Type();
  const TensorTypeNode *key = mhaOperand(c, 1);
  if (q->rank() == 0 || (key && key->rank() == 0))
    return fail(c, "query and key need at least one dim");
  int64_t e = c.attrs().getInt("embed_dim", q->dim(-1));
  const TensorTypeNode *k = key ? key : q, *value = mhaOperand(c, 2), *v = value ? value : k;
  if (auto err = checkMhaShapes(c, q, k, v, e))
    return std::move(err);
  std::vector<int64_t> dims(q->dims().begin(), q->dims().end());
  dims.back() = e;
  Type out = tensorType(q->dtype(), dims);
  if (c.opDef() && c.type() && llvm::isa<TupleTypeNode>(c.type().get())) {
    // (output, attention weights averaged over heads): (N, L, S)
    const TensorTypeNode *k = key ? key : q;
    bool bf = c.attrs().getBool("batch_first", false);
    int64_t N = q->rank() == 3 ? q->dim(bf ? 0 : 1) : 1;
    int64_t L = q->dim(bf && q->rank() == 3 ? 1 : 0);
    int64_t S = k ? k->dim(bf && k->rank() == 3 ? 1 : 0) : L;
    if (S >= 0) // the appended bias_k and zero key are attended too
      S += int64_t(c.attrs().getBool("add_bias_kv", false)) +
           int64_t(c.attrs().getBool("add_zero_attn", false));
    std::vector<int64_t> w = q->rank() == 3 ? std::vector<int64_t>{N, L, S}
                                            : std::vector<int64_t>{L, S};
    return tupleType({out, tensorType(q->dtype(), w)});
  }
  return out;
}

/// F.scaled_dot_product_attention: query (..., L, E), key (..., S, E) and
/// value (..., S, Ev) give (..., L, Ev). The leading dims agree, except that
/// with enable_gqa the key's and value's heads (dim -3) divide the query's.
/// attn_mask, bool (true takes part) or float (added to the scores),
/// broadcasts to (..., L, S).
llvm::Expected<Type> sdpa(const CallNode &c) {
  const TensorTypeNode *q = dataType(c, 0), *k = dataType(c, 1), *v = dataType(c, 2);
  if (!q || !k || !v)
    return Type();
  size_t r = q->rank();
  auto shapes = [&] {
    return ": query " + shown(c.dataArg(0)->type()) + ", key " + shown(c.dataArg(1)->type()) +
           ", value " + shown(c.dataArg(2)->type());
  };
  if (r < 2 || k->rank() != r || v->rank() != r)
    return fail(c, "expects query, key and value of the same rank, at least 2" + shapes());
  auto differ = [](int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; };
  bool gqa = c.attrs().getBool("enable_gqa", false);
  for (size_t i = 0; i + 2 < r; ++i) {
    int64_t qd = q->dim(i), kd = k->dim(i);
    bool heads = gqa && i + 3 == r;
    if (differ(kd, v->dim(i)) ||
        (heads ? qd >= 0 && kd >= 0 && (kd == 0 || qd % kd) : differ(qd, kd)))
      return fail(c, "dim " + llvm::Twine(i) + " of query, key and value disagrees" + shapes());
  }
  if (differ(q->dim(r - 1), k->dim(r - 1)) || differ(k->dim(r - 2), v->dim(r - 2)))
    return fail(c, "expects query (..., L, E), key (..., S, E), value (..., S, Ev)" + shapes());
  if (double p = c.attrs().getFloat("dropout_p", 0.0); p != 0.0)
    return fail(c, "dropout_p=" + attrToString(AttrValue::real(p)) +
                       " drops random weights; a model runs evaluated, with dropout_p=0");
  if (const TensorTypeNode *m = dataType(c, 3)) {
    if (c.attrs().getBool("is_causal", false))
      return fail(c, "takes attn_mask or is_causal, not both (as PyTorch)");
    if (m->dtype() != DType::Bool && m->dtype() != q->dtype())
      return fail(c, "attn_mask must be bool or " + dtypeName(q->dtype()) + ", got " +
                         dtypeName(m->dtype()));
    std::vector<int64_t> scores(q->dims().begin(), q->dims().end());
    scores.back() = k->dim(r - 2);
    bool fits = m->rank() <= r;
    for (size_t i = 0; fits && i < m->rank(); ++i) {
      int64_t md = m->dims()[m->rank() - 1 - i], sd = scores[r - 1 - i];
      fits = md == 1 || !differ(md, sd);
    }
    if (!fits)
      return fail(c, "attn_mask " + shown(c.dataArg(3)->type()) +
                         " does not broadcast to the scores (..., L, S)" + shapes());
  }
  std::vector<int64_t> dims(q->dims().begin(), q->dims().end());
  dims.back() = v->dim(r - 1);
  return tensorType(q->dtype(), dims);
}

llvm::Expected<Type> pixelShuffle(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in || in->rank() < 3)
    return Type();
  std::vector<int64_t> d(in->dims().begin(), in->dims().end());
  size_t r = d.size();
  int64_t f = c.attrs().getInt("upscale_factor", 0);
  bool up = f > 0;
  if (!up)
    f = c.attrs().getInt("downscale_factor", 1);
  if (f <= 0)
    return fail(c, "the scale factor must be positive, got " + llvm::Twine(f));
  CheckedInt f2 = CheckedInt(f) * f;
  // Channels shrink by f² and the two spatial dims grow by f, or the reverse;
  // dynamic dims stay dynamic.
  auto scale = [](int64_t &x, CheckedInt by, bool grow) {
    if (x < 0)
      return true;
    CheckedInt v = grow ? CheckedInt(x) * by : CheckedInt(x) / by;
    x = v.value();
    return !v.overflowed();
  };
  if (!scale(d[r - 3], f2, !up) || !scale(d[r - 2], f, up) || !scale(d[r - 1], f, up))
    return outsideInt64(c, "the scale factor and the input shape");
  return tensorType(in->dtype(), d);
}

/// F.pad and the padding modules: kc/IR/Padding.h says what PyTorch pads.
llvm::Expected<Type> pad(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  auto p = readPadding(c);
  if (!p)
    return fail(c, llvm::toString(p.takeError()));
  auto d = paddedShape(in->dims(), *p, shown(c.dataArg(0)->type()));
  if (!d)
    return fail(c, llvm::toString(d.takeError()));
  return tensorType(in->dtype(), *d);
}

const OpFlags kAct = OpFlags::Pure | OpFlags::Elementwise;

// Convolutions.
#define KC_CONV(ID, NAME, RULE, TRANSPOSED, RANK)                                                  \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe("convolution (torch." NAME ")")                                                    \
      .input("input")                                                                              \
      .weight("weight")                                                                            \
      .weight("bias", true)                                                                        \
      .attr("in_channels", AttrValue::integer(0))                                                  \
      .attr("out_channels", AttrValue::integer(0))                                                 \
      .attr("kernel_size", ints({}), true)                                                         \
      .attr("stride", ints({1}))                                                                   \
      .attr("padding", AttrValue())                                                                \
      .attr("dilation", ints({1}))                                                                 \
      .attr("groups", AttrValue::integer(1))                                                       \
      .attr("bias", AttrValue::boolean(true))                                                      \
      .attr(TRANSPOSED ? "output_padding" : "padding_mode",                                        \
            TRANSPOSED ? ints({0}) : AttrValue::string("zeros"))                                   \
      .flags(OpFlags::Pure | OpFlags::FusesActivation)                                             \
      .window(TRANSPOSED ? WindowOp::ConvTranspose : WindowOp::Conv, RANK)                         \
      .typeRule(RULE)
// Their weights' rows are their output channels (dim 1), so batch
// normalization after them folds into weight and bias.
KC_CONV(conv1d_, "nn.Conv1d", conv1d, false, 1).channelAxis(1);
KC_CONV(conv2d_, "nn.Conv2d", conv2d, false, 2).channelAxis(1);
KC_CONV(conv3d_, "nn.Conv3d", conv3d, false, 3);
KC_CONV(convt1d_, "nn.ConvTranspose1d", convT1d, true, 1);
KC_CONV(convt2d_, "nn.ConvTranspose2d", convT2d, true, 2);
KC_CONV(convt3d_, "nn.ConvTranspose3d", convT3d, true, 3);

KC_REGISTER_OP(linear_, "nn.Linear")
    .describe("y = x Wᵀ + b")
    .input("input")
    .weight("weight")
    .weight("bias", true)
    .attr("in_features", AttrValue::integer(0))
    .attr("out_features", AttrValue::integer(0))
    .attr("bias", AttrValue::boolean(true))
    .flags(OpFlags::Pure | OpFlags::FusesActivation)
    .channelAxis(-1)
    .typeRule(linear);

// Normalization.
#define KC_BN(ID, NAME)                                                                            \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe("batch normalization with running statistics")                                     \
      .input("input")                                                                              \
      .weight("running_mean")                                                                      \
      .weight("running_var")                                                                       \
      .weight("weight", true)                                                                      \
      .weight("bias", true)                                                                        \
      .attr("num_features", AttrValue::integer(0))                                                 \
      .attr("eps", AttrValue::real(1e-5))                                                          \
      .attr("affine", AttrValue::boolean(true))                                                    \
      .flags(OpFlags::Pure | OpFlags::FusesActivation)                                             \
      .typeRule(sameAsInput)
KC_BN(bn1d_, "nn.BatchNorm1d").flags(OpFlags::BatchNorm);
KC_BN(bn2d_, "nn.BatchNorm2d").flags(OpFlags::BatchNorm);
KC_BN(bn3d_, "nn.BatchNorm3d");

KC_REGISTER_OP(layernorm_, "nn.LayerNorm")
    .describe("layer normalization over the trailing normalized_shape dims")
    .input("input")
    .weight("weight", true)
    .weight("bias", true)
    .attr("normalized_shape", ints({}), true)
    .attr("eps", AttrValue::real(1e-5))
    .attr("elementwise_affine", AttrValue::boolean(true))
    .flags(OpFlags::Pure)
    .typeRule(sameAsInput);
KC_REGISTER_OP(groupnorm_, "nn.GroupNorm")
    .describe("group normalization")
    .input("input")
    .weight("weight", true)
    .weight("bias", true)
    .attr("num_groups", AttrValue::integer(1), true)
    .attr("num_channels", AttrValue::integer(0))
    .attr("eps", AttrValue::real(1e-5))
    .attr("affine", AttrValue::boolean(true))
    .flags(OpFlags::Pure)
    .typeRule(sameAsInput);
#define KC_INSTNORM(ID, NAME)                                                                      \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe("instance normalization")                                                          \
      .input("input")                                                                              \
      .weight("weight", true)                                                                      \
      .weight("bias", true)                                                                        \
      .weight("running_mean", true)                                                                \
      .weight("running_var", true)                                                                 \
      .attr("num_features", AttrValue::integer(0))                                                 \
      .attr("eps", AttrValue::real(1e-5))                                                          \
      .attr("affine", AttrValue::boolean(false))                                                   \
      .attr("track_running_stats", AttrValue::boolean(false))                                      \
      .flags(OpFlags::Pure)                                                                        \
      .typeRule(sameAsInput)
KC_INSTNORM(instnorm1d_, "nn.InstanceNorm1d");
KC_INSTNORM(instnorm2d_, "nn.InstanceNorm2d");
KC_INSTNORM(instnorm3d_, "nn.InstanceNorm3d");

// Pooling.
#define KC_POOL(ID, NAME, RULE, DOC, RANK, KIND)                                                   \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe(DOC)                                                                               \
      .input("input")                                                                              \
      .attr("kernel_size", ints({}), true)                                                         \
      .attr("stride", AttrValue())                                                                 \
      .attr("padding", ints({0}))                                                                  \
      .attr("dilation", ints({1}))                                                                 \
      .attr("ceil_mode", AttrValue::boolean(false))                                                \
      .attr("return_indices", AttrValue::boolean(false))                                           \
      .attr("count_include_pad", AttrValue::boolean(true))                                         \
      .attr("divisor_override", AttrValue())                                                       \
      .flags(OpFlags::Pure)                                                                        \
      .window(WindowOp::Pool, RANK, PoolKind::KIND)                                                \
      .typeRule(RULE)
KC_POOL(maxpool1d_, "nn.MaxPool1d", pool1d, "max pooling", 1, Max)
    .alias("F.max_pool1d")
    .outputs(-1);
KC_POOL(maxpool2d_, "nn.MaxPool2d", pool2d, "max pooling", 2, Max)
    .alias("F.max_pool2d")
    .outputs(-1);
KC_POOL(maxpool3d_, "nn.MaxPool3d", pool3d, "max pooling", 3, Max)
    .alias("F.max_pool3d")
    .outputs(-1);
KC_POOL(avgpool1d_, "nn.AvgPool1d", pool1d, "average pooling", 1, Average).alias("F.avg_pool1d");
KC_POOL(avgpool2d_, "nn.AvgPool2d", pool2d, "average pooling", 2, Average).alias("F.avg_pool2d");
KC_POOL(avgpool3d_, "nn.AvgPool3d", pool3d, "average pooling", 3, Average).alias("F.avg_pool3d");

#define KC_ADAPTIVE(ID, NAME, ALIAS, RULE, DOC)                                                    \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe(DOC)                                                                               \
      .alias(ALIAS)                                                                                \
      .input("input")                                                                              \
      .attr("output_size", ints({}), true)                                                         \
      .flags(OpFlags::Pure)                                                                        \
      .typeRule(RULE)
KC_ADAPTIVE(aap1d_, "nn.AdaptiveAvgPool1d", "F.adaptive_avg_pool1d", adaptive1d,
            "adaptive average pooling");
KC_ADAPTIVE(aap2d_, "nn.AdaptiveAvgPool2d", "F.adaptive_avg_pool2d", adaptive2d,
            "adaptive average pooling");
KC_ADAPTIVE(aap3d_, "nn.AdaptiveAvgPool3d", "F.adaptive_avg_pool3d", adaptive3d,
            "adaptive average pooling");
KC_ADAPTIVE(amp1d_, "nn.AdaptiveMaxPool1d", "F.adaptive_max_pool1d", adaptive1d,
            "adaptive max pooling")
    .attr("return_indices", AttrValue::boolean(false))
    .outputs(-1);
KC_ADAPTIVE(amp2d_, "nn.AdaptiveMaxPool2d", "F.adaptive_max_pool2d", adaptive2d,
            "adaptive max pooling")
    .attr("return_indices", AttrValue::boolean(false))
    .outputs(-1);
KC_ADAPTIVE(amp3d_, "nn.AdaptiveMaxPool3d", "F.adaptive_max_pool3d", adaptive3d,
            "adaptive max pooling")
    .attr("return_indices", AttrValue::boolean(false))
    .outputs(-1);

// Power-average pooling: (Σ x^p over the window)^(1/p).
#define KC_LPPOOL(ID, NAME, ALIAS, RULE)                                                           \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe("power-average pooling")                                                           \
      .alias(ALIAS)                                                                                \
      .input("input")                                                                              \
      .attr("norm_type", AttrValue::real(2.0), true)                                               \
      .attr("kernel_size", ints({}), true)                                                         \
      .attr("stride", AttrValue())                                                                 \
      .attr("ceil_mode", AttrValue::boolean(false))                                                \
      .flags(OpFlags::Pure)                                                                        \
      .typeRule(RULE)
KC_LPPOOL(lppool1d_, "nn.LPPool1d", "F.lp_pool1d", pool1d);
KC_LPPOOL(lppool2d_, "nn.LPPool2d", "F.lp_pool2d", pool2d);

// Activations: one input, same type out.
#define KC_ACT(ID, NAME, ALIAS, DOC)                                                               \
  KC_REGISTER_OP(ID, NAME).describe(DOC).alias(ALIAS).input("input").flags(kAct).typeRule(        \
      sameAsInput)
KC_ACT(relu_, "nn.ReLU", "F.relu", "max(x, 0)")
    .alias("torch.relu")
    .activation(ActivationKind::Relu);
KC_ACT(relu6_, "nn.ReLU6", "F.relu6", "min(max(x, 0), 6)").activation(ActivationKind::Relu6);
KC_ACT(sigmoid_, "nn.Sigmoid", "F.sigmoid", "1 / (1 + exp(-x))")
    .alias("torch.sigmoid")
    .activation(ActivationKind::Sigmoid);
KC_ACT(tanh_, "nn.Tanh", "F.tanh", "tanh(x)").alias("torch.tanh");
KC_ACT(silu_, "nn.SiLU", "F.silu", "x * sigmoid(x)").activation(ActivationKind::Silu);
KC_ACT(hardswish_, "nn.Hardswish", "F.hardswish", "x * relu6(x + 3) / 6")
    .activation(ActivationKind::Hardswish);
KC_ACT(hardsigmoid_, "nn.Hardsigmoid", "F.hardsigmoid", "relu6(x + 3) / 6");
KC_ACT(mish_, "nn.Mish", "F.mish", "x * tanh(softplus(x))");
KC_ACT(selu_, "nn.SELU", "F.selu", "scaled ELU");
KC_ACT(softsign_, "nn.Softsign", "F.softsign", "x / (1 + |x|)");
KC_ACT(logsigmoid_, "nn.LogSigmoid", "F.logsigmoid", "log(sigmoid(x))");
KC_ACT(tanhshrink_, "nn.Tanhshrink", "F.tanhshrink", "x - tanh(x)");
KC_ACT(gelu_, "nn.GELU", "F.gelu", "x * Φ(x) (approximate=tanh: the tanh form)")
    .attr("approximate", AttrValue::string("none"))
    .activation(ActivationKind::Gelu);
KC_ACT(leakyrelu_, "nn.LeakyReLU", "F.leaky_relu", "x if x > 0 else negative_slope * x")
    .attr("negative_slope", AttrValue::real(0.01))
    .activation(ActivationKind::LeakyRelu);
KC_ACT(elu_, "nn.ELU", "F.elu", "x if x > 0 else alpha * (exp(x) - 1)")
    .attr("alpha", AttrValue::real(1.0));
KC_ACT(celu_, "nn.CELU", "F.celu", "continuously differentiable ELU")
    .attr("alpha", AttrValue::real(1.0));
KC_ACT(hardtanh_, "nn.Hardtanh", "F.hardtanh", "clamp(x, min_val, max_val)")
    .attr("min_val", AttrValue::real(-1.0))
    .attr("max_val", AttrValue::real(1.0));
KC_ACT(softplus_, "nn.Softplus", "F.softplus", "log(1 + exp(beta x)) / beta")
    .attr("beta", AttrValue::real(1.0))
    .attr("threshold", AttrValue::real(20.0));
KC_REGISTER_OP(prelu_, "nn.PReLU")
    .describe("x if x > 0 else weight * x")
    .input("input")
    .weight("weight")
    .attr("num_parameters", AttrValue::integer(1))
    .flags(kAct)
    .typeRule(sameAsInput);
// pnnx writes F.prelu when the slopes are an operand (constant ones make
// an nn.PReLU).
KC_REGISTER_OP(fprelu_, "F.prelu")
    .describe("x if x > 0 else weight * x, the slopes an operand")
    .input("input")
    .input("weight")
    .flags(OpFlags::Pure)
    .typeRule(sameAsInput);
KC_ACT(softmax_, "nn.Softmax", "F.softmax", "softmax along dim")
    .alias("torch.softmax")
    .attr("dim", AttrValue::integer(-1));
KC_ACT(logsoftmax_, "nn.LogSoftmax", "F.log_softmax", "log(softmax) along dim")
    .attr("dim", AttrValue::integer(-1));
KC_ACT(softmin_, "nn.Softmin", "F.softmin", "softmax(-x) along dim")
    .attr("dim", AttrValue::integer(-1));

// Resampling.
KC_REGISTER_OP(upsample_, "nn.Upsample")
    .describe("upsampling by size or scale_factor (nearest, bilinear, ...)")
    .alias("F.upsample")
    .alias("F.interpolate")
    .input("input")
    .attr("size", AttrValue())
    .attr("scale_factor", AttrValue())
    .attr("mode", AttrValue::string("nearest"))
    .attr("align_corners", AttrValue())
    .attr("recompute_scale_factor", AttrValue())
    .flags(OpFlags::Pure)
    .typeRule(upsample);
// nn.Upsample with the mode (and align_corners) fixed by the op type: ops
// of their own, as the padding modules below.
#define KC_UPSAMPLE_PRESET(ID, NAME, DOC)                                                          \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe(DOC)                                                                               \
      .input("input")                                                                              \
      .attr("size", AttrValue())                                                                   \
      .attr("scale_factor", AttrValue())                                                           \
      .flags(OpFlags::Pure)                                                                        \
      .typeRule(upsample)
KC_UPSAMPLE_PRESET(upsamplingnearest2d_, "nn.UpsamplingNearest2d", "nearest upsampling");
KC_UPSAMPLE_PRESET(upsamplenearest_, "F.upsample_nearest", "nearest upsampling");
KC_UPSAMPLE_PRESET(upsamplingbilinear2d_, "nn.UpsamplingBilinear2d",
                   "bilinear upsampling with align_corners=True");
KC_UPSAMPLE_PRESET(upsamplebilinear_, "F.upsample_bilinear",
                   "bilinear upsampling with align_corners=True");
KC_REGISTER_OP(pixelshuffle_, "nn.PixelShuffle")
    .describe("(C·r², H, W) → (C, H·r, W·r)")
    .alias("F.pixel_shuffle")
    .input("input")
    .attr("upscale_factor", AttrValue::integer(1), true)
    .flags(OpFlags::Pure)
    .typeRule(pixelShuffle);
KC_REGISTER_OP(pixelunshuffle_, "nn.PixelUnshuffle")
    .describe("(C, H·r, W·r) → (C·r², H, W)")
    .alias("F.pixel_unshuffle")
    .input("input")
    .attr("downscale_factor", AttrValue::integer(1), true)
    .flags(OpFlags::Pure)
    .typeRule(pixelShuffle);
KC_REGISTER_OP(pad_, "F.pad")
    .describe("pad the trailing dims (constant, reflect, replicate, circular)")
    .input("input")
    .attr("pad", AttrValue())
    .attr("padding", AttrValue())
    .attr("mode", AttrValue::string("constant"))
    .attr("value", AttrValue())
    .flags(OpFlags::Pure | OpFlags::Pad)
    .typeRule(pad);

// The padding modules are F.pad with the mode fixed by the op type (pnnx
// writes only `padding`, and `value`): ops of their own rather than
// aliases, so that the mode is not lost on the way to the kernel.
#define KC_PAD_MODULE(ID, NAME, MODE)                                                              \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe("F.pad with mode '" MODE "'")                                                      \
      .input("input")                                                                              \
      .attr("padding", ints({}), true)                                                             \
      .attr("value", AttrValue::real(0.0))                                                         \
      .flags(OpFlags::Pure | OpFlags::Pad)                                                         \
      .typeRule(pad)
KC_PAD_MODULE(zeropad2d_, "nn.ZeroPad2d", "constant");
KC_PAD_MODULE(constantpad1d_, "nn.ConstantPad1d", "constant");
KC_PAD_MODULE(constantpad2d_, "nn.ConstantPad2d", "constant");
KC_PAD_MODULE(constantpad3d_, "nn.ConstantPad3d", "constant");
KC_PAD_MODULE(reflectionpad1d_, "nn.ReflectionPad1d", "reflect");
KC_PAD_MODULE(reflectionpad2d_, "nn.ReflectionPad2d", "reflect");
KC_PAD_MODULE(replicationpad1d_, "nn.ReplicationPad1d", "replicate");
KC_PAD_MODULE(replicationpad2d_, "nn.ReplicationPad2d", "replicate");
KC_PAD_MODULE(replicationpad3d_, "nn.ReplicationPad3d", "replicate");

KC_REGISTER_OP(sdpa_, "F.scaled_dot_product_attention")
    .describe("softmax(query keyᵀ · scale + mask) value, per leading index")
    .input("query")
    .input("key")
    .input("value")
    .input("attn_mask")
    .attr("dropout_p", AttrValue::real(0.0))
    .attr("is_causal", AttrValue::boolean(false))
    .attr("scale", AttrValue())
    .attr("enable_gqa", AttrValue::boolean(false))
    .flags(OpFlags::Pure | OpFlags::Variadic)
    .typeRule(sdpa);

KC_REGISTER_OP(mha_, "nn.MultiheadAttention")
    .describe("multi-head attention (PyTorch's nn.MultiheadAttention)")
    .input("query")
    .input("key")
    .input("value")
    .weight("in_proj_weight", true)
    .weight("in_proj_bias", true)
    .weight("out_proj.weight")
    .weight("out_proj.bias", true)
    .weight("q_proj_weight", true)
    .weight("k_proj_weight", true)
    .weight("v_proj_weight", true)
    .weight("bias_k", true)
    .weight("bias_v", true)
    .attr("embed_dim", AttrValue::integer(0), true)
    .attr("num_heads", AttrValue::integer(1), true)
    .attr("batch_first", AttrValue::boolean(false))
    .attr("bias", AttrValue::boolean(true))
    .attr("add_bias_kv", AttrValue::boolean(false))
    .attr("add_zero_attn", AttrValue::boolean(false))
    .attr("kdim", AttrValue::integer(0))
    .attr("vdim", AttrValue::integer(0))
    .outputs(-1)
    .flags(OpFlags::Pure | OpFlags::Variadic)
    .typeRule(mha);

KC_REGISTER_OP(identity_, "nn.Identity")
    .describe("no-op (the dropouts in inference)")
    .alias("nn.Dropout")
    .alias("nn.Dropout2d")
    .alias("nn.Dropout3d")
    .alias("nn.AlphaDropout")
    .alias("F.dropout")
    .alias("F.dropout2d")
    .alias("F.dropout3d")
    .alias("F.dropoutnd")
    .alias("F.alpha_dropout")
    .alias("F.feature_alpha_dropout")
    .alias("Tensor.contiguous")
    .alias("torch.clone")
    .alias("Tensor.clone")
    .alias("torch.positive")
    .input("input")
    .flags(OpFlags::Pure | OpFlags::NoOp)
    .typeRule(sameAsInput);

} // namespace
