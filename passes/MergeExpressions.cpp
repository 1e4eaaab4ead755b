//===- MergeExpressions.cpp - Fuse chains of elementwise expressions ------===//
//
// When the result of one expression call feeds only another expression call,
// the two become one primitive function: the producer's body is substituted
// for the consumer's parameter. The interpreter then runs the whole chain in
// one blockwise pass instead of materializing the intermediate tensor.
//
//   %3 = @e1(%0, %1)                  %4 = @e2(%0, %1, %2)
//   %4 = @e2(%3, %2)          ⇒       fn @e2(%a, %b, %c) { mul(add(%a, %b), %c) }
//
// In two steps, so that the cost is linear in main's size: groups are
// formed first, from each group's last consumer back through its single-use
// producers, tracking only the group's program length and how often each
// operand occurs in it; then each group's function is built once. Merging
// pairwise instead would copy a growing body at every link of a chain.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/IR/Rpn.h"
#include "kc/Pass/Pass.h"
#include "kc/Pass/PassUtils.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

using namespace kc;

namespace {

/// A mutator whose memo is seeded with parameter replacements; mixed mode,
/// so that a deep expression costs no stack.
class Substitute final : public MixedModeMutator {
public:
  void bind(const ExprNode *from, Expr to) { memo_[from] = std::move(to); }
};

const FunctionNode *primitiveCallee(const ExprNode *e, const Module &m) {
  auto *c = llvm::dyn_cast_or_null<CallNode>(e);
  if (!c)
    return nullptr;
  const FunctionNode *f = m.callee(*c);
  // Lowered programs are opaque here: their parameters are positional tokens.
  return f && f->isPrimitive() && !isLoweredToRpn(*f) && f->params().size() == c->numArgs()
             ? f
             : nullptr;
}

/// What merging needs to know of an expression call: the length of its
/// program (rpnLength) and how often each operand occurs in it (as an
/// operand of its calls), operands in first-use order.
struct Shape {
  uint64_t length = 0;
  llvm::MapVector<const ExprNode *, uint64_t> occurrences;
};

/// The Shape of call c of primitive function f, in time linear in f's size.
Shape shapeOf(const CallNode &c, const FunctionNode &f, uint64_t cap) {
  Shape s;
  auto uses = operandUses(f.body());
  s.length = rpnLength(f.body(), uses, cap);
  for (size_t i = 0; i < f.params().size(); ++i) {
    const ExprNode *p = f.params()[i].get();
    // A body that is the parameter itself pushes it once.
    if (uint64_t n = uses.lookup(p) + (p == f.body().get()))
      s.occurrences[c.arg(i).get()] += n;
  }
  return s;
}

class MergeExpressions final : public Pass {
public:
  llvm::StringRef name() const override { return "merge-expressions"; }
  llvm::StringRef description() const override {
    return "Merge chains of elementwise expression functions into one function";
  }
  llvm::Error run(Module &m) override;

private:
  struct Group {
    Shape shape;
    bool merged = false; ///< takes at least one producer
  };

  /// Lengths are counted up to one past the bound: enough to refuse.
  uint64_t lengthCap() const { return std::max<uint64_t>(*maxLength, *maxLength + 1); }
  void formGroups(const Function &main);
  bool tryJoin(const CallNode &producer, Group &g);
  Expr inlineMember(const CallNode &c, Substitute &params);
  Expr buildGroup(const CallNode &root, llvm::StringMap<unsigned> &callsOf,
                  llvm::StringSet<> &names);

  Option<uint64_t> maxOperands{this, "max-operands", "Largest operand count of a merged function",
                               16};
  Option<uint64_t> maxLength{this, "max-length",
                             "Most instructions of a merged function's program (lower-rpn)", 256};
  Statistic numMerged{this, "num-merged", "Expression calls merged into their consumer"};

  const Module *m_ = nullptr;
  /// Merged functions, added to the module once every group is built.
  std::vector<Function> made_;
  llvm::DenseMap<const ExprNode *, unsigned> uses_;
  /// Each merged call's group, keyed by the group's root (last consumer).
  llvm::DenseMap<const ExprNode *, const CallNode *> rootOf_;
  llvm::DenseMap<const CallNode *, Group> groups_;
  /// The new operand list and parameters of the group being built.
  llvm::SmallVector<Expr, 8> operands_;
  llvm::SmallVector<Var, 8> params_;
  llvm::DenseMap<const ExprNode *, Var> paramFor_;
};

/// Walks main's calls consumers first, so that each producer is offered to
/// the group of its only consumer before its own producers are seen.
void MergeExpressions::formGroups(const Function &main) {
  std::vector<const ExprNode *> order;
  PostOrderVisit(main->body(), [&](const Expr &e) { order.push_back(e.get()); });
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    auto *c = llvm::dyn_cast<CallNode>(*it);
    const FunctionNode *f = primitiveCallee(c, *m_);
    if (!f)
      continue;
    const CallNode *root = rootOf_.lookup(c);
    if (!root) {
      root = c;
      rootOf_[c] = c;
      groups_[c].shape = shapeOf(*c, *f, lengthCap());
    }
    Group &g = groups_[root];
    for (const Expr &a : c->args())
      if (auto *p = llvm::dyn_cast<CallNode>(a.get()); p && primitiveCallee(p, *m_) &&
                                                       uses_.lookup(p) == 1 && !rootOf_.count(p) &&
                                                       tryJoin(*p, g))
        rootOf_[p] = root;
  }
}

/// Takes `producer` into g if the merged program stays within the bounds:
/// its k occurrences in g (k instructions pushing it) are replaced by its
/// program, computed once, and with k > 1 a save after it and k - 1 loads.
bool MergeExpressions::tryJoin(const CallNode &producer, Group &g) {
  uint64_t cap = lengthCap();
  Shape p = shapeOf(producer, *primitiveCallee(&producer, *m_), cap);
  uint64_t k = g.shape.occurrences.lookup(&producer);
  uint64_t length = std::min(cap, g.shape.length + p.length - (k > 1 ? 0 : 1));
  size_t operands = g.shape.occurrences.size() - 1;
  for (auto &[q, n] : p.occurrences)
    operands += !g.shape.occurrences.count(q);
  if (length > *maxLength || operands > *maxOperands)
    return false;
  g.shape.occurrences.erase(&producer);
  for (auto &[q, n] : p.occurrences)
    g.shape.occurrences[q] = std::min(cap, g.shape.occurrences[q] + n);
  g.shape.length = length;
  g.merged = true;
  ++numMerged;
  return true;
}

/// The body of member c with each parameter replaced by the inlined body of
/// its producer, if that producer is in the group, else by the group
/// parameter of the operand.
Expr MergeExpressions::inlineMember(const CallNode &c, Substitute &subst) {
  const FunctionNode *f = primitiveCallee(&c, *m_);
  for (size_t i = 0; i < c.numArgs(); ++i) {
    const ExprNode *a = c.arg(i).get();
    auto *p = llvm::dyn_cast<CallNode>(a);
    if (p && rootOf_.lookup(p) == rootOf_.lookup(&c) && p != &c) {
      Substitute inner;
      subst.bind(f->params()[i].get(), inlineMember(*p, inner));
      continue;
    }
    auto it = paramFor_.find(a);
    if (it == paramFor_.end()) {
      Var v = var(std::to_string(params_.size()), f->params()[i]->type());
      it = paramFor_.try_emplace(a, v).first;
      params_.push_back(v);
      operands_.push_back(c.arg(i));
    }
    subst.bind(f->params()[i].get(), it->second);
  }
  return subst.Mutate(f->body());
}

/// The merged call replacing group root `root`, its operands still those
/// of the original graph.
Expr MergeExpressions::buildGroup(const CallNode &root, llvm::StringMap<unsigned> &callsOf,
                                  llvm::StringSet<> &names) {
  operands_.clear();
  params_.clear();
  paramFor_.clear();
  Substitute subst;
  Expr body = inlineMember(root, subst);
  const FunctionNode *f = primitiveCallee(&root, *m_);
  // The merged function keeps the consumer's name only when no other call
  // still needs the original.
  std::string name = f->name();
  if (callsOf.lookup(name) > 1) {
    for (unsigned i = 0; names.count(name); ++i)
      name = f->name() + "_merged" + std::to_string(i);
    names.insert(name);
  }
  Function nf = make<const FunctionNode>(name, params_, body, f->retType(), true, f->attrs());
  made_.push_back(nf);
  Call n = call(nf, operands_, root.attrs(), {}, root.name());
  n->setLoc(root.loc());
  return n;
}

/// Replaces each group's root by its merged call, operands rewritten.
class ReplaceRoots final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  explicit ReplaceRoots(llvm::DenseMap<const ExprNode *, Expr> merged)
      : merged_(std::move(merged)) {}

  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    auto it = merged_.find(pre);
    if (it == merged_.end())
      return post;
    auto *c = llvm::cast<CallNode>(it->second.get());
    llvm::SmallVector<Expr, 8> args;
    for (const Expr &a : c->args())
      args.push_back(VisitExpr(a));
    Call n = call(c->callee(), args, c->attrs(), {}, c->name());
    n->setLoc(c->loc());
    return n;
  }

private:
  llvm::DenseMap<const ExprNode *, Expr> merged_;
};

llvm::Error MergeExpressions::run(Module &m) {
  Function main = m.main();
  if (!main)
    return llvm::Error::success();
  m_ = &m;
  made_.clear();
  uses_ = countUses(main);
  rootOf_.clear();
  groups_.clear();
  formGroups(main);

  // Calls of each function in every graph (main and fused groups).
  llvm::StringMap<unsigned> callsOf;
  for (const Function &g : m.functions())
    if (!g->isPrimitive())
      PostOrderVisit(g->body(), [&](const Expr &e) {
        if (auto *c = llvm::dyn_cast<CallNode>(e.get()))
          if (const GlobalVarNode *callee = c->global())
            ++callsOf[callee->name()];
      });
  llvm::StringSet<> names;
  for (const Function &f : m.functions())
    names.insert(f->name());
  // Roots in dataflow order, so that fresh names follow the model's order.
  llvm::DenseMap<const ExprNode *, Expr> merged;
  PostOrderVisit(main->body(), [&](const Expr &e) {
    auto *c = llvm::dyn_cast<CallNode>(e.get());
    auto it = c ? groups_.find(c) : groups_.end();
    if (it != groups_.end() && it->second.merged)
      merged[c] = buildGroup(*c, callsOf, names);
  });
  if (merged.empty())
    return llvm::Error::success();
  // A merged function that keeps its name replaces the original, whose
  // only call was the group's root.
  for (Function &f : made_)
    m.add(std::move(f));
  ReplaceRoots replace(std::move(merged));
  rewriteMain(m, [&](const Expr &body) { return replace.Mutate(body); });
  m.removeUnreferencedFunctions();
  return llvm::Error::success();
}

} // namespace

KC_REGISTER_PASS(MergeExpressions);
