//===- SimplifyExpr.cpp - Algebraic simplification of expressions ---------===//
//
// Rewrites inside primitive expression functions, each exact under IEEE-754
// (no rewrite may change a result bit, NaN and signed zero included):
//
//   mul(x, 1) → x        div(x, 1) → x        sub(x, 0) → x
//   neg(neg(x)) → x      pow(x, 1) → x        pow(x, 2) → square(x)
//   sub(x, c) → add(x, -c)            div(x, 2^k) → mul(x, 2^-k)
//   commutative ops put literals last: mul(2.0, x) → mul(x, 2.0)
//
// add(x, 0) and mul(x, 0) are NOT simplified: -0.0 + 0.0 is +0.0, and
// NaN * 0 is NaN.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/Pass/Pass.h"

#include <cmath>

using namespace kc;

namespace {

bool isLiteral(const Expr &e, double *value = nullptr) {
  auto *k = llvm::dyn_cast<ConstantNode>(e.get());
  if (!k || !k->isScalar() || !k->scalar().isNumber())
    return false;
  if (value)
    *value = k->scalar().getNumber();
  return true;
}

bool isLiteralEqual(const Expr &e, double v) {
  double x;
  return isLiteral(e, &x) && x == v && !std::signbit(x);
}

class Simplifier final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  uint64_t rewrites = 0;

  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    auto *c = llvm::cast<CallNode>(post.get());
    const OpDef *op = c->opDef();
    if (!op || !op->is(OpFlags::ExprOp))
      return post;
    llvm::StringRef name = op->name();
    auto args = c->args();
    auto done = [&](Expr e) {
      ++rewrites;
      return e;
    };
    // Only an operand of the same type as the result may replace the call:
    // mul(%int_tensor, 1.0) is a float tensor, not %int_tensor.
    auto sameType = [&](const Expr &x) { return typeEqual(x->type(), pre->type()) && x->type(); };
    if (args.size() == 2) {
      const Expr &x = args[0], &y = args[1];
      if ((name == "mul" && isLiteralEqual(y, 1.0) && sameType(x)) ||
          (name == "div" && isLiteralEqual(y, 1.0) && sameType(x)) ||
          (name == "sub" && isLiteralEqual(y, 0.0) && sameType(x)) ||
          (name == "pow" && isLiteralEqual(y, 1.0) && sameType(x)))
        return done(x);
      if (name == "mul" && isLiteralEqual(x, 1.0) && sameType(y))
        return done(y);
      if (name == "pow" && isLiteralEqual(y, 2.0) && sameType(x))
        return done(rebuild("square", {x}, c));
      double v;
      auto *yk = llvm::dyn_cast<ConstantNode>(y.get());
      if (name == "sub" && isLiteral(y, &v) && yk->scalar().isFloat())
        return done(rebuild("add", {x, scalarConstant(AttrValue::real(-v), y->type())}, c));
      if (name == "div" && isLiteral(y, &v) && yk->scalar().isFloat() && v != 0 &&
          std::isfinite(v)) {
        int exp;
        // Exact only if the reciprocal is representable in the literal's type.
        auto *lt = llvm::dyn_cast_or_null<TensorTypeNode>(y->type().get());
        bool fits = lt && lt->dtype() == DType::F64 ? std::isfinite(1.0 / v)
                                                    : std::isfinite(float(1.0 / v));
        if (std::frexp(std::fabs(v), &exp) == 0.5 && fits)
          return done(rebuild("mul", {x, scalarConstant(AttrValue::real(1.0 / v), y->type())}, c));
      }
      if (op->is(OpFlags::Commutative) && isLiteral(x) && !isLiteral(y))
        return done(rebuild(name, {y, x}, c));
    }
    if (args.size() == 1 && name == "neg")
      if (auto *inner = llvm::dyn_cast<CallNode>(args[0].get()))
        if (inner->opDef() && inner->opDef()->name() == "neg")
          return done(inner->arg(0));
    return post;
  }

private:
  static Expr rebuild(llvm::StringRef op, llvm::ArrayRef<Expr> args, const CallNode *like) {
    Call n = call(op, args, {}, {}, like->name());
    n->setLoc(like->loc());
    return n;
  }
};

class SimplifyExpr final : public ExpressionPass {
public:
  llvm::StringRef name() const override { return "simplify-expr"; }
  llvm::StringRef description() const override {
    return "Apply IEEE-exact algebraic identities and canonical operand order in expressions";
  }

protected:
  llvm::Expected<Expr> runOnFunction(const FunctionNode &f) override {
    Simplifier s;
    Expr body = s.Mutate(f.body());
    numRewrites += s.rewrites;
    return body;
  }

private:
  Statistic numRewrites{this, "num-rewrites", "Expression nodes simplified"};
};

} // namespace

KC_REGISTER_PASS(SimplifyExpr);
