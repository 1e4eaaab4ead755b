//===- Relu6ToHardtanh.cpp - An example pass plugin -----------------------===//
//
// A complete pass written outside libkc: it rewrites every `nn.ReLU6` into the
// equivalent `nn.Hardtanh{min_val=0.0, max_val=6.0}`. Built as a shared
// library (CMakeLists.txt here) and loaded with
//
//   kc-opt model.pnnx.param --load-pass-plugin=libKcExamplePlugin.so -p relu6-to-hardtanh
//   kc-run model.pnnx.param --load-pass-plugin=libKcExamplePlugin.so -p relu6-to-hardtanh
//
// docs/writing-a-pass.md walks through it; its C++ blocks, in order, are this
// file below this comment (lit-tests/docs/snippets.test checks).
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/Pass/Pass.h"
#include "kc/Pass/PassUtils.h"

using namespace kc;

namespace {

class Relu6Rewriter final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_; // keep the other overloads visible
  uint64_t count = 0;

  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    auto *c = llvm::cast<CallNode>(post.get());
    if (!isCallTo(c, "nn.ReLU6"))
      return post; // unchanged: return what you were given
    ++count;
    return call("nn.Hardtanh", c->args(),
                Attrs{{"max_val", AttrValue::real(6.0)}, {"min_val", AttrValue::real(0.0)}},
                c->keys(), c->name());
  }
};

class Relu6ToHardtanh final : public Pass {
public:
  llvm::StringRef name() const override { return "relu6-to-hardtanh"; }
  llvm::StringRef description() const override {
    return "Example plugin: rewrite nn.ReLU6 as nn.Hardtanh(0, 6)";
  }
  llvm::Error run(Module &m) override {
    Relu6Rewriter r;
    rewriteMain(m, [&](const Expr &body) { return r.Mutate(body); });
    numRewritten += r.count;
    return llvm::Error::success();
  }

private:
  Statistic numRewritten{this, "num-rewritten", "ReLU6 calls rewritten"};
};

} // namespace

KC_REGISTER_PASS(Relu6ToHardtanh); // the one registration line
