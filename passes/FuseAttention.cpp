//===- FuseAttention.cpp - Hand-written attention as one call -------------===//
//
//   %s = torch.matmul(%q, %kt)            %kt = torch.transpose(%k) {dim0=-2, dim1=-1}
//   %t = @pnnx_expr_7(%s)                 (mul(@0, c) or div(@0, c); may be absent)
//   %p = F.softmax(%t) {dim=-1}
//   %o = torch.matmul(%p, %v)
//     ⇒ %o = F.scaled_dot_product_attention(%q, %k, %v) {scale=c}
//
// pnnx keeps attention a model writes by hand (q @ k.transpose(-2, -1) *
// scale, softmax, @ v) as these four to five calls; one call computes the
// scores a row block at a time and never stores the scaled ones twice. The
// key may be transposed by torch.transpose or Tensor.permute of the last
// two dims. Each intermediate must be read only along the chain, query,
// key and value must be f32 of one rank with equal leading dims (no
// broadcast), and the softmax over the last dim.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/AttrOperands.h"
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/IR/Permutation.h"
#include "kc/IR/Uses.h"
#include "kc/Pass/Pass.h"
#include "kc/Pass/PassUtils.h"
#include "kc/Pass/PatternMatch.h"

using namespace kc;

namespace {

/// Whether dim `d` (negative from the end) is `want` of a rank-`rank` tensor.
bool isDim(int64_t d, int64_t want, int64_t rank) { return (d < 0 ? d + rank : d) == want; }

/// The key whose last two dims `kt` swaps, or null.
const ExprNode *untransposed(const ExprNode *kt, int64_t rank) {
  if (const CallNode *t = callTo(kt, "torch.transpose")) {
    int64_t a = t->attrs().getInt("dim0", 0), b = t->attrs().getInt("dim1", 1);
    bool swaps = (isDim(a, rank - 2, rank) && isDim(b, rank - 1, rank)) ||
                 (isDim(a, rank - 1, rank) && isDim(b, rank - 2, rank));
    return swaps && t->numDataArgs() == 1 ? t->dataArg(0) : nullptr;
  }
  auto *p = llvm::dyn_cast<CallNode>(kt);
  if (!p || p->opDef() != permuteOp() || hasAttrOperands(*p) || p->numDataArgs() != 1)
    return nullptr;
  auto dims = permutationOf(*p, rank);
  if (!dims) {
    llvm::consumeError(dims.takeError());
    return nullptr;
  }
  for (int64_t i = 0; i < rank; ++i)
    if ((*dims)[i] != (i < rank - 2 ? i : 2 * rank - 3 - i))
      return nullptr;
  return p->dataArg(0);
}

/// For a call of a one-parameter expression function computing
/// mul(@0, c), mul(c, @0) or div(@0, c) with a float literal c: the scale
/// it applies.
std::optional<double> scaleOf(const CallNode &c, const Module &m) {
  const FunctionNode *f = expressionOf(c, m);
  if (!f || c.numArgs() != 1)
    return std::nullopt;
  auto *body = llvm::dyn_cast<CallNode>(f->body().get());
  if (!body || body->numArgs() != 2)
    return std::nullopt;
  const ExprNode *param = f->params()[0].get();
  bool mul = isCallTo(body, "mul"), div = isCallTo(body, "div");
  if ((mul || div) && body->arg(0).get() == param)
    if (auto v = scalarLiteral(body->arg(1).get()); v && (mul || *v != 0))
      return mul ? *v : 1.0 / *v;
  if (mul && body->arg(1).get() == param)
    return scalarLiteral(body->arg(0).get());
  return std::nullopt;
}

/// The chain ending at an attention's second matmul, as found on the typed
/// graph before rewriting.
struct Attention {
  const ExprNode *q, *k, *v;
  std::optional<double> scale;
};

class Matcher {
public:
  explicit Matcher(const Module &m) : m_(m), uses_(countUses(m.main())) {}

  std::optional<Attention> match(const CallNode &out) const {
    const CallNode *pv = callTo(&out, "torch.matmul");
    if (!pv || pv->numDataArgs() != 2 || !staticF32(&out))
      return std::nullopt;
    const CallNode *softmax = callTo(pv->dataArg(0), "nn.Softmax");
    const TensorTypeNode *st = softmax ? staticF32(softmax) : nullptr;
    if (!st || !internal(softmax) || softmax->numDataArgs() != 1)
      return std::nullopt;
    int64_t rank = int64_t(st->rank());
    if (rank < 2 || !isDim(softmax->attrs().getInt("dim", -1), rank - 1, rank))
      return std::nullopt;
    const ExprNode *scores = softmax->dataArg(0);
    std::optional<double> scale;
    if (auto *e = llvm::dyn_cast<CallNode>(scores); e && (scale = scaleOf(*e, m_))) {
      if (!internal(e))
        return std::nullopt;
      scores = e->arg(0).get();
    }
    const CallNode *qk = callTo(scores, "torch.matmul");
    if (!qk || !internal(qk) || qk->numDataArgs() != 2)
      return std::nullopt;
    Attention a{qk->dataArg(0), untransposed(qk->dataArg(1), rank), pv->dataArg(1), scale};
    if (!a.k)
      return std::nullopt;
    const TensorTypeNode *q = staticF32(a.q), *k = staticF32(a.k), *v = staticF32(a.v);
    if (!q || !k || !v || int64_t(q->rank()) != rank || k->rank() != q->rank() ||
        v->rank() != q->rank())
      return std::nullopt;
    for (int64_t i = 0; i < rank - 2; ++i)
      if (q->dim(i) != k->dim(i) || q->dim(i) != v->dim(i))
        return std::nullopt;
    return a;
  }

private:
  /// Read once, by the next call of the chain (countUses counts main's
  /// results as uses: an output is never internal).
  bool internal(const ExprNode *e) const { return uses_.lookup(e) == 1; }

  const Module &m_;
  llvm::DenseMap<const ExprNode *, unsigned> uses_;
};

class FuseAttention final : public Pass {
public:
  llvm::StringRef name() const override { return "fuse-attention"; }
  llvm::StringRef description() const override {
    return "Replace hand-written attention (matmul, scale, softmax, matmul) by "
           "F.scaled_dot_product_attention";
  }
  llvm::Error run(Module &m) override {
    if (!m.main())
      return llvm::Error::success();
    Matcher matcher(m);
    numFused += rewriteCalls(m, [&](const CallNode &pre, auto rewritten) -> Expr {
      std::optional<Attention> a = matcher.match(pre);
      if (!a)
        return nullptr;
      // PyTorch's default is 1/sqrt(E); a chain without a scale has 1.
      Attrs attrs{{"dropout_p", AttrValue::real(0.0)},
                  {"is_causal", AttrValue::boolean(false)},
                  {"scale", AttrValue::real(a->scale.value_or(1.0))}};
      Call n = call("F.scaled_dot_product_attention",
                    {rewritten(a->q), rewritten(a->k), rewritten(a->v)}, std::move(attrs), {},
                    pre.name());
      n->setLoc(pre.loc());
      return n;
    });
    return llvm::Error::success();
  }

private:
  Statistic numFused{this, "num-fused", "Attention chains replaced"};
};

} // namespace

KC_REGISTER_PASS(FuseAttention);
