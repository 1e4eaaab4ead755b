//===- FuseOps.cpp - Group calls that run as one step ---------------------===//
//
// Finds the calls of `main` that the interpreter can run as one step and
// makes each group a fused function, so that the grouping is part of the
// IR: `kc-opt` prints it, lit tests pin it, and the interpreter executes it.
//
//   %1 = nn.Conv2d(%0, weight=@w) ...          fn @fused_0(%x: ...) -> ... fused {
//   %2 = nn.ReLU(%1)                  ⇒          %1 = nn.Conv2d(%x, weight=@w) ...
//                                                %2 = nn.ReLU(%1)
//                                                return %2
//                                              }
//                                              %2 = @fused_0(%0)
//
// Four patterns, each joining a call to the group that computes one of its
// data inputs, when that value is read by nothing else and is no model
// output:
//   - an activation (OpDef::activation) after an op that applies one in its
//     epilogue (OpFlags::FusesActivation: convolutions, nn.Linear,
//     torch.matmul, batch normalization) or after an expression with an
//     f32 result;
//   - an expression with an f32 result of the same type as that op's
//     output, after the op and before its activation: a residual sum, a
//     bias added to a product (then `conv → add → relu` is one group);
//   - a depthwise 2-D convolution after a pointwise one (1x1, stride 1, no
//     padding, one group), each with its activation: the interpreter may
//     then run the two in bands of rows that stay in cache;
//   - a pointwise convolution after an expression that scales its input
//     per channel (x * s, s of shape [N or 1, C, 1, 1]: the gate of a
//     squeeze-and-excitation block): the convolution may scale its input
//     as it reads it, and the product is never stored.
// An activation and a convolution join through their only data input; an expression through the one
// input a group computes, its other operands becoming the fused function's parameters. Whether a
// kernel takes the activation or the expression, or the pair runs in bands, is the interpreter's
// choice among its kernels; a group it cannot join runs as its calls, one step each, with the same
// result.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/IR/Rpn.h"
#include "kc/IR/Uses.h"
#include "kc/IR/WindowAttrs.h"
#include "kc/Pass/Pass.h"
#include "kc/Pass/PassUtils.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace kc;

namespace {

/// The data operands of a call (weights and scalar constants excluded).
llvm::SmallVector<const ExprNode *, 2> dataInputs(const CallNode &c) {
  llvm::SmallVector<const ExprNode *, 2> r;
  for (const ExprNode *a : c.dataArgs()) {
    if (auto *k = llvm::dyn_cast<ConstantNode>(a); k && k->isScalar())
      continue;
    r.push_back(a);
  }
  return r;
}

bool isOp(const CallNode &c, OpFlags f) {
  const OpDef *d = c.opDef();
  return d && d->is(f);
}

bool isActivation(const CallNode &c) {
  const OpDef *d = c.opDef();
  return d && d->activation() != ActivationKind::None;
}

const TensorTypeNode *tensorOf(const ExprNode *e) {
  return llvm::dyn_cast_or_null<TensorTypeNode>(e->type().get());
}

/// A call of an expression function with an f32 result: its kernel applies
/// an activation to each block as it stores it.
bool isFloatExpression(const CallNode &c, const Module &m) {
  const FunctionNode *f = m.callee(c);
  const TensorTypeNode *t = tensorOf(&c);
  return f && f->isPrimitive() && t && t->dtype() == DType::F32;
}

/// nn.Conv2d: the 1x1 and depthwise pair is a pair of 2-D convolutions.
bool isConv2d(const CallNode &c) {
  static const OpDef *conv2d = OpRegistry::global().lookup("nn.Conv2d");
  return c.opDef() == conv2d;
}

/// A 1x1 convolution with stride 1, no padding and one group.
bool isPointwise(const CallNode &c) {
  if (!isConv2d(c))
    return false;
  auto w = WindowAttrs::from(c, 2, WindowOp::Conv);
  if (!w) {
    llvm::consumeError(w.takeError());
    return false;
  }
  auto ones = [](const std::vector<int64_t> &v) {
    return llvm::all_of(v, [](int64_t x) { return x == 1; });
  };
  return ones(w->kernel) && ones(w->stride) && w->zeroPadding() && w->groups == 1;
}

/// A convolution with one group per channel, as many outputs as inputs.
bool isDepthwise(const CallNode &c) {
  if (!isConv2d(c) || c.numArgs() == 0)
    return false;
  const TensorTypeNode *in = tensorOf(c.arg(0).get()), *out = tensorOf(&c);
  int64_t g = c.attrs().getInt("groups", 1);
  return in && out && in->rank() == 4 && out->rank() == 4 && g > 1 && in->dims()[1] == g &&
         out->dims()[1] == g;
}

/// One group as it forms: its calls in dataflow order, and what may join it.
struct Group {
  std::vector<const CallNode *> calls;
  bool takesActivation = false; ///< the last call applies no activation yet
  bool takesExpression = false; ///< the group is one op with an epilogue, nothing after it
  bool takesDepthwise = false;  ///< the group is a pointwise convolution (+ activation)
  bool takesPointwise = false;  ///< the group is a per-channel scale
  size_t order = 0;             ///< groups made before this one
};

/// A call of an expression function computing x * s, a 4-d x of the
/// result's type and s of shape [N or 1, C, 1, 1] (matchChannelScale).
bool isChannelScale(const CallNode &c, const Module &m) {
  const FunctionNode *f = m.callee(c);
  const TensorTypeNode *out = tensorOf(&c);
  if (!f || !f->isPrimitive() || !out || !out->isStatic())
    return false;
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < c.numArgs(); ++i) {
    const TensorTypeNode *t = tensorOf(c.arg(i).get());
    if (!t || !t->isStatic() || t->dtype() != out->dtype())
      return false;
    shapes.push_back(t->dims().vec());
  }
  auto prog = lowerToRpn(*f);
  if (!prog) {
    llvm::consumeError(prog.takeError());
    return false;
  }
  return matchChannelScale(*prog, shapes, out->dims()).has_value();
}

/// Whether two values have one tensor type.
bool sameTensorType(const ExprNode *a, const ExprNode *b) {
  const TensorTypeNode *ta = tensorOf(a), *tb = tensorOf(b);
  return ta && tb && ta->dtype() == tb->dtype() && ta->dims() == tb->dims();
}

class Grouper {
public:
  Grouper(const Module &m, const Function &main) : m_(m), uses_(countUses(main)) {
    if (auto *t = llvm::dyn_cast<TupleNode>(main->body().get()))
      for (const Expr &f : t->fields())
        outputs_.insert(f.get());
    else
      outputs_.insert(main->body().get());
  }

  /// Assigns `c` (visited in dataflow order) to a group, or to none.
  void visit(const CallNode &c) {
    bool expression = isFloatExpression(c, m_);
    if (!c.opDef() && !expression)
      return;
    if (expression) {
      if (Group *g = takingExpression(c)) {
        g->takesExpression = g->takesDepthwise = g->takesPointwise = false;
        g->calls.push_back(&c);
        groupOf_[&c] = g;
        return;
      }
    }
    if (Group *g = joinable(c)) {
      if (isActivation(c) && g->takesActivation) {
        g->takesActivation = g->takesExpression = g->takesPointwise = false;
      } else if (isDepthwise(c) && g->takesDepthwise) {
        g->takesDepthwise = g->takesExpression = false;
        g->takesActivation = true;
      } else if (isPointwise(c) && g->takesPointwise) {
        g->takesPointwise = g->takesDepthwise = false;
        g->takesActivation = g->takesExpression = true;
      } else {
        g = nullptr;
      }
      if (g) {
        g->calls.push_back(&c);
        groupOf_[&c] = g;
        return;
      }
    }
    if (!isOp(c, OpFlags::FusesActivation) && !expression)
      return;
    groups_.push_back(std::make_unique<Group>());
    Group *g = groups_.back().get();
    g->order = groups_.size() - 1;
    g->calls.push_back(&c);
    g->takesActivation = true;
    g->takesExpression = !expression;
    g->takesDepthwise = isPointwise(c);
    g->takesPointwise = expression && isChannelScale(c, m_);
    groupOf_[&c] = g;
  }

  /// The groups of two calls or more, keyed by their last call.
  llvm::DenseMap<const CallNode *, const Group *> fusedByLast() const {
    llvm::DenseMap<const CallNode *, const Group *> r;
    for (const auto &g : groups_)
      if (g->calls.size() > 1)
        r[g->calls.back()] = g.get();
    return r;
  }

private:
  /// The group whose last call computes `c`'s only data input, read by
  /// `c` alone.
  Group *joinable(const CallNode &c) const {
    auto in = dataInputs(c);
    return in.size() == 1 ? endingIn(in[0]) : nullptr;
  }

  /// The group taking expression `c` into its epilogue: of the groups
  /// that take one and end in an input of `c` of `c`'s type, read by `c`
  /// alone, the one made last (its output is the likeliest in cache). The
  /// other inputs stay parameters: a residual sum of two convolutions runs
  /// in the second one's epilogue.
  Group *takingExpression(const CallNode &c) const {
    Group *found = nullptr;
    for (const ExprNode *a : c.dataArgs()) {
      Group *g = endingIn(a);
      if (g && g->takesExpression && sameTensorType(a, &c) && (!found || g->order > found->order))
        found = g;
    }
    return found;
  }

  /// The group whose last call computes `v`, if `v` is read once and is no
  /// model output.
  Group *endingIn(const ExprNode *v) const {
    if (uses_.lookup(v) != 1 || outputs_.count(v))
      return nullptr;
    auto *p = llvm::dyn_cast<CallNode>(v);
    auto it = p ? groupOf_.find(p) : groupOf_.end();
    if (it == groupOf_.end() || it->second->calls.back() != p)
      return nullptr;
    if (auto *pt = llvm::dyn_cast_or_null<TupleTypeNode>(p->type().get()); pt)
      return nullptr;
    return it->second;
  }

  const Module &m_;
  llvm::DenseMap<const ExprNode *, unsigned> uses_;
  llvm::DenseSet<const ExprNode *> outputs_;
  std::vector<std::unique_ptr<Group>> groups_;
  llvm::DenseMap<const CallNode *, Group *> groupOf_;
};

/// Replaces each group's last call by a call of the group's fused function;
/// the group's other calls are then read by nothing and drop out.
class Fuser final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  Fuser(Module &m, llvm::DenseMap<const CallNode *, const Group *> groups)
      : m_(m), groups_(std::move(groups)) {}
  uint64_t numGroups = 0, numCalls = 0;

  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    auto it = groups_.find(pre);
    if (it == groups_.end())
      return post;
    const Group &g = *it->second;
    // The body: the group's calls again, each reading the one before it;
    // the first call's data operands become the parameters.
    llvm::DenseMap<const ExprNode *, Expr> inside;
    std::vector<Var> params;
    std::vector<Expr> args;
    Expr last;
    for (const CallNode *c : g.calls) {
      std::vector<Expr> operands;
      for (size_t i = 0; i < c->numArgs(); ++i) {
        const Expr &a = c->arg(i);
        if (auto found = inside.find(a.get()); found != inside.end()) {
          operands.push_back(found->second);
        } else if (llvm::isa<ConstantNode>(a.get())) {
          operands.push_back(a);
        } else {
          Var p = var("x" + std::to_string(params.size()), a->type());
          inside[a.get()] = p;
          params.push_back(p);
          args.push_back(Mutate(a));
          operands.push_back(p);
        }
      }
      Call copy = call(c->callee(), operands, c->attrs(), c->keys(), c->name());
      copy->setLoc(c->loc());
      copy->setType(c->type());
      inside[c] = copy;
      last = copy;
    }
    Function fn =
        make<const FunctionNode>(freshName(), params, last, pre->type(), FunctionKind::Fused);
    fn->setLoc(g.calls.front()->loc());
    // Added now, so that the module lists the groups in dataflow order
    // (setMain keeps the order of the functions it already has).
    m_.add(fn);
    ++numGroups;
    numCalls += g.calls.size();
    Call n = call(fn, args, Attrs{}, std::vector<ArgKey>(args.size()), g.calls.front()->name());
    n->setLoc(g.calls.front()->loc());
    return n;
  }

private:
  std::string freshName() {
    while (true) {
      std::string name = "fused_" + std::to_string(next_++);
      if (!m_.lookup(name))
        return name;
    }
  }

  Module &m_;
  llvm::DenseMap<const CallNode *, const Group *> groups_;
  unsigned next_ = 0;
};

class FuseOps final : public Pass {
public:
  llvm::StringRef name() const override { return "fuse-ops"; }
  llvm::StringRef description() const override {
    return "Group each convolution, linear layer or matrix product with the elementwise "
           "expression and the activation after it, each batch normalization and each float "
           "expression with its activation, "
           "and a pointwise convolution with the depthwise one it feeds and the per-channel "
           "scale that feeds it, into fused functions";
  }
  llvm::Error run(Module &m) override {
    Function main = m.main();
    if (!main)
      return llvm::Error::success();
    // main's dataflow only: the bodies of functions it calls (expressions,
    // groups made before) are not entered.
    Grouper grouper(m, main);
    DataflowVisit(main->body(), [&](const Expr &e) {
      if (auto *c = llvm::dyn_cast<CallNode>(e.get()))
        grouper.visit(*c);
    });
    auto groups = grouper.fusedByLast();
    if (groups.empty())
      return llvm::Error::success();
    Fuser f(m, std::move(groups));
    rewriteMain(m, [&](const Expr &body) { return f.Mutate(body); });
    numGroups += f.numGroups;
    numCalls += f.numCalls;
    return llvm::Error::success();
  }

private:
  Statistic numGroups{this, "num-groups", "Fused functions made"};
  Statistic numCalls{this, "num-calls", "Calls moved into fused functions"};
};

} // namespace

KC_REGISTER_PASS(FuseOps);
