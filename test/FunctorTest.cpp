//===- FunctorTest.cpp - Tests of the IR functors (kc/IR/Functor.h) -------===//
//
// What the functors promise: every node of a DAG is visited once, an identity
// rewrite returns the very same root, sharing survives a rewrite, deep
// dataflow chains are handled without recursion, and dispatch reaches the
// VisitExpr_/Rewrite_ overload of the node's kind.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace kc;

namespace {

Type f32(llvm::ArrayRef<int64_t> dims) { return tensorType(DType::F32, dims); }

/// x -> a = relu(x); b = add(a, a); c = add(b, a). `a` has three uses.
struct Diamond {
  Var x = var("x", f32({2, 3}));
  Call a = call("nn.ReLU", {x});
  Call b = call("add", {a, a});
  Call c = call("add", {b, a});
};

/// Counts, per node, how often a visitor's VisitExpr_ reached it. Works for
/// any ExprVisitor-derived base (the overrides call the base's behaviour).
template <typename Base> class CountingVisitor : public Base {
public:
  using Base::Base;
  using Base::VisitExpr_;
  std::map<const ExprNode *, int> visits;

  void VisitExpr_(const VarNode *op) override {
    hit(op);
    Base::VisitExpr_(op);
  }
  void VisitExpr_(const ConstantNode *op) override {
    hit(op);
    Base::VisitExpr_(op);
  }
  void VisitExpr_(const CallNode *op) override {
    hit(op);
    Base::VisitExpr_(op);
  }
  void VisitExpr_(const FunctionNode *op) override {
    hit(op);
    Base::VisitExpr_(op);
  }
  void VisitExpr_(const TupleNode *op) override {
    hit(op);
    Base::VisitExpr_(op);
  }
  void VisitExpr_(const TupleGetItemNode *op) override {
    hit(op);
    Base::VisitExpr_(op);
  }
  void VisitExpr_(const OpNode *op) override {
    hit(op);
    Base::VisitExpr_(op);
  }

private:
  void hit(const ExprNode *n) { ++visits[n]; }
};

/// Replaces every nn.ReLU by nn.ReLU6, with the recursive ExprMutator.
class ReluToRelu6Recursive final : public ExprMutator {
public:
  using ExprMutator::VisitExpr_;
  int rewrites = 0;
  Expr VisitExpr_(const CallNode *op) override {
    Expr post = ExprMutator::VisitExpr_(op);
    auto *c = llvm::cast<CallNode>(post.get());
    if (!isCallTo(c, "nn.ReLU"))
      return post;
    ++rewrites;
    return call("nn.ReLU6", c->args(), c->attrs(), c->keys(), c->name());
  }
};

/// The same rule as a MixedModeMutator (iterative over dataflow).
class ReluToRelu6Mixed final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  int rewrites = 0;
  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    auto *c = llvm::cast<CallNode>(post.get());
    if (!isCallTo(c, "nn.ReLU"))
      return post;
    ++rewrites;
    return call("nn.ReLU6", c->args(), c->attrs(), c->keys(), c->name());
  }
};

/// The same rule as an ExprRewriter for PostOrderRewrite.
class ReluToRelu6Rewriter final : public ExprRewriter {
public:
  int rewrites = 0;
  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    auto *c = llvm::cast<CallNode>(post.get());
    if (!isCallTo(c, "nn.ReLU"))
      return post;
    ++rewrites;
    return call("nn.ReLU6", c->args(), c->attrs(), c->keys(), c->name());
  }
};

class IdentityMutator final : public ExprMutator {};
class IdentityMixedMutator final : public MixedModeMutator {};
class IdentityRewriter final : public ExprRewriter {};

/// Checks that `root` is the diamond rebuilt with nn.ReLU6 in place of
/// nn.ReLU, and that its three uses of the new relu6 node are one object.
void checkRewrittenDiamond(const Diamond &d, const Expr &root) {
  auto *c = llvm::dyn_cast<CallNode>(root.get());
  REQUIRE(c);
  CHECK(root.get() != d.c.get()); // something below changed, so c is new
  CHECK(isCallTo(c, "add"));
  auto *b = llvm::dyn_cast<CallNode>(c->arg(0).get());
  REQUIRE(b);
  CHECK(b != d.b.get());
  const ExprNode *relu6 = c->arg(1).get();
  CHECK(isCallTo(relu6, "nn.ReLU6"));
  // Sharing survives: all three uses are the very same node.
  CHECK(b->arg(0).get() == relu6);
  CHECK(b->arg(1).get() == relu6);
  // And its input is still the original Var (unchanged leaves are shared).
  CHECK(llvm::cast<CallNode>(relu6)->arg(0).get() == d.x.get());
}

/// A chain x -> neg -> neg -> ... of `n` calls. The nodes are kept in `keep`
/// (x first) so that the chain can be torn down from the root without one
/// recursive release per link (see releaseChain): node destruction recurses
/// through ~CallNode, and a ~300,000-link chain overflows an 8 MB stack.
Expr buildNegChain(size_t n, std::vector<Expr> &keep) {
  keep.clear();
  keep.reserve(n + 1);
  Expr prev = var("x", f32({4}));
  keep.push_back(prev);
  for (size_t i = 0; i < n; ++i) {
    prev = call("neg", {prev});
    keep.push_back(prev);
  }
  return prev;
}

/// Releases a chain held in `keep` root first: each node's child is still
/// held by `keep` when the node dies, so no release recurses.
void releaseChain(std::vector<Expr> &keep) {
  while (!keep.empty())
    keep.pop_back();
}

constexpr size_t kChain = 100000;

} // namespace

//===----------------------------------------------------------------------===//
// (a) Visit once on a DAG with shared nodes
//===----------------------------------------------------------------------===//

TEST_CASE("ExprVisitor visits every node of a diamond once") {
  Diamond d;
  CountingVisitor<ExprVisitor> v;
  v.VisitExpr(d.c);
  // x, a, b, c, and the two Op nodes nn.ReLU and add.
  CHECK(v.visits.size() == 6);
  for (auto &entry : v.visits) {
    // INFO captures by reference; a structured binding cannot be captured
    // before C++20.
    INFO("node kind " << nodeKindName(entry.first->kind()).str());
    CHECK(entry.second == 1);
  }
  CHECK(v.visits.count(d.a.get()) == 1);
  CHECK(v.visits.count(d.x.get()) == 1);
}

TEST_CASE("MixedModeVisitor visits every node of a diamond once") {
  Diamond d;
  CountingVisitor<MixedModeVisitor> v;
  v.VisitExpr(d.c);
  CHECK(v.visits.size() == 6);
  for (auto &entry : v.visits) {
    // INFO captures by reference; a structured binding cannot be captured
    // before C++20.
    INFO("node kind " << nodeKindName(entry.first->kind()).str());
    CHECK(entry.second == 1);
  }
  // Visiting the same root again does nothing: everything is memoized.
  v.VisitExpr(d.c);
  for (auto &[node, n] : v.visits)
    CHECK(n == 1);
}

TEST_CASE("MixedModeVisitor visits in post order, children first") {
  Diamond d;
  std::vector<const ExprNode *> order;
  PostOrderVisit(d.c, [&](const Expr &e) { order.push_back(e.get()); });
  auto pos = [&](const ExprNode *n) {
    return std::find(order.begin(), order.end(), n) - order.begin();
  };
  CHECK(order.size() == 6);
  CHECK(pos(d.x.get()) < pos(d.a.get()));
  CHECK(pos(d.a.get()) < pos(d.b.get()));
  CHECK(pos(d.b.get()) < pos(d.c.get()));
  CHECK(order.back() == d.c.get());
}

TEST_CASE("ExprVisitor enters a called function's body once however often it is called") {
  // f(p) = neg(p); main: g = f(x); h = f(g); both calls share the Function.
  Var p = var("p", f32({2}));
  Call body = call("neg", {p});
  Function f = make<const FunctionNode>("f", llvm::ArrayRef<Var>{p}, body, f32({2}), true);
  Var x = var("x", f32({2}));
  Call g = call(Expr(f), {x});
  Call h = call(Expr(f), {g});
  for (int mixed = 0; mixed < 2; ++mixed) {
    CAPTURE(mixed);
    std::map<const ExprNode *, int> visits;
    if (mixed) {
      CountingVisitor<MixedModeVisitor> v;
      v.VisitExpr(h);
      visits = v.visits;
    } else {
      CountingVisitor<ExprVisitor> v;
      v.VisitExpr(h);
      visits = v.visits;
    }
    CHECK(visits[f.get()] == 1);
    CHECK(visits[body.get()] == 1);
    CHECK(visits[p.get()] == 1);
    for (auto &[node, n] : visits)
      CHECK(n == 1);
  }
}

//===----------------------------------------------------------------------===//
// (b) Identity rewrites return the identical pointer
//===----------------------------------------------------------------------===//

TEST_CASE("identity mutators return the identical root") {
  Diamond d;
  Expr tup = tuple({d.c, tupleGetItem(tuple({d.a, d.b}), 1)});
  for (const Expr &root : {Expr(d.c), tup}) {
    IdentityMutator m1;
    CHECK(m1.Mutate(root).get() == root.get());
    IdentityMixedMutator m2;
    CHECK(m2.Mutate(root).get() == root.get());
    IdentityRewriter r;
    CHECK(PostOrderRewrite(root, &r).get() == root.get());
  }
}

TEST_CASE("identity mutators return the identical function") {
  Var p = var("p", f32({2}));
  Function f =
      make<const FunctionNode>("f", llvm::ArrayRef<Var>{p}, call("neg", {p}), f32({2}), true);
  Var x = var("x", f32({2}));
  Function mainFn = make<const FunctionNode>("main", llvm::ArrayRef<Var>{x},
                                             call(Expr(f), {x}), f32({2}), false);
  IdentityMutator m1;
  CHECK(m1.Mutate(mainFn).get() == mainFn.get());
  IdentityMixedMutator m2;
  CHECK(m2.Mutate(mainFn).get() == mainFn.get());
}

//===----------------------------------------------------------------------===//
// (c) Sharing survives a rewrite
//===----------------------------------------------------------------------===//

TEST_CASE("ExprMutator keeps a rewritten shared node shared") {
  Diamond d;
  ReluToRelu6Recursive m;
  Expr out = m.Mutate(d.c);
  CHECK(m.rewrites == 1); // memoized: the shared relu is rewritten once
  checkRewrittenDiamond(d, out);
}

TEST_CASE("MixedModeMutator keeps a rewritten shared node shared") {
  Diamond d;
  ReluToRelu6Mixed m;
  Expr out = m.Mutate(d.c);
  CHECK(m.rewrites == 1);
  checkRewrittenDiamond(d, out);
}

TEST_CASE("PostOrderRewrite keeps a rewritten shared node shared") {
  Diamond d;
  ReluToRelu6Rewriter r;
  Expr out = PostOrderRewrite(d.c, &r);
  CHECK(r.rewrites == 1);
  checkRewrittenDiamond(d, out);
}

TEST_CASE("a rewrite below a tuple rebuilds the tuple and its readers, sharing the rest") {
  Diamond d;
  Var y = var("y", f32({2, 3}));
  Tuple t = tuple({d.a, y});
  TupleGetItem g0 = tupleGetItem(t, 0), g1 = tupleGetItem(t, 1);
  Tuple root = tuple({g0, g1, y});
  ReluToRelu6Mixed m;
  Expr out = m.Mutate(root);
  auto *r = llvm::dyn_cast<TupleNode>(out.get());
  REQUIRE(r);
  CHECK(r != root.get());
  auto *n0 = llvm::cast<TupleGetItemNode>(r->fields()[0].get());
  auto *n1 = llvm::cast<TupleGetItemNode>(r->fields()[1].get());
  CHECK(n0->tuple().get() == n1->tuple().get()); // the new tuple is shared
  CHECK(n0->tuple().get() != t.get());
  CHECK(n1->index() == 1);
  CHECK(r->fields()[2].get() == y.get());
  CHECK(isCallTo(llvm::cast<TupleNode>(n0->tuple().get())->fields()[0].get(), "nn.ReLU6"));
}

//===----------------------------------------------------------------------===//
// PostfixVisit: every use, operands first, shared values where allowed
//===----------------------------------------------------------------------===//

TEST_CASE("PostfixVisit walks the tree a DAG unfolds into, or each value once") {
  Diamond d; // c = add(b, a), b = add(a, a), a = relu(x)
  std::vector<const ExprNode *> order;
  auto record = [&](const Expr &e) { order.push_back(e.get()); };
  const ExprNode *x = d.x.get(), *a = d.a.get(), *b = d.b.get(), *c = d.c.get();
  SUBCASE("every use expanded: the tree, in postfix order") {
    PostfixVisit(d.c, [](const Expr &) { return true; }, record);
    CHECK(order == std::vector<const ExprNode *>{x, a, x, a, b, x, a, c});
  }
  SUBCASE("a call expanded at its first use only: later uses are leaves") {
    std::set<const ExprNode *> done;
    PostfixVisit(
        d.c, [&](const Expr &e) { return !done.count(e.get()); },
        [&](const Expr &e) {
          done.insert(e.get());
          record(e);
        });
    CHECK(order == std::vector<const ExprNode *>{x, a, a, b, a, c});
  }
  SUBCASE("nothing expanded: the root alone") {
    PostfixVisit(d.c, [](const Expr &) { return false; }, record);
    CHECK(order == std::vector<const ExprNode *>{c});
  }
}

//===----------------------------------------------------------------------===//
// (d) A 100,000-node chain: no recursion, linear, each node once
//===----------------------------------------------------------------------===//

TEST_CASE("a 100,000-call chain is visited iteratively, each node once") {
  std::vector<Expr> keep;
  Expr root = buildNegChain(kChain, keep);
  const ExprNode *negOp = llvm::cast<CallNode>(root.get())->callee().get();

  SUBCASE("PostfixVisit") {
    size_t visited = 0;
    PostfixVisit(root, [](const Expr &) { return true; }, [&](const Expr &) { ++visited; });
    CHECK(visited == kChain + 1); // x and every call; Op callees are not operands
  }

  SUBCASE("MixedModeVisitor") {
    CountingVisitor<MixedModeVisitor> v;
    v.VisitExpr(root);
    size_t varsAndCalls = 0, notOnce = 0;
    for (auto &[node, n] : v.visits) {
      notOnce += n != 1;
      if (node != negOp)
        ++varsAndCalls;
    }
    CHECK(notOnce == 0);
    // x and the 100,000 calls, plus the one shared `neg` Op node.
    CHECK(varsAndCalls == kChain + 1);
    CHECK(v.visits.size() == kChain + 2);
  }
  SUBCASE("PostOrderVisit") {
    size_t varsAndCalls = 0, ops = 0;
    std::map<const ExprNode *, int> seen; // how often fvisit saw each node
    const ExprNode *last = nullptr;
    PostOrderVisit(root, [&](const Expr &e) {
      ++seen[e.get()];
      last = e.get();
      if (llvm::isa<OpNode>(e.get()))
        ++ops;
      else
        ++varsAndCalls;
    });
    CHECK(varsAndCalls == kChain + 1);
    CHECK(ops == 1);
    CHECK(seen.size() == kChain + 2); // so no node was seen twice
    CHECK(last == root.get());        // post order: the root comes last
  }
  root.reset();
  releaseChain(keep);
}

namespace {
/// Counts the work of a MixedModeMutator: one Rewrite_ per call, one
/// VisitExpr_ per leaf; rewrites every `neg` into `abs`.
class NegToAbs final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  using MixedModeMutator::VisitExpr_;
  size_t calls = 0, vars = 0;
  Expr VisitExpr_(const VarNode *op) override {
    ++vars;
    return MixedModeMutator::VisitExpr_(op);
  }
  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    ++calls;
    auto *c = llvm::cast<CallNode>(post.get());
    return call("abs", c->args(), c->attrs(), c->keys(), c->name());
  }
};

class NegToAbsRewriter final : public ExprRewriter {
public:
  size_t calls = 0;
  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    ++calls;
    auto *c = llvm::cast<CallNode>(post.get());
    return call("abs", c->args(), c->attrs(), c->keys(), c->name());
  }
};

/// Walks a rewritten chain down from `root`: every link must be `abs`, and
/// the chain must end in the original x. Returns the number of links.
size_t checkAbsChain(const Expr &root, const ExprNode *x) {
  size_t links = 0;
  const ExprNode *n = root.get();
  while (auto *c = llvm::dyn_cast<CallNode>(n)) {
    if (!isCallTo(c, "abs"))
      return 0;
    ++links;
    n = c->arg(0).get();
  }
  return n == x ? links : 0;
}

/// Collects a chain's nodes root-first into `keep` for releaseChain.
void holdChain(const Expr &root, std::vector<Expr> &keep) {
  std::vector<Expr> rev;
  Expr n = root;
  while (auto *c = llvm::dyn_cast_or_null<CallNode>(n.get())) {
    rev.push_back(n);
    n = c->arg(0);
  }
  keep.assign(rev.rbegin(), rev.rend());
}
} // namespace

TEST_CASE("a 100,000-call chain is rewritten iteratively, each node once") {
  std::vector<Expr> keep;
  Expr root = buildNegChain(kChain, keep);
  const ExprNode *x = keep.front().get();

  SUBCASE("identity MixedModeMutator returns the same root") {
    IdentityMixedMutator m;
    CHECK(m.Mutate(root).get() == root.get());
  }
  SUBCASE("identity PostOrderRewrite returns the same root") {
    IdentityRewriter r;
    CHECK(PostOrderRewrite(root, &r).get() == root.get());
  }
  SUBCASE("MixedModeMutator") {
    std::vector<Expr> keepOut;
    {
      NegToAbs m;
      Expr out = m.Mutate(root);
      CHECK(m.calls + m.vars == kChain + 1);
      CHECK(m.vars == 1);
      CHECK(checkAbsChain(out, x) == kChain);
      holdChain(out, keepOut);
    } // the mutator's memo dies here, the chain is still held by keepOut
    releaseChain(keepOut);
  }
  SUBCASE("PostOrderRewrite") {
    std::vector<Expr> keepOut;
    NegToAbsRewriter r;
    Expr out = PostOrderRewrite(root, &r);
    CHECK(r.calls == kChain);
    CHECK(checkAbsChain(out, x) == kChain);
    holdChain(out, keepOut);
    out.reset();
    releaseChain(keepOut);
  }
  root.reset();
  releaseChain(keep);
}

//===----------------------------------------------------------------------===//
// (e) NodeFunctor
//===----------------------------------------------------------------------===//

namespace {
using KindNamer = NodeFunctor<std::string(const NodeRef &, int)>;
} // namespace

TEST_CASE("NodeFunctor dispatches on the kinds it has entries for") {
  KindNamer f;
  NodeRef v = NodeRef(var("x", f32({1})).get());
  NodeRef c = NodeRef(call("neg", {var("y")}).get());
  NodeRef t = NodeRef(f32({1, 2}).get());

  CHECK_FALSE(f.can_dispatch(v));
  CHECK_FALSE(f.can_dispatch(c));
  CHECK_FALSE(f.can_dispatch(t));

  f.set_dispatch<VarNode>([](const NodeRef &n, int k) {
     return "var " + llvm::cast<VarNode>(n.get())->name() + std::to_string(k);
   })
      .set_dispatch<TensorTypeNode>([](const NodeRef &n, int k) {
        return "tensor rank " + std::to_string(llvm::cast<TensorTypeNode>(n.get())->rank() + k);
      });
  CHECK(f.can_dispatch(v));
  CHECK(f.can_dispatch(t));
  CHECK_FALSE(f.can_dispatch(c)); // Call has no entry
  CHECK(f(v, 7) == "var x7");
  CHECK(f(t, 0) == "tensor rank 2");

  f.set_dispatch<CallNode>([](const NodeRef &n, int) {
    return llvm::cast<CallNode>(n.get())->calleeName().str();
  });
  CHECK(f.can_dispatch(c));
  CHECK(f(c, 0) == "neg");

  // An entry replaced by a later set_dispatch wins; clear_dispatch removes it.
  f.set_dispatch<VarNode>([](const NodeRef &, int) { return std::string("other"); });
  CHECK(f(v, 0) == "other");
  f.clear_dispatch<VarNode>();
  CHECK_FALSE(f.can_dispatch(v));
  CHECK(f.can_dispatch(t));
}

TEST_CASE("NodeFunctor works on raw node pointers") {
  NodeFunctor<int(const Node *)> f;
  f.set_dispatch<TupleTypeNode>(
      [](const Node *n) { return int(llvm::cast<TupleTypeNode>(n)->size()); });
  Type tt = tupleType({f32({1}), f32({2}), f32({3})});
  Expr op = Expr(OpRegistry::global().lookup("neg")->node().get());
  CHECK(f.can_dispatch(tt.get()));
  CHECK_FALSE(f.can_dispatch(op.get()));
  CHECK(f(tt.get()) == 3);
}

//===----------------------------------------------------------------------===//
// (f) ExprFunctor dispatch
//===----------------------------------------------------------------------===//

namespace {
/// Names the VisitExpr_ overload each node reaches, and forwards an argument.
class KindOf final : public ExprFunctor<std::string(const Expr &, const std::string &)> {
public:
  std::string VisitExpr_(const VarNode *op, const std::string &s) override {
    return "Var:" + op->name() + s;
  }
  std::string VisitExpr_(const ConstantNode *, const std::string &s) override {
    return "Constant" + s;
  }
  std::string VisitExpr_(const CallNode *op, const std::string &s) override {
    return "Call:" + op->calleeName().str() + s;
  }
  std::string VisitExpr_(const FunctionNode *op, const std::string &s) override {
    return "Function:" + op->name() + s;
  }
  std::string VisitExpr_(const TupleNode *op, const std::string &s) override {
    return "Tuple" + std::to_string(op->fields().size()) + s;
  }
  std::string VisitExpr_(const TupleGetItemNode *op, const std::string &s) override {
    return "TupleGetItem" + std::to_string(op->index()) + s;
  }
  std::string VisitExpr_(const OpNode *op, const std::string &s) override {
    return "Op:" + op->name().str() + s;
  }
};

/// Handles Call only; everything else reaches VisitExprDefault_.
class OnlyCalls final : public ExprFunctor<int(const Expr &)> {
public:
  int VisitExpr_(const CallNode *op) override { return int(op->numArgs()); }
  int VisitExprDefault_(const ExprNode *) override { return -1; }
};

/// Handles nothing: the default result is a default-constructed R.
class Nothing final : public ExprFunctor<int(const Expr &)> {};
} // namespace

TEST_CASE("ExprFunctor dispatches each node kind to its VisitExpr_") {
  Var x = var("x", f32({2}));
  Constant k = floatConstant(2.5);
  Call c = call("mul", {x, k});
  Function fn = make<const FunctionNode>("fn", llvm::ArrayRef<Var>{x}, c, f32({2}), true);
  Tuple t = tuple({x, c, k});
  TupleGetItem g = tupleGetItem(t, 2);
  Expr op = Expr(OpRegistry::global().lookup("mul")->node().get());

  KindOf f;
  CHECK(f(x, "!") == "Var:x!");
  CHECK(f(k, "!") == "Constant!");
  CHECK(f(c, "!") == "Call:mul!");
  CHECK(f(fn, "!") == "Function:fn!");
  CHECK(f(t, "!") == "Tuple3!");
  CHECK(f(g, "!") == "TupleGetItem2!");
  CHECK(f(op, "!") == "Op:mul!");
  // A tensor constant is the same kind as a literal.
  CHECK(f(tensorConstant("w", f32({3}), nullptr), "") == "Constant");

  OnlyCalls oc;
  CHECK(oc(c) == 2);
  CHECK(oc(x) == -1);
  CHECK(oc(fn) == -1);
  CHECK(oc(op) == -1);

  Nothing nothing;
  CHECK(nothing(c) == 0);
  CHECK(nothing(t) == 0);
}

//===----------------------------------------------------------------------===//
// PostOrderRewrite on leaves
//===----------------------------------------------------------------------===//

namespace {
/// Renames Var `x` to a new Var `y` (a leaf rule).
class RenameVar final : public ExprRewriter {
public:
  explicit RenameVar(Var to) : to_(std::move(to)) {}
  int calls = 0;
  Expr Rewrite_(const VarNode *pre, const Expr &post) override {
    ++calls;
    return pre->name() == "x" ? Expr(to_) : post;
  }

private:
  Var to_;
};
} // namespace

// Functor.h says of ExprRewriter: "A rewrite rule applied to every node in
// post order by PostOrderRewrite", dispatching on the kind of `pre` to
// Rewrite_(const XNode *, post) for every kind in Nodes.def (as TVM's
// PostOrderRewrite does). This checks the leaf kinds (Var) get their rule too.
TEST_CASE("PostOrderRewrite applies a Var rule to the leaves") {
  Diamond d;
  Var y = var("y", f32({2, 3}));
  RenameVar r(y);
  Expr out = PostOrderRewrite(d.c, &r);
  CHECK(r.calls == 1);
  auto *c = llvm::cast<CallNode>(out.get());
  auto *a = llvm::cast<CallNode>(c->arg(1).get());
  CHECK(a->arg(0).get() == y.get());
}

namespace {
/// Records every node its rule sees, and replaces the constant 2 by 3.
class RecordAll final : public ExprRewriter {
public:
  std::vector<const ExprNode *> order;
#define KC_EXPR_NODE(Name)                                                                         \
  Expr Rewrite_(const Name##Node *pre, const Expr &post) override {                                \
    order.push_back(pre);                                                                          \
    return post;                                                                                   \
  }
#include "kc/IR/Nodes.def"
};

class TwoToThree final : public ExprRewriter {
public:
  Expr Rewrite_(const ConstantNode *pre, const Expr &post) override {
    if (pre->isScalar() && pre->scalar().isFloat() && pre->scalar().getFloat() == 2.0)
      return floatConstant(3.0);
    return post;
  }
};
} // namespace

TEST_CASE("PostOrderRewrite calls the rule of every kind once, inputs first") {
  Var p = var("p", f32({2}));
  Function fn =
      make<const FunctionNode>("fn", llvm::ArrayRef<Var>{p}, call("neg", {p}), f32({2}), true);
  Var x = var("x", f32({2}));
  Constant k = floatConstant(2.0);
  // A Function callee (the functor walks any graph) and a GlobalVar one
  // (how a module's calls name its functions): every expression kind.
  Call applied = call(Expr(fn), {x});
  Call global = call(fn, {applied});
  Call m = call("mul", {global, k});
  TupleGetItem root = tupleGetItem(tuple({m, x}), 0);

  RecordAll r;
  CHECK(PostOrderRewrite(root, &r).get() == root.get());
  std::map<const ExprNode *, size_t> at; // position of each node in the order
  for (size_t i = 0; i < r.order.size(); ++i)
    CHECK(at.emplace(r.order[i], i).second); // once each
  std::map<NodeKind, int> kinds;
  for (const ExprNode *n : r.order)
    ++kinds[n->kind()];
  CHECK(kinds.size() == kNumNodeKinds - 2); // every expression kind
  // Every node comes after the nodes it reads.
  for (const ExprNode *n : r.order) {
    std::vector<Expr> inputs;
    if (auto *c = llvm::dyn_cast<CallNode>(n)) {
      inputs.push_back(c->callee());
      inputs.insert(inputs.end(), c->args().begin(), c->args().end());
    } else if (auto *f = llvm::dyn_cast<FunctionNode>(n)) {
      inputs.assign(f->params().begin(), f->params().end());
      inputs.push_back(f->body());
    } else if (auto *t = llvm::dyn_cast<TupleNode>(n)) {
      inputs.assign(t->fields().begin(), t->fields().end());
    } else if (auto *g = llvm::dyn_cast<TupleGetItemNode>(n)) {
      inputs.push_back(g->tuple());
    }
    for (const Expr &in : inputs) {
      REQUIRE(at.count(in.get()));
      CHECK(at[in.get()] < at[n]);
    }
  }

  TwoToThree t;
  Expr out = PostOrderRewrite(root, &t);
  auto *g = llvm::cast<TupleGetItemNode>(out.get());
  auto *mul = llvm::cast<CallNode>(llvm::cast<TupleNode>(g->tuple().get())->fields()[0].get());
  CHECK(mul->arg(0).get() == global.get()); // untouched input stays shared
  auto *three = llvm::cast<ConstantNode>(mul->arg(1).get());
  REQUIRE(three->isScalar());
  CHECK(three->scalar().getFloat() == 3.0);
}
