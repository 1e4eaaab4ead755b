//===- InferTypesPass.cpp - The infer-types pass --------------------------===//
//
// Computes every node's type from its operands with the ops' type rules and
// checks it against the types PNNX declared (`#` annotations); a mismatch is
// an error naming the op. The pass manager also re-infers after every pass;
// this pass makes the step explicit in pipelines and lit tests.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/TypeInference.h"
#include "kc/Pass/Pass.h"

using namespace kc;

namespace {

class InferTypes final : public Pass {
public:
  llvm::StringRef name() const override { return "infer-types"; }
  llvm::StringRef description() const override {
    return "Infer the type of every node and check it against the declared shapes";
  }
  llvm::Error run(Module &m) override { return inferTypes(m); }
};

} // namespace

KC_REGISTER_PASS(InferTypes);
