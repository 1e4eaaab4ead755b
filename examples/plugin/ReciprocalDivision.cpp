//===- ReciprocalDivision.cpp - An example expression pass ----------------===//
//
// A pass over the functions that hold pnnx.Expression ASTs, written outside
// libkc: div(x, c) by a float literal c becomes mul(x, 1/c), trading kc's
// bit-exact arithmetic (simplify-expr does this only where 1/c is exact)
// for a multiplication, within one rounding of the quotient. It is in the
// same plugin library as relu6-to-hardtanh:
//
//   kc-opt model.pnnx.param --load-pass-plugin=libKcExamplePlugin.so -p reciprocal-division
//
// docs/writing-a-pass.md walks through it (section 7); its C++ blocks there
// are this file below this comment (lit-tests/docs/snippets.test checks).
//
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/Pass/Pass.h"

#include <cmath>

using namespace kc;

namespace {

class DivisionRewriter final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  uint64_t count = 0;

  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    auto *c = llvm::cast<CallNode>(post.get());
    if (!isCallTo(c, "div") || c->numArgs() != 2)
      return post;
    auto *divisor = llvm::dyn_cast<ConstantNode>(c->arg(1).get());
    if (!divisor || !divisor->isScalar() || !divisor->scalar().isFloat())
      return post;
    double reciprocal = 1.0 / divisor->scalar().getNumber();
    if (!std::isfinite(float(reciprocal)))
      return post; // 0, or so small that 1/c overflows: keep the division
    ++count;
    Expr literal = scalarConstant(AttrValue::real(reciprocal), divisor->type());
    return call("mul", {c->arg(0), literal}, {}, {}, c->name());
  }
};

class ReciprocalDivision final : public ExpressionPass {
public:
  llvm::StringRef name() const override { return "reciprocal-division"; }
  llvm::StringRef description() const override {
    return "Example plugin: divide by a float literal as a multiplication by its reciprocal";
  }

protected:
  llvm::Expected<Expr> runOnFunction(const FunctionNode &f) override {
    DivisionRewriter r;
    Expr body = r.Mutate(f.body());
    numRewritten += r.count;
    return body; // f.body() itself when nothing changed
  }

private:
  Statistic numRewritten{this, "num-rewritten", "Divisions rewritten"};
};

} // namespace

KC_REGISTER_PASS(ReciprocalDivision);
