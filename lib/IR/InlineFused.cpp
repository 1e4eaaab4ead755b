//===- InlineFused.cpp - Fused groups back into their calls ---------------===//
#include "kc/IR/InlineFused.h"
#include "kc/IR/Functor.h"

#include "llvm/ADT/DenseMap.h"

namespace kc {

namespace {

class Inliner final : public MixedModeMutator {
public:
  explicit Inliner(const Module &m) : m_(m) {}
  using MixedModeMutator::Rewrite_;
  bool inlined = false;

  Expr Rewrite_(const CallNode *, const Expr &post) override {
    auto *c = llvm::cast<CallNode>(post.get());
    const FunctionNode *fn = m_.callee(*c);
    if (!fn || !fn->isFused() || fn->params().size() != c->numArgs())
      return post;
    inlined = true;
    llvm::DenseMap<const ExprNode *, Expr> map;
    for (size_t i = 0; i < c->numArgs(); ++i)
      map[fn->params()[i].get()] = c->arg(i);
    // A group's body is a short chain of calls: copied node by node, each
    // keeping its type, place and name.
    DataflowVisit(fn->body(), [&](const Expr &e) {
      auto *b = llvm::dyn_cast<CallNode>(e.get());
      if (!b)
        return;
      std::vector<Expr> args;
      for (const Expr &a : b->args()) {
        auto it = map.find(a.get());
        args.push_back(it == map.end() ? a : it->second);
      }
      Call copy = call(b->callee(), args, b->attrs(), b->keys(), b->name());
      copy->setLoc(b->loc());
      copy->setType(b->type());
      map[b] = copy;
    });
    auto it = map.find(fn->body().get());
    return it == map.end() ? post : it->second;
  }

private:
  const Module &m_;
};

} // namespace

ModulePtr inlineFusedCalls(const Module &m) {
  ModulePtr out = m.clone();
  Function main = m.main();
  if (!main)
    return out;
  Inliner inliner(m);
  Expr body = inliner.Mutate(main->body());
  if (!inliner.inlined)
    return out;
  out->setMain(withBody(main, main->params(), body));
  return out;
}

} // namespace kc
