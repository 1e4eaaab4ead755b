//===- kc/IR/Functor.h - Dispatch tables over the IR ------------*- C++ -*-===//
///
/// \file
/// TVM-style functors: a `NodeFunctor` is a table of function pointers indexed
/// by a node's runtime type index; `ExprFunctor` fills one static table per
/// instantiation from the one node list (Nodes.def) and dispatches to
/// `VisitExpr_(const XNode *, Args...)`. On top of it:
///
///  - ExprVisitor      visits every node of a DAG once (recursively);
///  - ExprMutator      memoized rewrite; returns the very same node when no
///                     child changed, so sharing survives;
///  - MixedModeVisitor / MixedModeMutator: the same API, but dataflow nodes
///                     (Call, Tuple, TupleGetItem) are expanded with an explicit
///                     stack in post-order, so a 100,000-node chain neither
///                     overflows the stack nor goes quadratic. Mutators
///                     override `Rewrite_(pre, post)`, which never recurses;
///  - ExprRewriter + PostOrderRewrite, PostOrderVisit.
///
/// Overloads of VisitExpr_/Rewrite_ hide the base class's other overloads:
/// a subclass starts with `using MixedModeMutator::Rewrite_;` (or
/// `using ExprVisitor::VisitExpr_;`) before overriding one of them.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Expr.h"

#include "llvm/ADT/DenseMap.h"

#include <array>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

namespace kc {

//===----------------------------------------------------------------------===//
// NodeFunctor
//===----------------------------------------------------------------------===//

template <typename FType> class NodeFunctor;

/// A dispatch table keyed by node type index. The first parameter is a
/// node handle (`const NodeRef &`, or a raw `const Node *`); the table is open:
/// any code may `set_dispatch<T>` for the kinds it handles.
template <typename R, typename NodeT, typename... Args> class NodeFunctor<R(NodeT, Args...)> {
public:
  using FPointer = R (*)(NodeT n, Args... args);

  bool can_dispatch(NodeT n) const {
    unsigned idx = n->typeIndex();
    return idx < table_.size() && table_[idx] != nullptr;
  }

  /// Calls the function registered for `n`'s kind. Calling a kind without an
  /// entry is a programming error; check `can_dispatch` when the set is open.
  R operator()(NodeT n, Args... args) const {
    return table_[n->typeIndex()](n, std::forward<Args>(args)...);
  }

  template <typename TNode> NodeFunctor &set_dispatch(FPointer f) {
    table_[kindOf<TNode>()] = f;
    return *this;
  }
  template <typename TNode> NodeFunctor &clear_dispatch() {
    table_[kindOf<TNode>()] = nullptr;
    return *this;
  }

private:
  template <typename TNode> static constexpr unsigned kindOf() {
    return static_cast<unsigned>(NodeKindOf<TNode>::value);
  }
  std::array<FPointer, kNumNodeKinds> table_{};
};

//===----------------------------------------------------------------------===//
// ExprFunctor
//===----------------------------------------------------------------------===//

template <typename FType> class ExprFunctor;

template <typename R, typename... Args> class ExprFunctor<R(const Expr &n, Args...)> {
  using TSelf = ExprFunctor<R(const Expr &n, Args...)>;
  using FType = NodeFunctor<R(const Expr &n, TSelf *self, Args...)>;

public:
  using result_type = R;
  virtual ~ExprFunctor() = default;

  R operator()(const Expr &n, Args... args) { return VisitExpr(n, std::forward<Args>(args)...); }

  /// Dispatches on `n`'s kind through the static table.
  virtual R VisitExpr(const Expr &n, Args... args) {
    static const FType vtable = initVTable();
    return vtable(n, this, std::forward<Args>(args)...);
  }

#define KC_EXPR_NODE(Name)                                                                         \
  virtual R VisitExpr_(const Name##Node *op, Args... args) {                                       \
    return VisitExprDefault_(op, std::forward<Args>(args)...);                                     \
  }
#include "kc/IR/Nodes.def"

  /// What a kind the subclass does not handle gets: a default-constructed R.
  virtual R VisitExprDefault_(const ExprNode *op, Args...) {
    if constexpr (std::is_void_v<R>)
      return;
    else
      return R();
  }

private:
  static FType initVTable() {
    FType vtable;
#define KC_EXPR_NODE(Name)                                                                         \
  vtable.template set_dispatch<Name##Node>([](const Expr &n, TSelf *self, Args... args) -> R {     \
    return self->VisitExpr_(static_cast<const Name##Node *>(n.get()),                              \
                            std::forward<Args>(args)...);                                          \
  });
#include "kc/IR/Nodes.def"
    return vtable;
  }
};

//===----------------------------------------------------------------------===//
// ExprVisitor / ExprMutator
//===----------------------------------------------------------------------===//

/// Visits each node of a DAG once, depth first (recursive: use
/// MixedModeVisitor for deep graphs).
class ExprVisitor : public ExprFunctor<void(const Expr &)> {
public:
  void VisitExpr(const Expr &e) override;
  void VisitExpr_(const VarNode *op) override;
  void VisitExpr_(const ConstantNode *op) override;
  void VisitExpr_(const CallNode *op) override;
  void VisitExpr_(const FunctionNode *op) override;
  void VisitExpr_(const TupleNode *op) override;
  void VisitExpr_(const TupleGetItemNode *op) override;
  void VisitExpr_(const OpNode *op) override;
  void VisitExpr_(const GlobalVarNode *op) override;

protected:
  /// How often each node was reached (a node is expanded on its first visit).
  llvm::DenseMap<const ExprNode *, size_t> visitCounter_;
};

/// Rewrites a DAG with memoization: each node is mutated once, and a node
/// whose children did not change is returned as is.
class ExprMutator : public ExprFunctor<Expr(const Expr &)> {
public:
  Expr Mutate(const Expr &e) { return VisitExpr(e); }
  Expr VisitExpr(const Expr &e) override;
  Expr VisitExpr_(const VarNode *op) override;
  Expr VisitExpr_(const ConstantNode *op) override;
  Expr VisitExpr_(const CallNode *op) override;
  Expr VisitExpr_(const FunctionNode *op) override;
  Expr VisitExpr_(const TupleNode *op) override;
  Expr VisitExpr_(const TupleGetItemNode *op) override;
  Expr VisitExpr_(const OpNode *op) override;
  Expr VisitExpr_(const GlobalVarNode *op) override;

protected:
  llvm::DenseMap<const ExprNode *, Expr> memo_;
};

//===----------------------------------------------------------------------===//
// Mixed mode: iterative over dataflow, recursive elsewhere
//===----------------------------------------------------------------------===//

/// Expands the dataflow nodes (Call, Tuple, TupleGetItem) reachable from
/// `expr` with an explicit stack and calls `fvisitLeaf` on every node in post
/// order; `fcheckVisited` says whether a node is done already. Function bodies
/// are not entered (the leaf visit of a Function does that).
void ExpandDataflow(const Expr &expr, const std::function<bool(const Expr &)> &fcheckVisited,
                    const std::function<void(const Expr &)> &fvisitLeaf);

class MixedModeVisitor : public ExprVisitor {
public:
  using ExprVisitor::VisitExpr_;
  /// `visitLimit`: how many times a node may be visited (1: once).
  explicit MixedModeVisitor(int visitLimit = 1) : visitLimit_(visitLimit) {}

  void VisitExpr(const Expr &e) final;
  void VisitExpr_(const CallNode *op) override;
  void VisitExpr_(const TupleNode *op) override;
  void VisitExpr_(const TupleGetItemNode *op) override;

protected:
  /// Visits one node whose dataflow inputs have been visited already.
  virtual void VisitLeaf(const Expr &e);
  bool CheckVisited(const Expr &e);
  int visitLimit_;
};

/// A memoizing mutator that expands dataflow iteratively. Subclasses override
/// `Rewrite_(pre, post)`: `pre` is the original node, `post` the node rebuilt
/// on the already-rewritten inputs. Rewrite_ must not recurse into children.
class MixedModeMutator : public ExprMutator {
public:
  using ExprMutator::VisitExpr_;
  explicit MixedModeMutator(bool preVisit = true) : preVisit_(preVisit) {}

  Expr VisitExpr(const Expr &e) final;

  virtual Expr Rewrite_(const CallNode *pre, const Expr &post) { return post; }
  virtual Expr Rewrite_(const TupleNode *pre, const Expr &post) { return post; }
  virtual Expr Rewrite_(const TupleGetItemNode *pre, const Expr &post) { return post; }

  Expr VisitExpr_(const CallNode *op) final { return rewrite(op); }
  Expr VisitExpr_(const TupleNode *op) final { return rewrite(op); }
  Expr VisitExpr_(const TupleGetItemNode *op) final { return rewrite(op); }

protected:
  virtual void VisitLeaf(const Expr &e);
  bool CheckVisited(const Expr &e) { return memo_.count(e.get()) != 0; }
  /// Rewrites one node whose dataflow inputs are done; every node, leaf or
  /// not, passes through here once (PostOrderRewrite hooks in here).
  virtual Expr DispatchVisitExpr(const Expr &e) { return ExprMutator::VisitExpr(e); }

  template <typename T> Expr rewrite(const T *op) {
    Expr post = ExprMutator::VisitExpr_(op);
    return Rewrite_(op, post);
  }

  bool preVisit_;
};

//===----------------------------------------------------------------------===//
// ExprRewriter, PostOrderRewrite, PostOrderVisit
//===----------------------------------------------------------------------===//

/// A rewrite rule applied to every node in post order by PostOrderRewrite.
/// Dispatches on the kind of `pre` to `Rewrite_(const XNode *pre, post)`.
class ExprRewriter {
  using FType = NodeFunctor<Expr(const Expr &n, ExprRewriter *self, const Expr &post)>;

public:
  virtual ~ExprRewriter() = default;
  Expr Rewrite(const Expr &pre, const Expr &post);

#define KC_EXPR_NODE(Name)                                                                         \
  virtual Expr Rewrite_(const Name##Node *pre, const Expr &post) { return post; }
#include "kc/IR/Nodes.def"

private:
  static FType initVTable();
};

/// Rewrites `expr` bottom-up with `rewriter`, iteratively over dataflow.
Expr PostOrderRewrite(const Expr &expr, ExprRewriter *rewriter);

/// Calls `fvisit` on every node reachable from `e`, children before parents,
/// each node once (iterative over dataflow).
void PostOrderVisit(const Expr &e, const std::function<void(const Expr &)> &fvisit);

/// Like PostOrderVisit, but the bodies of the functions `e` calls are not
/// entered: one function's dataflow (its calls, tuples, parameters and
/// constants), operands before their users, each node once.
void DataflowVisit(const Expr &e, const std::function<void(const Expr &)> &fvisit);

/// Walks `e` as the tree its DAG unfolds into, iteratively: at each use of
/// a dataflow node for which `fexpand` says so, its operands (call
/// arguments, tuple fields, the tuple of a TupleGetItem) are walked first,
/// left to right; then `fvisit` sees the node. A node not expanded is
/// visited at that use as a leaf. So a postfix program is emitted: every
/// use visited, a shared value walked only where `fexpand` allows.
void PostfixVisit(const Expr &e, const std::function<bool(const Expr &)> &fexpand,
                  const std::function<void(const Expr &)> &fvisit);

} // namespace kc
