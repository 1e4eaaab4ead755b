//===- Functor.cpp - Visitors and mutators over the IR --------------------===//
#include "kc/IR/Functor.h"

#include "llvm/ADT/DenseSet.h"

namespace kc {

//===----------------------------------------------------------------------===//
// ExprVisitor

void ExprVisitor::VisitExpr(const Expr &e) {
  if (!e)
    return;
  if (visitCounter_[e.get()]++ > 0)
    return;
  ExprFunctor::VisitExpr(e);
}

void ExprVisitor::VisitExpr_(const VarNode *) {}
void ExprVisitor::VisitExpr_(const ConstantNode *) {}
void ExprVisitor::VisitExpr_(const OpNode *) {}
void ExprVisitor::VisitExpr_(const GlobalVarNode *) {}

void ExprVisitor::VisitExpr_(const CallNode *op) {
  VisitExpr(op->callee());
  for (const Expr &a : op->args())
    VisitExpr(a);
}

void ExprVisitor::VisitExpr_(const FunctionNode *op) {
  for (const Var &p : op->params())
    VisitExpr(p);
  VisitExpr(op->body());
}

void ExprVisitor::VisitExpr_(const TupleNode *op) {
  for (const Expr &f : op->fields())
    VisitExpr(f);
}

void ExprVisitor::VisitExpr_(const TupleGetItemNode *op) { VisitExpr(op->tuple()); }

//===----------------------------------------------------------------------===//
// ExprMutator

Expr ExprMutator::VisitExpr(const Expr &e) {
  if (!e)
    return e;
  auto it = memo_.find(e.get());
  if (it != memo_.end())
    return it->second;
  Expr r = ExprFunctor::VisitExpr(e);
  memo_[e.get()] = r;
  return r;
}

Expr ExprMutator::VisitExpr_(const VarNode *op) { return Expr(op); }
Expr ExprMutator::VisitExpr_(const ConstantNode *op) { return Expr(op); }
Expr ExprMutator::VisitExpr_(const OpNode *op) { return Expr(op); }
Expr ExprMutator::VisitExpr_(const GlobalVarNode *op) { return Expr(op); }

Expr ExprMutator::VisitExpr_(const CallNode *op) {
  Expr callee = Mutate(op->callee());
  llvm::SmallVector<Expr, 4> args;
  bool changed = callee.get() != op->callee().get();
  for (const Expr &a : op->args()) {
    args.push_back(Mutate(a));
    changed |= args.back().get() != a.get();
  }
  if (!changed)
    return Expr(op);
  Call n = call(callee, args, op->attrs(), op->keys(), op->name());
  n->setLoc(op->loc());
  return n;
}

Expr ExprMutator::VisitExpr_(const FunctionNode *op) {
  llvm::SmallVector<Var, 4> params;
  for (const Var &p : op->params()) {
    Expr np = Mutate(p);
    auto *v = llvm::dyn_cast_or_null<VarNode>(np.get());
    params.push_back(v ? Var(v) : p);
  }
  return withBody(Function(op), params, Mutate(op->body()));
}

Expr ExprMutator::VisitExpr_(const TupleNode *op) {
  llvm::SmallVector<Expr, 4> fields;
  for (const Expr &f : op->fields())
    fields.push_back(Mutate(f));
  return withFields(Tuple(op), fields);
}

Expr ExprMutator::VisitExpr_(const TupleGetItemNode *op) {
  return withTuple(TupleGetItem(op), Mutate(op->tuple()));
}

//===----------------------------------------------------------------------===//
// Dataflow expansion

static bool isDataflow(const ExprNode *e) {
  return llvm::isa<CallNode>(e) || llvm::isa<TupleNode>(e) || llvm::isa<TupleGetItemNode>(e);
}

/// Pushes the dataflow operands of `n` onto `stack` right to left, so that
/// they come off it left to right.
template <class Push> static void pushOperands(const Expr &n, Push push) {
  if (auto *c = llvm::dyn_cast<CallNode>(n.get())) {
    for (size_t i = c->numArgs(); i-- > 0;)
      push(c->arg(i));
  } else if (auto *t = llvm::dyn_cast<TupleNode>(n.get())) {
    for (size_t i = t->fields().size(); i-- > 0;)
      push(t->fields()[i]);
  } else if (auto *g = llvm::dyn_cast<TupleGetItemNode>(n.get())) {
    push(g->tuple());
  }
}

void PostfixVisit(const Expr &e, const std::function<bool(const Expr &)> &fexpand,
                  const std::function<void(const Expr &)> &fvisit) {
  // Each entry: a use of a node, and whether its operands were walked.
  std::vector<std::pair<Expr, bool>> stack{{e, false}};
  while (!stack.empty()) {
    auto [node, expanded] = stack.back();
    stack.pop_back();
    if (!expanded && node && isDataflow(node.get()) && fexpand(node)) {
      stack.emplace_back(node, true);
      pushOperands(node, [&](const Expr &o) { stack.emplace_back(o, false); });
      continue;
    }
    if (node)
      fvisit(node);
  }
}

void ExpandDataflow(const Expr &expr, const std::function<bool(const Expr &)> &fcheckVisited,
                    const std::function<void(const Expr &)> &fvisitLeaf) {
  // Each entry: a node and whether its children have been pushed already.
  std::vector<std::pair<Expr, bool>> stack;
  auto push = [&](const Expr &e) {
    if (e && !fcheckVisited(e))
      stack.emplace_back(e, false);
  };
  push(expr);
  while (!stack.empty()) {
    auto &[node, expanded] = stack.back();
    if (fcheckVisited(node)) {
      stack.pop_back();
      continue;
    }
    if (expanded || !isDataflow(node.get())) {
      Expr n = node;
      stack.pop_back();
      fvisitLeaf(n);
      continue;
    }
    expanded = true;
    Expr n = node; // `stack` may reallocate below
    // Push children in reverse so that they are visited left to right.
    pushOperands(n, push);
    if (auto *c = llvm::dyn_cast<CallNode>(n.get()))
      push(c->callee());
  }
}

//===----------------------------------------------------------------------===//
// MixedModeVisitor

bool MixedModeVisitor::CheckVisited(const Expr &e) {
  auto it = visitCounter_.find(e.get());
  if (it != visitCounter_.end() && it->second >= size_t(visitLimit_)) {
    ++it->second;
    return true;
  }
  return false;
}

void MixedModeVisitor::VisitLeaf(const Expr &e) {
  if (visitCounter_[e.get()]++ < size_t(visitLimit_))
    ExprFunctor::VisitExpr(e);
}

void MixedModeVisitor::VisitExpr(const Expr &e) {
  if (!e)
    return;
  ExpandDataflow(
      e, [this](const Expr &n) { return CheckVisited(n); },
      [this](const Expr &n) { VisitLeaf(n); });
}

// Dataflow children were visited by ExpandDataflow before the node itself;
// only the callee (an Op or a GlobalVar leaf) can still be unvisited.
void MixedModeVisitor::VisitExpr_(const CallNode *op) {
  if (!isDataflow(op->callee().get()))
    VisitExpr(op->callee());
}
void MixedModeVisitor::VisitExpr_(const TupleNode *) {}
void MixedModeVisitor::VisitExpr_(const TupleGetItemNode *) {}

//===----------------------------------------------------------------------===//
// MixedModeMutator

void MixedModeMutator::VisitLeaf(const Expr &e) {
  if (!memo_.count(e.get())) {
    Expr r = DispatchVisitExpr(e);
    memo_[e.get()] = r;
  }
}

Expr MixedModeMutator::VisitExpr(const Expr &e) {
  if (!e)
    return e;
  auto it = memo_.find(e.get());
  if (it != memo_.end())
    return it->second;
  if (preVisit_)
    ExpandDataflow(
        e, [this](const Expr &n) { return CheckVisited(n); },
        [this](const Expr &n) { VisitLeaf(n); });
  else
    VisitLeaf(e);
  return memo_[e.get()];
}

//===----------------------------------------------------------------------===//
// ExprRewriter, PostOrderRewrite, PostOrderVisit

ExprRewriter::FType ExprRewriter::initVTable() {
  FType vtable;
#define KC_EXPR_NODE(Name)                                                                         \
  vtable.set_dispatch<Name##Node>(                                                                 \
      [](const Expr &n, ExprRewriter *self, const Expr &post) -> Expr {                            \
        return self->Rewrite_(static_cast<const Name##Node *>(n.get()), post);                     \
      });
#include "kc/IR/Nodes.def"
  return vtable;
}

Expr ExprRewriter::Rewrite(const Expr &pre, const Expr &post) {
  static const FType vtable = initVTable();
  return vtable(pre, this, post);
}

namespace {
/// Hooks the rule in where every node, leaves included, is rewritten once its
/// inputs are (TVM's design); the Call/Tuple/TupleGetItem Rewrite_ hooks are
/// left as the identity, or those kinds would get the rule twice.
class PostOrderRewriter final : public MixedModeMutator {
public:
  explicit PostOrderRewriter(ExprRewriter *rewriter) : rewriter_(rewriter) {}

  Expr DispatchVisitExpr(const Expr &e) override {
    Expr post = MixedModeMutator::DispatchVisitExpr(e);
    return rewriter_->Rewrite(e, post);
  }

private:
  ExprRewriter *rewriter_;
};
} // namespace

Expr PostOrderRewrite(const Expr &expr, ExprRewriter *rewriter) {
  PostOrderRewriter mutator(rewriter);
  return mutator.Mutate(expr);
}

void PostOrderVisit(const Expr &e, const std::function<void(const Expr &)> &fvisit) {
  class Visitor final : public MixedModeVisitor {
  public:
    explicit Visitor(const std::function<void(const Expr &)> &f) : f_(f) {}
    void VisitLeaf(const Expr &e) override {
      MixedModeVisitor::VisitLeaf(e);
      f_(e);
    }

  private:
    const std::function<void(const Expr &)> &f_;
  };
  Visitor v(fvisit);
  v.VisitExpr(e);
}

void DataflowVisit(const Expr &e, const std::function<void(const Expr &)> &fvisit) {
  llvm::DenseSet<const ExprNode *> seen;
  ExpandDataflow(
      e, [&](const Expr &x) { return seen.count(x.get()) != 0; },
      [&](const Expr &x) {
        if (seen.insert(x.get()).second)
          fvisit(x);
      });
}

} // namespace kc
