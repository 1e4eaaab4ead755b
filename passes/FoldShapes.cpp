//===- FoldShapes.cpp - Shape computations folded where shapes are known --===//
//
//   %1 = @pnnx_expr_1(%0) : i64[2]          (list(size(@0, 0), -1))
//   %2 = Tensor.reshape(input=%0, shape=%1)
//     ⇒ %2 = Tensor.reshape(input=%0) {shape=[2,-1]}     (for %0: f32[2,6,3])
//
// pnnx writes an attribute that depends on the input's shape as an operand
// computed by an expression over size(@i, d) (a model converted with
// inputshape2, whose dims are '?'). Once the shapes are static (a model
// converted at one shape, or one specialized with kc-opt --input-shape),
// each such operand has one value: it becomes the attribute, the shape
// expression drops out, and the passes after this one (remove-identities,
// merge-layout) see an ordinary reshape, slice or expand.
// (kc/IR/AttrOperands.h evaluates the operands; plans do the same for
// each input shape when the module keeps '?' dims.)
//
//===----------------------------------------------------------------------===//
#include "kc/IR/AttrOperands.h"
#include "kc/Pass/Pass.h"
#include "kc/Pass/PassUtils.h"

using namespace kc;

namespace {

class FoldShapes final : public Pass {
public:
  llvm::StringRef name() const override { return "fold-shapes"; }
  llvm::StringRef description() const override {
    return "Turn attributes given as operands (shape computations) into attributes where the "
           "shapes they read are static";
  }
  llvm::Error run(Module &m) override {
    numFolded += rewriteCalls(m, [&](const CallNode &pre, auto rewritten) -> Expr {
      if (!hasAttrOperands(pre))
        return nullptr;
      Call bound = bindAttrOperands(pre, m);
      if (!bound)
        return nullptr;
      // The bound call keeps pre's other operands: point it at their
      // rewritten forms.
      std::vector<Expr> args;
      for (const Expr &a : bound->args())
        args.push_back(rewritten(a.get()));
      Call n = call(bound->callee(), args, bound->attrs(), bound->keys(), bound->name());
      n->setLoc(pre.loc());
      return n;
    });
    return llvm::Error::success();
  }

private:
  Statistic numFolded{this, "num-folded", "Calls whose attribute operands became attributes"};
};

} // namespace

KC_REGISTER_PASS(FoldShapes);
