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

class LowerRpn final : public ExpressionPass {
public:
  llvm::StringRef name() const override { return "lower-rpn"; }
  llvm::StringRef description() const override {
    return "Lower each primitive expression function to a flat reverse-Polish program";
  }

protected:
  llvm::Expected<Expr> runOnFunction(const FunctionNode &f) override {
    if (isLoweredToRpn(f))
      return f.body();
    auto prog = lowerToRpn(f);
    if (!prog)
      return prog.takeError();
    std::vector<Expr> args(f.params().begin(), f.params().end());
    Call body =
        call(kRpnOpName, args, Attrs{{"program", AttrValue::stringList(prog->toTokens())}});
    body->setLoc(f.body()->loc());
    ++numLowered;
    numInstructions += prog->code.size();
    return Expr(body);
  }

private:
  Statistic numLowered{this, "num-lowered", "Expression functions lowered"};
  Statistic numInstructions{this, "num-instructions", "RPN instructions emitted"};
};

} // namespace

KC_REGISTER_PASS(LowerRpn);
