//===- RemoveIdentities.cpp - Drop layout ops that return their input -----===//
//
// pnnx writes layout ops that change nothing when the model's own code is
// shape-generic: a reshape or view to the shape the tensor has, a slice
// over a whole dim, an expand to the same sizes, a permute that keeps
// every dim in place, a pad of zero on every side. Each returns its input:
//
//   %1 = Tensor.reshape(%0) {shape=[1,64,8,8]} : f32[1,64,8,8]   ⇒   (uses of %1 read %0)
//
// A reshape, slice or expand is an identity when its result has its
// input's type (OpFlags::SameTypeIsInput), read from static types; a
// permute when its dims are 0, 1, ...; a pad (OpFlags::Pad) when every
// pair it pads is 0 (kc/IR/Padding.h reads the call). A call whose
// attributes are operands (computed from shapes at run time) is left.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/AttrOperands.h"
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/IR/Padding.h"
#include "kc/IR/Permutation.h"
#include "kc/Pass/Pass.h"
#include "kc/Pass/PassUtils.h"

using namespace kc;

namespace {

/// The only data operand of `c` (weights excluded), or null.
const ExprNode *soleInput(const CallNode &c) {
  return c.numDataArgs() == 1 ? c.dataArg(0) : nullptr;
}

bool isIdentity(const CallNode &c, const ExprNode *in) {
  const OpDef *op = c.opDef();
  if (!op || hasAttrOperands(c))
    return false;
  if (op->is(OpFlags::SameTypeIsInput)) {
    auto *from = llvm::dyn_cast_or_null<TensorTypeNode>(in->type().get());
    auto *to = llvm::dyn_cast_or_null<TensorTypeNode>(c.type().get());
    return from && to && from->isStatic() && typeEqual(in->type(), c.type());
  }
  if (op == permuteOp()) {
    auto *t = llvm::dyn_cast_or_null<TensorTypeNode>(in->type().get());
    if (!t)
      return false;
    auto dims = permutationOf(c, int64_t(t->rank()));
    if (!dims) {
      llvm::consumeError(dims.takeError());
      return false;
    }
    for (size_t i = 0; i < dims->size(); ++i)
      if ((*dims)[i] != int64_t(i))
        return false;
    return true;
  }
  if (op->is(OpFlags::Pad)) {
    auto p = readPadding(c);
    if (!p) {
      llvm::consumeError(p.takeError());
      return false;
    }
    return llvm::all_of(p->pairs, [](int64_t x) { return x == 0; });
  }
  return false;
}

class Remover final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  uint64_t removed = 0;

  /// Decided on `pre`, whose nodes carry their types; what is returned is
  /// post's operand, already rewritten.
  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    const ExprNode *in = soleInput(*pre);
    if (!in || !isIdentity(*pre, in))
      return post;
    ++removed;
    return Expr(soleInput(*llvm::cast<CallNode>(post.get())));
  }
};

class RemoveIdentities final : public Pass {
public:
  llvm::StringRef name() const override { return "remove-identities"; }
  llvm::StringRef description() const override {
    return "Remove reshapes, slices, expands, permutes and pads that return their input "
           "unchanged";
  }
  llvm::Error run(Module &m) override {
    Remover r;
    rewriteMain(m, [&](const Expr &body) { return r.Mutate(body); });
    numRemoved += r.removed;
    return llvm::Error::success();
  }

private:
  Statistic numRemoved{this, "num-removed", "Calls that returned their input"};
};

} // namespace

KC_REGISTER_PASS(RemoveIdentities);
