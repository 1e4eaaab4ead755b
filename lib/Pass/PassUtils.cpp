//===- PassUtils.cpp - Helpers shared by passes ---------------------------===//
#include "kc/Pass/PassUtils.h"
#include "kc/IR/Functor.h"
#include "kc/Pass/Pass.h"

namespace kc {

llvm::Error ExpressionPass::run(Module &m) {
  for (const Function &f : m.functions()) {
    if (!f->isPrimitive())
      continue;
    auto body = runOnFunction(*f);
    if (!body)
      return body.takeError();
    if (body->get() != f->body().get())
      m.add(withBody(f, f->params(), *body)); // every call of it now calls the new one
  }
  return llvm::Error::success();
}

} // namespace kc
