//===- Cse.cpp - Common subexpression elimination -------------------------===//
//
// Hash-consing in post order: once a node's operands are unique, two calls are
// the same computation exactly when they have the same callee, the same
// operand nodes, argument keys and attributes (kc/IR/StructuralHash.h). The
// first one seen is kept. Literals are unified by value and type. Runs on
// main and inside every expression function. Calls of impure ops are never
// merged.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/IR/StructuralHash.h"
#include "kc/Pass/Pass.h"
#include "kc/Pass/PassUtils.h"

#include <map>
#include <unordered_map>

using namespace kc;

namespace {

/// The node of `bucket` that `same` finds equal to `e`, or `e`, added.
template <class T, class Same>
Expr intern(std::vector<Expr> &bucket, const Expr &e, uint64_t &eliminated, Same same) {
  for (const Expr &kept : bucket)
    if (same(*llvm::cast<T>(kept.get()), *llvm::cast<T>(e.get()))) {
      ++eliminated;
      return kept;
    }
  bucket.push_back(e);
  return e;
}

class Cse final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  uint64_t eliminated = 0;

  Expr VisitExpr_(const ConstantNode *op) override {
    if (!op->isScalar())
      return Expr(op);
    return intern<ConstantNode>(literals_[literalHash(*op)], Expr(op), eliminated, sameLiteral);
  }

  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    auto *c = llvm::cast<CallNode>(post.get());
    const OpDef *op = c->opDef();
    bool pure = op ? op->is(OpFlags::Pure) && !op->isOpaque() : c->global() != nullptr;
    if (!pure)
      return post;
    return intern<CallNode>(calls_[callHash(*c)], post, eliminated, sameCall);
  }

  Expr Rewrite_(const TupleGetItemNode *pre, const Expr &post) override {
    auto *g = llvm::cast<TupleGetItemNode>(post.get());
    auto [it, inserted] = items_.try_emplace({g->tuple().get(), g->index()}, post);
    if (!inserted)
      ++eliminated;
    return it->second;
  }

private:
  std::unordered_map<size_t, std::vector<Expr>> calls_, literals_;
  std::map<std::pair<const ExprNode *, unsigned>, Expr> items_;
};

class CsePass final : public ExpressionPass {
public:
  llvm::StringRef name() const override { return "cse"; }
  llvm::StringRef description() const override {
    return "Merge identical computations (structural hash-consing) in main and expressions";
  }
  llvm::Error run(Module &m) override {
    if (auto e = ExpressionPass::run(m))
      return e;
    Cse c;
    rewriteMain(m, [&](const Expr &body) { return c.Mutate(body); });
    numEliminated += c.eliminated;
    return llvm::Error::success();
  }

protected:
  llvm::Expected<Expr> runOnFunction(const FunctionNode &f) override {
    Cse c;
    Expr body = c.Mutate(f.body());
    numEliminated += c.eliminated;
    return body;
  }

private:
  Statistic numEliminated{this, "num-eliminated", "Duplicate nodes removed"};
};

} // namespace

KC_REGISTER_PASS(CsePass);
