//===- MergeLayout.cpp - One reshape or permute where there were two ------===//
//
//   %1 = torch.flatten(%0) ...                  %2 = Tensor.reshape(%0) {shape=[2,32]}
//   %2 = Tensor.reshape(%1) {shape=[2,32]}  ⇒
//
//   %1 = Tensor.permute(%0) {dims=[0,2,1,3]}    %2 = Tensor.permute(%0) {dims=[0,2,3,1]}
//   %2 = Tensor.permute(%1) {dims=[0,1,3,2]} ⇒
//
// A Tensor.reshape (view) of any reshape (OpFlags::Reshape) reads the
// first one's input: its shape is absolute, and the elements' order is
// the same. A permute of a permute is one permute of the composed dims,
// none when they compose to 0, 1, .... The inner call stays where others
// read it. A reshape whose shape holds a 0 (copy the input's dim) or whose
// attributes are operands is left.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/AttrOperands.h"
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/IR/Permutation.h"
#include "kc/Pass/Pass.h"
#include "kc/Pass/PassUtils.h"

using namespace kc;

namespace {

const OpDef *reshapeOp() {
  static const OpDef *op = OpRegistry::global().lookup("Tensor.reshape");
  return op;
}

/// `c`, when it has one operand and its attributes are no operands.
const CallNode *plainUnary(const Expr &e) {
  auto *c = llvm::dyn_cast<CallNode>(e.get());
  return c && c->opDef() && c->numArgs() == 1 && !hasAttrOperands(*c) ? c : nullptr;
}

/// `c` reading `input`, with `attrs` and the type `c` had (a chain of three
/// merges in one run reads it).
Expr withInput(const CallNode &c, const Type &type, const Expr &input, Attrs attrs) {
  Call n = call(c.callee(), {input}, std::move(attrs), c.keys(), c.name());
  n->setLoc(c.loc());
  n->setType(type);
  return n;
}

class Merger final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  uint64_t reshapes = 0, permutes = 0;

  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    const CallNode *outer = plainUnary(post);
    const CallNode *inner = outer ? plainUnary(outer->arg(0)) : nullptr;
    if (!inner)
      return post;
    if (outer->opDef() == reshapeOp() && inner->opDef()->is(OpFlags::Reshape)) {
      std::vector<int64_t> shape = outer->attrs().getInts("shape");
      if (shape.empty() || llvm::is_contained(shape, 0))
        return post;
      ++reshapes;
      return withInput(*outer, pre->type(), inner->arg(0), outer->attrs());
    }
    if (outer->opDef() == permuteOp() && inner->opDef() == permuteOp()) {
      auto *t = llvm::dyn_cast_or_null<TensorTypeNode>(inner->arg(0)->type().get());
      if (!t)
        return post;
      auto p = permutationOf(*inner, int64_t(t->rank()));
      auto q = permutationOf(*outer, int64_t(t->rank()));
      if (!p || !q) {
        llvm::consumeError(p.takeError());
        llvm::consumeError(q.takeError());
        return post;
      }
      std::vector<int64_t> r(q->size());
      bool identity = true;
      for (size_t i = 0; i < r.size(); ++i) {
        r[i] = (*p)[size_t((*q)[i])];
        identity = identity && r[i] == int64_t(i);
      }
      ++permutes;
      if (identity)
        return inner->arg(0);
      Attrs attrs = outer->attrs();
      attrs.set("dims", AttrValue::intList(r));
      return withInput(*outer, pre->type(), inner->arg(0), attrs);
    }
    return post;
  }
};

class MergeLayout final : public Pass {
public:
  llvm::StringRef name() const override { return "merge-layout"; }
  llvm::StringRef description() const override {
    return "Merge a reshape of a reshape into one reshape, and a permute of a permute into "
           "one permute (or none)";
  }
  llvm::Error run(Module &m) override {
    Merger r;
    rewriteMain(m, [&](const Expr &body) { return r.Mutate(body); });
    numReshapes += r.reshapes;
    numPermutes += r.permutes;
    return llvm::Error::success();
  }

private:
  Statistic numReshapes{this, "num-reshapes", "Reshapes of reshapes merged"};
  Statistic numPermutes{this, "num-permutes", "Permutes of permutes merged"};
};

} // namespace

KC_REGISTER_PASS(MergeLayout);
