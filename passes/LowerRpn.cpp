//===- LowerRpn.cpp - Lower expression ASTs to reverse-Polish programs ----===//
//
// Every primitive function's expression AST becomes one `rpn` call holding
// the postfix program, which the interpreter runs on a stack machine:
//
//   %2 = add(%0, mul(%1, 2.5:f32))   ==>   %2 = rpn(%0, %1) {program=["%0","%1","2.5:f32","mul","add"]}
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Rpn.h"
#include "kc/Pass/Pass.h"

using namespace kc;

namespace {

class LowerRpn final : public Pass {
public:
  llvm::StringRef name() const override { return "lower-rpn"; }
  llvm::StringRef description() const override {
    return "Lower each primitive expression function to a flat reverse-Polish program";
  }

  llvm::Error run(Module &m) override {
    for (const Function &f : m.functions()) {
      if (!f->isPrimitive() || isLoweredToRpn(*f))
        continue;
      auto prog = lowerToRpn(*f);
      if (!prog)
        return prog.takeError();
      std::vector<Expr> args(f->params().begin(), f->params().end());
      Call body = call(kRpnOpName, args,
                       Attrs{{"program", AttrValue::stringList(prog->toTokens())}});
      body->setLoc(f->body()->loc());
      m.add(make<const FunctionNode>(f->name(), f->params(), body, f->retType(), true, f->attrs()));
      ++numLowered;
      numInstructions += prog->code.size();
    }
    rebindCallees(m);
    return llvm::Error::success();
  }

private:
  Statistic numLowered{this, "num-lowered", "Expression functions lowered"};
  Statistic numInstructions{this, "num-instructions", "RPN instructions emitted"};

  /// Calls in main still point at the old function nodes: point them at the
  /// module's current definitions.
  static void rebindCallees(Module &m);
};

} // namespace

#include "kc/IR/Functor.h"

void LowerRpn::rebindCallees(Module &m) {
  class Rebind final : public MixedModeMutator {
  public:
    explicit Rebind(const Module &m) : m_(m) {}
    using MixedModeMutator::Rewrite_;
    Expr Rewrite_(const CallNode *pre, const Expr &post) override {
      auto *c = llvm::cast<CallNode>(post.get());
      auto *f = llvm::dyn_cast<FunctionNode>(c->callee().get());
      if (!f)
        return post;
      Function now = m_.lookup(f->name());
      if (!now || now.get() == f)
        return post;
      Call n = call(Expr(now), c->args(), c->attrs(), c->keys(), c->name());
      n->setLoc(c->loc());
      return n;
    }

  private:
    const Module &m_;
  };
  Function main = m.main();
  if (!main)
    return;
  Rebind r(m);
  Expr body = r.Mutate(main->body());
  m.setMain(withBody(main, main->params(), body));
}

KC_REGISTER_PASS(LowerRpn);
