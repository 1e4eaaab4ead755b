//===- FuseLayerNorm.cpp - Hand-written layer norm as one call ------------===//
//
//   %m = torch.mean(%x) {dim=[-1], keepdim=true}
//   %d = @e1(%x, %m)                       pow(sub(@0,@1),2), square(...) or mul(s, s)
//   %v = torch.mean(%d) {dim=[-1], keepdim=true}
//        (or %v = torch.var(%x) {dim=[-1], unbiased=false, keepdim=true})
//   %y = @e2(%x, %m, %v, %w, %b)           sub(@0,@1) / sqrt(add(@2, eps)) * @3 + @4
//     ⇒ %y = F.layer_norm(input=%x, weight=%w, bias=%b) {eps=..., normalized_shape=[64]}
//
// pnnx fuses hand-written GELU, SiLU and Hardswish itself, but leaves a
// layer norm a model writes by hand as two reductions and two expressions
// (tiny transformers and ConvNeXt ports often do). The normalization may be
// div(s, sqrt(v + eps)) or mul(s, rsqrt(v + eps)), either operand order of
// the commutative ops; the scale and shift are optional and must have the
// normalized shape. The reductions are over the same last dims, the mean
// and the squared deviations read only inside the pattern.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Functor.h"
#include "kc/IR/Uses.h"
#include "kc/Pass/Pass.h"
#include "kc/Pass/PassUtils.h"
#include "kc/Pass/PatternMatch.h"

using namespace kc;

namespace {

/// Operands a, b of commutative `c` in the order that makes `first(a)`
/// hold, or nullopt.
template <class Pred>
std::optional<std::pair<const ExprNode *, const ExprNode *>> ordered(const CallNode *c,
                                                                     Pred first) {
  if (!c)
    return std::nullopt;
  const ExprNode *a = c->arg(0).get(), *b = c->arg(1).get();
  if (first(a))
    return std::make_pair(a, b);
  if (first(b))
    return std::make_pair(b, a);
  return std::nullopt;
}

/// The parameter indices and epsilon of an expression body computing
/// (x - m) / sqrt(v + eps) [* w] [+ b]; -1 for an absent w or b.
struct NormBody {
  int x = -1, m = -1, v = -1, w = -1, b = -1;
  double eps = 0;
};

class BodyMatcher {
public:
  explicit BodyMatcher(const FunctionNode &f) : f_(f) {}

  std::optional<NormBody> match() const {
    NormBody n;
    const ExprNode *e = f_.body().get();
    // The shift and scale are operands (parameters), never literals: a
    // "+ 1.0" is no layer norm's.
    if (auto p = ordered(callTo(e, "add", 2), [&](const ExprNode *a) { return !isParam(a); });
        p && param(p->second) >= 0) {
      n.b = param(p->second);
      e = p->first;
    }
    if (auto p = ordered(callTo(e, "mul", 2), [&](const ExprNode *a) { return !isParam(a); });
        p && param(p->second) >= 0) {
      n.w = param(p->second);
      e = p->first;
    }
    // (x - m) / sqrt(v + eps), or (x - m) * rsqrt(v + eps).
    const ExprNode *centred = nullptr, *root = nullptr;
    if (const CallNode *d = callTo(e, "div", 2)) {
      const CallNode *s = callTo(d->arg(1).get(), "sqrt", 1);
      centred = d->arg(0).get(), root = s ? s->arg(0).get() : nullptr;
    } else if (auto p = ordered(callTo(e, "mul", 2), [&](const ExprNode *a) {
                 return callTo(a, "rsqrt", 1) != nullptr;
               })) {
      centred = p->second, root = llvm::cast<CallNode>(p->first)->arg(0).get();
    }
    const CallNode *sub = callTo(centred, "sub", 2);
    auto var = ordered(callTo(root, "add", 2), [&](const ExprNode *a) { return isParam(a); });
    std::optional<double> eps = var ? scalarLiteral(var->second) : std::nullopt;
    if (!sub || !eps || *eps < 0)
      return std::nullopt;
    n.x = param(sub->arg(0).get()), n.m = param(sub->arg(1).get()), n.v = param(var->first);
    n.eps = *eps;
    if (n.x < 0 || n.m < 0 || n.v < 0)
      return std::nullopt;
    return n;
  }

  /// The node the body squares (pow(s, 2), square(s) or mul(s, s)), or null.
  const ExprNode *squared() const {
    const ExprNode *e = f_.body().get();
    if (const CallNode *p = callTo(e, "pow", 2); p && scalarLiteral(p->arg(1).get()) == 2.0)
      return p->arg(0).get();
    if (const CallNode *q = callTo(e, "square", 1))
      return q->arg(0).get();
    if (const CallNode *m = callTo(e, "mul", 2); m && m->arg(0) == m->arg(1))
      return m->arg(0).get();
    return nullptr;
  }

  /// The parameter index of `e`, or -1.
  int param(const ExprNode *e) const {
    for (size_t i = 0; i < f_.params().size(); ++i)
      if (f_.params()[i].get() == e)
        return int(i);
    return -1;
  }

private:
  bool isParam(const ExprNode *e) const { return param(e) >= 0; }
  const FunctionNode &f_;
};

struct LayerNorm {
  const ExprNode *x, *w, *b;
  std::vector<int64_t> shape;
  double eps;
};

class Matcher {
public:
  explicit Matcher(const Module &m) : m_(m), uses_(countUses(m.main())) {}

  std::optional<LayerNorm> match(const CallNode &y) const {
    const FunctionNode *f = expressionOf(y, m_);
    const TensorTypeNode *yt = staticF32(&y);
    if (!f || !yt)
      return std::nullopt;
    std::optional<NormBody> n = BodyMatcher(*f).match();
    if (!n)
      return std::nullopt;
    const ExprNode *x = y.arg(n->x).get(), *m = y.arg(n->m).get(), *v = y.arg(n->v).get();
    const TensorTypeNode *xt = staticF32(x);
    if (!xt || !typeEqual(x->type(), y.type()))
      return std::nullopt;
    // The mean of x over its last dims, kept.
    const CallNode *mean = callTo(m, "torch.mean", 1);
    auto dims = mean && mean->arg(0).get() == x ? reduced(*mean, xt->rank()) : std::nullopt;
    if (!dims)
      return std::nullopt;
    // The variance: the mean of the squared deviations from that mean, or
    // torch.var of x without Bessel's correction.
    if (const CallNode *vm = callTo(v, "torch.mean", 1)) {
      if (!squaresDeviation(vm->arg(0).get(), x, m) || reduced(*vm, xt->rank()) != dims ||
          uses_.lookup(m) != 2)
        return std::nullopt;
    } else if (const CallNode *var = callTo(v, "torch.var", 1)) {
      if (var->arg(0).get() != x || reduced(*var, xt->rank()) != dims ||
          var->attrs().getBool("unbiased", true) || var->attrs().getInt("correction", 0) != 0 ||
          uses_.lookup(m) != 1)
        return std::nullopt;
    } else {
      return std::nullopt;
    }
    if (uses_.lookup(v) != 1)
      return std::nullopt;
    LayerNorm ln{x, nullptr, nullptr, {}, n->eps};
    for (int64_t d = *dims; d < int64_t(xt->rank()); ++d)
      ln.shape.push_back(xt->dim(d));
    // The scale and shift: tensors of exactly the normalized shape.
    auto affine = [&](int i) -> const ExprNode * {
      const ExprNode *a = i >= 0 ? y.arg(i).get() : nullptr;
      const TensorTypeNode *t = staticF32(a);
      return t && llvm::ArrayRef<int64_t>(t->dims()) == llvm::ArrayRef<int64_t>(ln.shape) ? a
                                                                                          : nullptr;
    };
    ln.w = affine(n->w), ln.b = affine(n->b);
    if ((n->w >= 0 && !ln.w) || (n->b >= 0 && !ln.b))
      return std::nullopt;
    return ln;
  }

private:
  /// `e` if it is an expression call read once, else null.
  const CallNode *readOnce(const ExprNode *e) const {
    auto *c = llvm::dyn_cast_or_null<CallNode>(e);
    return c && expressionOf(*c, m_) && uses_.lookup(c) == 1 ? c : nullptr;
  }
  /// Whether node `s` of expression call `c`'s body is sub(x, m) of c's
  /// operands.
  bool subtracts(const CallNode &c, const ExprNode *s, const ExprNode *x, const ExprNode *m) const {
    const CallNode *sub = callTo(s, "sub", 2);
    BodyMatcher b(*expressionOf(c, m_));
    int i = sub ? b.param(sub->arg(0).get()) : -1, j = sub ? b.param(sub->arg(1).get()) : -1;
    return i >= 0 && j >= 0 && c.arg(i).get() == x && c.arg(j).get() == m;
  }

  /// Whether `d` computes (x - m)^2: an expression squaring sub(x, m) of
  /// its operands, or squaring an operand that is the expression sub(x, m)
  /// (pnnx splits the difference out when the model names it and uses it
  /// twice), each read only here.
  bool squaresDeviation(const ExprNode *d, const ExprNode *x, const ExprNode *m) const {
    const CallNode *sq = readOnce(d);
    if (!sq)
      return false;
    BodyMatcher b(*expressionOf(*sq, m_));
    const ExprNode *s = b.squared();
    if (!s)
      return false;
    if (subtracts(*sq, s, x, m))
      return true;
    int p = b.param(s);
    const CallNode *diff = p >= 0 ? readOnce(sq->arg(p).get()) : nullptr;
    return diff && subtracts(*diff, expressionOf(*diff, m_)->body().get(), x, m);
  }

  /// For a keepdim reduction over the last dims of a rank-`rank` input: the
  /// first of them.
  static std::optional<int64_t> reduced(const CallNode &c, size_t rank) {
    if (!c.attrs().getBool("keepdim", false))
      return std::nullopt;
    std::vector<int64_t> dims = c.attrs().getInts("dim");
    if (dims.empty() || dims.size() > rank)
      return std::nullopt;
    std::vector<bool> seen(rank, false);
    for (int64_t d : dims) {
      int64_t k = d < 0 ? d + int64_t(rank) : d;
      if (k < 0 || k >= int64_t(rank) || seen[k])
        return std::nullopt;
      seen[k] = true;
    }
    int64_t first = int64_t(rank - dims.size());
    for (int64_t k = first; k < int64_t(rank); ++k)
      if (!seen[k])
        return std::nullopt;
    return first;
  }

  const Module &m_;
  llvm::DenseMap<const ExprNode *, unsigned> uses_;
};

class FuseLayerNorm final : public Pass {
public:
  llvm::StringRef name() const override { return "fuse-layer-norm"; }
  llvm::StringRef description() const override {
    return "Replace a hand-written layer norm (mean, squared deviations, mean, normalize) by "
           "F.layer_norm";
  }
  llvm::Error run(Module &m) override {
    if (!m.main())
      return llvm::Error::success();
    Matcher matcher(m);
    numFused += rewriteCalls(m, [&](const CallNode &pre, auto rewritten) -> Expr {
      std::optional<LayerNorm> ln = matcher.match(pre);
      if (!ln)
        return nullptr;
      std::vector<Expr> args{rewritten(ln->x)};
      std::vector<ArgKey> keys{{ArgRole::Named, "input"}};
      for (auto [e, key] : {std::pair(ln->w, "weight"), std::pair(ln->b, "bias")})
        if (e) {
          args.push_back(rewritten(e));
          keys.push_back({ArgRole::Named, key});
        }
      Attrs attrs{{"eps", AttrValue::real(ln->eps)},
                  {"normalized_shape", AttrValue::intList(ln->shape)}};
      Call n = call("F.layer_norm", args, std::move(attrs), keys, pre.name());
      n->setLoc(pre.loc());
      return n;
    });
    return llvm::Error::success();
  }

private:
  Statistic numFused{this, "num-fused", "Layer norms replaced"};
};

} // namespace

KC_REGISTER_PASS(FuseLayerNorm);
