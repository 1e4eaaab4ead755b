//===- FuseConvBn.cpp - Fold BatchNorm into the preceding Conv/Linear -----===//
//
//   %1 = nn.Conv2d(%0, weight=@w, bias=@b)          %1 = nn.Conv2d(%0, weight=@w', bias=@b')
//   %2 = nn.BatchNorm2d(%1, running_mean=@m, ...) ⇒
//
// with s = γ / sqrt(σ² + ε), w' = w · s (per output channel) and
// b' = (b − μ) · s + β. Applies when the convolution (or Linear, for
// BatchNorm1d) has no other user and all weights are present.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/Pass/Pass.h"
#include "kc/Pass/PassUtils.h"

#include "llvm/ADT/DenseMap.h"

#include <cmath>
#include <cstring>

using namespace kc;

namespace {

/// A weight's values as f32, or empty when absent or of another type.
std::vector<float> floats(const ConstantNode *c) {
  if (!c || c->isScalar() || !c->hasData())
    return {};
  auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(c->type().get());
  if (!tt || tt->dtype() != DType::F32 || c->data()->size() % 4)
    return {};
  std::vector<float> v(c->data()->size() / 4);
  if (!v.empty()) // an empty weight's bytes may be a null pointer
    std::memcpy(v.data(), c->data()->bytes().data(), c->data()->size());
  return v;
}

Constant floatTensor(std::string name, Type t, const std::vector<float> &v) {
  std::vector<uint8_t> bytes(v.size() * 4);
  if (!bytes.empty())
    std::memcpy(bytes.data(), v.data(), bytes.size());
  return tensorConstant(std::move(name), std::move(t), TensorData::owned(std::move(bytes)));
}

class Fuser final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  explicit Fuser(const llvm::DenseMap<const ExprNode *, unsigned> &uses) : uses_(uses) {}
  uint64_t fused = 0;

  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    auto *bn = llvm::cast<CallNode>(post.get());
    const OpDef *op = bn->opDef();
    if (!op || !op->is(OpFlags::BatchNorm) || bn->numArgs() == 0)
      return post;
    auto *prod = llvm::dyn_cast<CallNode>(bn->arg(0).get());
    auto *preProd = llvm::dyn_cast<CallNode>(pre->arg(0).get());
    if (!prod || !preProd || !prod->opDef() || uses_.lookup(preProd) != 1)
      return post;
    // BatchNorm normalizes dim 1, which must be the producer's channel axis
    // (a linear layer's last dim is dim 1 only in 2-D).
    int axis = prod->opDef()->channelAxis();
    auto *pt = llvm::dyn_cast_or_null<TensorTypeNode>(preProd->type().get());
    if (axis == 0 || (axis < 0 && (!pt || int(pt->rank()) + axis != 1)))
      return post;
    const ConstantNode *wc = prod->weight("weight");
    std::vector<float> w = floats(wc), mean = floats(bn->weight("running_mean")),
                       var = floats(bn->weight("running_var"));
    if (w.empty() || mean.empty() || var.size() != mean.size())
      return post;
    size_t C = mean.size();
    if (w.size() % C)
      return post;
    std::vector<float> gamma = floats(bn->weight("weight")), beta = floats(bn->weight("bias"));
    bool affine = bn->attrs().getBool("affine", true) && !gamma.empty();
    if (affine && (gamma.size() != C || beta.size() != C))
      return post;
    std::vector<float> bias = floats(prod->weight("bias"));
    if (!bias.empty() && bias.size() != C)
      return post;
    double eps = bn->attrs().getFloat("eps", 1e-5);
    size_t per = w.size() / C;
    std::vector<float> nb(C);
    for (size_t o = 0; o < C; ++o) {
      double s = (affine ? gamma[o] : 1.0) / std::sqrt(double(var[o]) + eps);
      for (size_t k = 0; k < per; ++k)
        w[o * per + k] = float(w[o * per + k] * s);
      nb[o] = float(((bias.empty() ? 0.0 : bias[o]) - mean[o]) * s + (affine ? beta[o] : 0.0));
    }
    std::string base = prod->name().empty() ? bn->name() : prod->name();
    llvm::SmallVector<Expr, 4> args;
    llvm::SmallVector<ArgKey, 4> keys;
    for (size_t i = 0; i < prod->numArgs(); ++i) {
      if (prod->keys()[i].role == ArgRole::Weight)
        continue;
      args.push_back(prod->arg(i));
      keys.push_back(prod->keys()[i]);
    }
    args.push_back(floatTensor(base + ".weight", wc->type(), w));
    keys.push_back({ArgRole::Weight, "weight"});
    args.push_back(floatTensor(base + ".bias", tensorType(DType::F32, {int64_t(C)}), nb));
    keys.push_back({ArgRole::Weight, "bias"});
    Attrs attrs = prod->attrs();
    attrs.set("bias", AttrValue::boolean(true));
    Call n = call(prod->callee(), args, attrs, keys, prod->name());
    n->setLoc(prod->loc());
    ++fused;
    return n;
  }

private:
  const llvm::DenseMap<const ExprNode *, unsigned> &uses_;
};

class FuseConvBn final : public Pass {
public:
  llvm::StringRef name() const override { return "fuse-conv-bn"; }
  llvm::StringRef description() const override {
    return "Fold BatchNorm into the weights and bias of the Conv or Linear before it";
  }
  llvm::Error run(Module &m) override {
    Function main = m.main();
    if (!main)
      return llvm::Error::success();
    auto uses = countUses(main);
    Fuser f(uses);
    rewriteMain(m, [&](const Expr &body) { return f.Mutate(body); });
    numFused += f.fused;
    return llvm::Error::success();
  }

private:
  Statistic numFused{this, "num-fused", "BatchNorms folded into the preceding op"};
};

} // namespace

KC_REGISTER_PASS(FuseConvBn);
