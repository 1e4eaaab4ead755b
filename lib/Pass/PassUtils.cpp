//===- PassUtils.cpp - Helpers shared by passes ---------------------------===//
#include "kc/Pass/PassUtils.h"
#include "kc/IR/Functor.h"
#include "kc/Pass/Pass.h"

namespace kc {

namespace {
class Rebind final : public MixedModeMutator {
public:
  explicit Rebind(const Module &m) : m_(m) {}
  using MixedModeMutator::Rewrite_;
  Expr Rewrite_(const CallNode *, const Expr &post) override {
    auto *c = llvm::cast<CallNode>(post.get());
    auto *f = llvm::dyn_cast<FunctionNode>(c->callee().get());
    if (!f)
      return post;
    Function now = m_.lookup(f->name());
    if (now && now->isFused()) {
      // A fused group calls expression functions itself: its body is
      // rebound too, and the group made anew if that changed it.
      Expr body = Mutate(now->body());
      if (body.get() != now->body().get())
        now = withBody(now, now->params(), body);
    }
    if (!now || now.get() == f)
      return post;
    Call n = call(Expr(now), c->args(), c->attrs(), c->keys(), c->name());
    n->setLoc(c->loc());
    return n;
  }

private:
  const Module &m_;
};
} // namespace

void rebindFunctionCalls(Module &m) {
  Rebind r(m);
  rewriteMain(m, [&](const Expr &body) { return r.Mutate(body); });
}

llvm::Error ExpressionPass::run(Module &m) {
  for (const Function &f : m.functions()) {
    if (!f->isPrimitive())
      continue;
    auto body = runOnFunction(*f);
    if (!body)
      return body.takeError();
    if (body->get() != f->body().get())
      m.add(withBody(f, f->params(), *body));
  }
  rebindFunctionCalls(m);
  return llvm::Error::success();
}

} // namespace kc
