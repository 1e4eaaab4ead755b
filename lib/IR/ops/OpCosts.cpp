//===- OpCosts.cpp - Floating-point operations of each op -----------------===//
//
// One cost rule per op, by name, as TVM attaches attributes to registered
// ops: the registrations stay as they are, and a test checks that every op
// with a kernel has a rule here. Conventions (docs/ops.md): a multiply-add
// counts 2; an elementwise function counts 1 per output element, whatever
// it computes; data movement counts 0.
//
//===----------------------------------------------------------------------===//
#include "TypeRuleUtils.h"

#include "kc/IR/WindowAttrs.h"

#include "kc/IR/Einsum.h"
#include "kc/IR/Functor.h"
#include "kc/IR/OpCost.h"
#include "kc/IR/Rpn.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <numeric>

using namespace kc;
using namespace kc::typerules;

namespace {

using CostRule = std::optional<double> (*)(const CallNode &);

/// Element count of a static tensor type, as a double (counts overflow int64
/// only for absurd models, which would still print a finite figure).
std::optional<double> count(const TensorTypeNode *t) {
  if (!t || !t->isStatic())
    return std::nullopt;
  double n = 1;
  for (int64_t d : t->dims())
    n *= double(d);
  return n;
}

/// The result's tensor type (the first field of a tuple result).
const TensorTypeNode *resultType(const CallNode &c) {
  const TypeNode *t = c.type().get();
  if (auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(t))
    t = tt->size() ? tt->fields()[0].get() : nullptr;
  return llvm::dyn_cast_or_null<TensorTypeNode>(t);
}

std::optional<double> outCount(const CallNode &c) { return count(resultType(c)); }

double product(llvm::ArrayRef<int64_t> v) {
  return std::accumulate(v.begin(), v.end(), 1.0, [](double a, int64_t b) { return a * b; });
}

std::optional<double> zero(const CallNode &) { return 0.0; }

template <int PerElement> std::optional<double> perOutput(const CallNode &c) {
  auto n = outCount(c);
  return n ? std::optional<double>(PerElement * *n) : std::nullopt;
}

bool hasBias(const CallNode &c) { return c.weight("bias") != nullptr; }

const TensorTypeNode *weightType(const CallNode &c, llvm::StringRef key) {
  const ConstantNode *w = c.weight(key);
  return w ? llvm::dyn_cast_or_null<TensorTypeNode>(w->type().get()) : nullptr;
}

/// Convolution: 2 per multiply-add over (in_channels / groups) x kernel for
/// each output element, plus 1 for the bias. The weight's shape says both
/// (out, in/groups, k...); a transposed one is (in, out/groups, k...) and
/// each input element spreads over out/groups x kernel outputs.
std::optional<double> convFlops(const CallNode &c, const TensorTypeNode *w, bool transposed,
                                bool bias) {
  auto out = outCount(c);
  auto in = count(dataType(c, 0));
  if (!w || w->rank() < 2 || !w->isStatic() || !out || !in)
    return std::nullopt;
  double perMac = product(w->dims().drop_front());
  double macs = transposed ? *in * perMac : *out * perMac;
  return 2 * macs + (bias ? *out : 0);
}

template <bool Transposed> std::optional<double> conv(const CallNode &c) {
  return convFlops(c, weightType(c, "weight"), Transposed, hasBias(c));
}

std::optional<double> linear(const CallNode &c) {
  const TensorTypeNode *w = weightType(c, "weight");
  auto out = outCount(c);
  if (!w || w->rank() != 2 || !out)
    return std::nullopt;
  return 2 * *out * double(w->dim(1)) + (hasBias(c) ? *out : 0);
}

std::optional<double> matmul(const CallNode &c) {
  const TensorTypeNode *a = dataType(c, 0);
  auto out = outCount(c);
  if (!a || a->rank() == 0 || !out)
    return std::nullopt;
  return 2 * *out * double(a->dim(-1));
}

/// Multi-head attention over a query of L and keys of S positions, batch N:
/// the q, k, v and output projections, Q·Kᵀ and the weighted sum of V
/// (2 per multiply-add each), and a softmax over every (head, L, S) score.
std::optional<double> attention(const CallNode &c) {
  const TensorTypeNode *q = dataType(c, 0);
  const TensorTypeNode *k = c.numDataArgs() > 1 ? dataType(c, 1) : q;
  const TensorTypeNode *v = c.numDataArgs() > 2 ? dataType(c, 2) : k;
  if (!q || !k || !v || q->rank() == 0 || !q->isStatic() || !k->isStatic() || !v->isStatic())
    return std::nullopt;
  bool bf = c.attrs().getBool("batch_first", false);
  auto positions = [&](const TensorTypeNode *t) {
    return double(t->dim(bf && t->rank() == 3 ? 1 : 0));
  };
  double N = q->rank() == 3 ? double(q->dim(bf ? 0 : 1)) : 1;
  double L = positions(q), S = positions(k);
  double E = double(c.attrs().getInt("embed_dim", q->dim(-1)));
  double H = double(std::max<int64_t>(1, c.attrs().getInt("num_heads", 1)));
  double kdim = double(k->dim(-1)), vdim = double(v->dim(-1));
  double proj = 2 * N * (L * E * E + S * kdim * E + S * vdim * E + L * E * E);
  double scores = 2 * N * L * S * E * 2;
  double softmax = 5 * N * H * L * S;
  return proj + scores + softmax;
}

/// F.scaled_dot_product_attention: the two products per leading index
/// (query by key, weights by value) and the softmax of the scores.
std::optional<double> sdpa(const CallNode &c) {
  const TensorTypeNode *q = dataType(c, 0), *k = dataType(c, 1), *v = dataType(c, 2);
  if (!q || !k || !v || q->rank() < 2 || !q->isStatic() || !k->isStatic() || !v->isStatic())
    return std::nullopt;
  double lead = double(product(q->dims().drop_back(2)));
  double L = double(q->dim(-2)), E = double(q->dim(-1)), S = double(k->dim(-2));
  double Ev = double(v->dim(-1));
  return lead * (2 * L * S * E + 2 * L * S * Ev + 5 * L * S);
}

/// A convolution whose weight is operand 1 (F.conv*), counted as conv:
/// the weight's shape gives the multiply-adds, a third operand is the bias.
template <bool Transposed> std::optional<double> operandConv(const CallNode &c) {
  const TensorTypeNode *w = c.numDataArgs() > 1 ? dataType(c, 1) : nullptr;
  return convFlops(c, w, Transposed, c.numDataArgs() > 2);
}

/// A product whose contracted dim is the last of operand `Arg` (F.linear,
/// torch.mv: 0; torch.addmm, torch.baddbmm: 1, after the added input):
/// 2 per multiply-add, and for the forms that add an input 1 per output.
template <size_t Arg> std::optional<double> contraction(const CallNode &c) {
  const TensorTypeNode *a = c.numDataArgs() > Arg ? dataType(c, Arg) : nullptr;
  auto out = outCount(c);
  if (!a || a->rank() == 0 || !a->isStatic() || !out)
    return std::nullopt;
  return 2 * *out * double(a->dim(-1)) + (Arg > 0 ? *out : 0);
}

/// torch.einsum: every combination of the labels' values is one product of
/// the operands (operands - 1 multiplies) and one add.
std::optional<double> einsum(const CallNode &c) {
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < c.numDataArgs(); ++i) {
    const TensorTypeNode *t = dataType(c, i);
    if (!t || !t->isStatic())
      return std::nullopt;
    shapes.emplace_back(t->dims().begin(), t->dims().end());
  }
  auto spec = parseEinsum(c.attrs().getString("equation", ""), shapes);
  if (!spec) {
    llvm::consumeError(spec.takeError());
    return std::nullopt;
  }
  double combos = 1;
  std::vector<bool> seen(spec->sizes.size(), false);
  for (const std::vector<int> &labels : spec->inputs)
    for (int l : labels)
      if (size_t(l) < seen.size() && !seen[l]) {
        seen[l] = true;
        combos *= double(spec->sizes[l]);
      }
  return combos * double(std::max<size_t>(1, shapes.size()));
}

/// nn.LSTM, nn.GRU, nn.RNN: each input and hidden weight multiplies a
/// vector at every step of every sequence (2 per multiply-add); the gates'
/// elementwise work is left out.
std::optional<double> recurrent(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in || in->rank() == 0 || !in->isStatic() || in->dim(-1) <= 0)
    return std::nullopt;
  double steps = *count(in) / double(in->dim(-1)); // sequence length x batch
  double weights = 0;
  for (size_t i = 0; i < c.numArgs(); ++i) {
    if (c.keys()[i].role != ArgRole::Weight ||
        !llvm::StringRef(c.keys()[i].name).startswith("weight_"))
      continue;
    auto n = count(llvm::dyn_cast_or_null<TensorTypeNode>(c.arg(i)->type().get()));
    if (!n)
      return std::nullopt;
    weights += *n;
  }
  return 2 * steps * weights;
}

/// `PerElement` operations for each element of operand 0 (distances,
/// norms and statistics read every input element a few times).
template <int PerElement> std::optional<double> perInput(const CallNode &c) {
  auto n = count(dataType(c, 0));
  return n ? std::optional<double>(PerElement * *n) : std::nullopt;
}

/// Batch norm with running statistics: a scale and a shift per element.
std::optional<double> batchNorm(const CallNode &c) { return perOutput<2>(c); }

/// Layer, group and instance norm: the mean (1), the variance (3: subtract,
/// square, add), normalizing (2) and, when affine, scale and shift (2).
std::optional<double> statNorm(const CallNode &c) {
  auto n = outCount(c);
  if (!n)
    return std::nullopt;
  bool affine = c.weight("weight") != nullptr || c.weight("bias") != nullptr;
  return (affine ? 8 : 6) * *n;
}

/// Max and average pooling: one operation per window tap per output, and a
/// division per output for the average.
template <bool Average> std::optional<double> pool(const CallNode &c) {
  auto n = outCount(c);
  const OpDef *d = c.opDef();
  if (!n || !d || !d->window())
    return std::nullopt;
  auto w = WindowAttrs::from(c, size_t(d->window()->rank), WindowOp::Pool);
  if (!w) {
    llvm::consumeError(w.takeError());
    return std::nullopt;
  }
  return *n * product(w->kernel) + (Average ? *n : 0);
}

/// Adaptive pools and reductions read every input element once; averages
/// divide once per output.
template <bool Average> std::optional<double> reduce(const CallNode &c) {
  auto in = count(dataType(c, 0));
  auto out = outCount(c);
  if (!in || !out)
    return std::nullopt;
  return *in + (Average ? *out : 0);
}

/// Softmax, log-softmax, softmin: max, subtract, exp, sum, divide (or log).
std::optional<double> softmax(const CallNode &c) { return perOutput<5>(c); }

/// Nearest resampling copies; (bi)linear interpolates with 3 operations per
/// linear blend, one blend per interpolated dim and pair.
std::optional<double> upsample(const CallNode &c) {
  auto n = outCount(c);
  if (!n)
    return std::nullopt;
  std::string mode = c.attrs().getString("mode", "nearest");
  if (c.calleeName().contains_insensitive("bilinear") || mode == "bilinear")
    return 9 * *n;
  if (mode == "linear")
    return 3 * *n;
  if (mode == "trilinear")
    return 21 * *n;
  if (mode == "bicubic")
    return 32 * *n; // a multiply-add per tap of the 4x4 window
  return 0.0;
}

/// A lowered expression: one operation per elementwise op applied, per
/// output element.
std::optional<double> rpnProgram(const CallNode &c, const RpnProgram &p) {
  auto n = outCount(c);
  if (!n)
    return std::nullopt;
  double ops = 0;
  for (const RpnInstr &in : p.code)
    ops += in.kind == RpnInstr::Kind::Apply && in.op && in.op->is(OpFlags::Elementwise);
  return ops * *n;
}

std::optional<double> rpnCall(const CallNode &c) {
  const AttrValue *program = c.attrs().find("program");
  if (!program || !program->isStringList())
    return std::nullopt;
  auto p = parseRpnTokens(program->getStringList(), unsigned(c.numArgs()));
  if (!p) {
    llvm::consumeError(p.takeError());
    return std::nullopt;
  }
  return rpnProgram(c, *p);
}

const llvm::StringMap<CostRule> &costRules() {
  static const llvm::StringMap<CostRule> rules = [] {
    llvm::StringMap<CostRule> r;
    for (const char *op : {"nn.Conv1d", "nn.Conv2d", "nn.Conv3d"})
      r[op] = conv<false>;
    for (const char *op : {"nn.ConvTranspose1d", "nn.ConvTranspose2d"})
      r[op] = conv<true>;
    r["nn.Linear"] = linear;
    r["torch.matmul"] = matmul;
    r["nn.MultiheadAttention"] = attention;
    r["F.scaled_dot_product_attention"] = sdpa;
    for (const char *op : {"nn.BatchNorm1d", "nn.BatchNorm2d", "nn.BatchNorm3d"})
      r[op] = batchNorm;
    for (const char *op : {"nn.LayerNorm", "nn.GroupNorm", "nn.InstanceNorm2d"})
      r[op] = statNorm;
    for (const char *op : {"nn.MaxPool1d", "nn.MaxPool2d", "nn.MaxPool3d"})
      r[op] = pool<false>;
    for (const char *op : {"nn.AvgPool1d", "nn.AvgPool2d", "nn.AvgPool3d"})
      r[op] = pool<true>;
    for (const char *op : {"nn.AdaptiveMaxPool1d", "nn.AdaptiveMaxPool2d", "torch.sum",
                           "torch.prod", "torch.amax", "torch.amin"})
      r[op] = reduce<false>;
    for (const char *op : {"nn.AdaptiveAvgPool1d", "nn.AdaptiveAvgPool2d", "torch.mean"})
      r[op] = reduce<true>;
    for (const char *op : {"nn.Softmax", "nn.LogSoftmax", "nn.Softmin"})
      r[op] = softmax;
    r["nn.Upsample"] = upsample;
    r["nn.ConvTranspose3d"] = conv<true>;
    for (const char *op : {"F.conv1d", "F.conv2d", "F.conv3d"})
      r[op] = operandConv<false>;
    for (const char *op : {"F.conv_transpose1d", "F.conv_transpose2d", "F.conv_transpose3d"})
      r[op] = operandConv<true>;
    // Deformable convolution: the convolution it computes (its bilinear
    // sampling of the input left out).
    r["torchvision.ops.DeformConv2d"] = conv<false>;
    r["F.linear"] = contraction<0>;
    r["torch.mv"] = contraction<0>;
    r["torch.addmm"] = contraction<1>;
    r["torch.baddbmm"] = contraction<1>;
    r["torch.einsum"] = einsum;
    for (const char *op : {"nn.LSTM", "nn.GRU", "nn.RNN"})
      r[op] = recurrent;
    r["F.batch_norm"] = batchNorm;
    for (const char *op : {"nn.InstanceNorm1d", "nn.InstanceNorm3d", "F.layer_norm", "F.group_norm",
                           "F.instance_norm"})
      r[op] = statNorm;
    for (const char *op : {"nn.LPPool1d", "nn.LPPool2d"})
      r[op] = pool<true>;
    for (const char *op : {"nn.AdaptiveMaxPool3d", "torch.max", "torch.min", "torch.argmax",
                           "torch.argmin", "torch.topk", "torch.sort"})
      r[op] = reduce<false>;
    r["nn.AdaptiveAvgPool3d"] = reduce<true>;
    r["nn.Softmax2d"] = softmax;
    for (const char *op : {"nn.UpsamplingNearest2d", "F.upsample_nearest",
                           "nn.UpsamplingBilinear2d", "F.upsample_bilinear"})
      r[op] = upsample;
    // Statistics over the input: logsumexp (max, subtract, exp, add), std
    // and var (mean, subtract, square, add), norm (abs or square, add).
    for (const char *op : {"torch.logsumexp", "torch.std", "torch.var"})
      r[op] = perInput<4>;
    r["torch.norm"] = perInput<2>;
    r["F.pairwise_distance"] = perInput<3>;
    r["nn.Fold"] = perInput<1>; // overlapping windows add up
    // GLU (a sigmoid and a product), scans, normalization along a dim, LRN
    // (sum of squares, power, divide), cross products, sampling grids,
    // RoIAlign: per output element, as an elementwise function.
    for (const char *op : {"nn.GLU", "torch.cumsum", "torch.cumprod", "torch.cross", "F.normalize",
                           "nn.LocalResponseNorm", "F.grid_sample", "F.affine_grid",
                           "torchvision.ops.RoIAlign", "torch.scatter_add", "F.prelu"})
      r[op] = perOutput<1>;
    r[kRpnOpName] = rpnCall;
    for (const char *op : {"Tensor.reshape",
                           "torch.flatten",
                           "Tensor.permute",
                           "torch.transpose",
                           "torch.cat",
                           "torch.stack",
                           "torch.unbind",
                           "torch.chunk",
                           "torch.split",
                           "torch.tensor_split",
                           "torch.squeeze",
                           "torch.unsqueeze",
                           "Tensor.slice",
                           "Tensor.select",
                           "Tensor.to",
                           "Tensor.expand",
                           "nn.Identity",
                           "nn.PixelShuffle",
                           "nn.PixelUnshuffle",
                           "F.pad",
                           "size",
                           "list",
                           "Tensor.fill",
                           "torch.zeros_like",
                           "torch.ones_like",
                           "torch.empty_like",
                           "torch.full_like",
                           "torch.zeros",
                           "torch.ones",
                           "torch.empty",
                           "torch.full",
                           "Tensor.new_zeros",
                           "Tensor.new_ones",
                           "Tensor.new_empty",
                           "torch.arange",
                           "torch.roll",
                           "torch.flip",
                           "Tensor.repeat",
                           "torch.tile",
                           "torch.repeat_interleave",
                           "nn.ChannelShuffle",
                           "torch.as_strided",
                           "torch.diag",
                           "torch.slice_scatter",
                           "Tensor.slice_copy",
                           "torch.narrow",
                           "torch.t",
                           "Tensor.unflatten",
                           "Tensor.reshape_as",
                           "Tensor.expand_as",
                           "Tensor.type_as",
                           "nn.Embedding",
                           "F.embedding",
                           "torch.index_select",
                           "Tensor.index",
                           "torch.gather",
                           "nn.Unfold",
                           "nn.ZeroPad2d",
                           "nn.ConstantPad1d",
                           "nn.ConstantPad2d",
                           "nn.ConstantPad3d",
                           "nn.ReflectionPad1d",
                           "nn.ReflectionPad2d",
                           "nn.ReplicationPad1d",
                           "nn.ReplicationPad2d",
                           "nn.ReplicationPad3d"})
      r[op] = zero;
    return r;
  }();
  return rules;
}

/// The rule for `op`: its own, or for elementwise ops one per output element.
CostRule ruleFor(const OpDef &op) {
  auto it = costRules().find(op.name());
  if (it != costRules().end())
    return it->second;
  if (op.is(OpFlags::Elementwise) && !op.isOpaque())
    return perOutput<1>;
  return nullptr;
}

} // namespace

namespace kc {

bool hasCostRule(const OpDef &op) { return ruleFor(op) != nullptr; }

std::optional<double> flopCount(const CallNode &call, const Module &m) {
  if (call.global()) {
    const FunctionNode *fn = m.callee(call);
    if (!fn)
      return std::nullopt;
    if (!fn->isPrimitive()) { // a fused group, or a graph: the sum of its calls
      std::optional<double> sum = 0.0;
      DataflowVisit(fn->body(), [&](const Expr &e) {
        if (auto *c = llvm::dyn_cast<CallNode>(e.get()))
          sum = plusFlops(sum, flopCount(*c, m));
      });
      return sum;
    }
    auto p = lowerToRpn(*fn);
    if (!p) {
      llvm::consumeError(p.takeError());
      return std::nullopt;
    }
    return rpnProgram(call, *p);
  }
  const OpDef *op = call.opDef();
  CostRule rule = op ? ruleFor(*op) : nullptr;
  return rule ? rule(call) : std::nullopt;
}

} // namespace kc
