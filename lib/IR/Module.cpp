//===- Module.cpp - A compilation unit ------------------------------------===//
#include "kc/IR/Module.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

namespace kc {

void Module::add(Function f) {
  auto it = index_.find(f->name());
  if (it != index_.end()) {
    functions_[it->second] = std::move(f);
    return;
  }
  index_[f->name()] = functions_.size();
  functions_.push_back(std::move(f));
}

bool Module::remove(llvm::StringRef name) {
  auto it = index_.find(name);
  if (it == index_.end())
    return false;
  functions_.erase(functions_.begin() + it->second);
  index_.clear();
  for (size_t i = 0; i < functions_.size(); ++i)
    index_[functions_[i]->name()] = i;
  return true;
}

Function Module::lookup(llvm::StringRef name) const {
  auto it = index_.find(name);
  return it == index_.end() ? Function() : functions_[it->second];
}

const FunctionNode *Module::callee(const CallNode &c) const {
  const GlobalVarNode *g = c.global();
  return g ? lookup(g->name()).get() : nullptr;
}

/// The names of `root` and of the module's functions it calls, directly or
/// through other functions (an iterative walk: graphs may be deep).
static llvm::StringSet<> reachableFunctions(const Module &m, const Function &root) {
  llvm::StringSet<> names;
  names.insert(root->name());
  llvm::DenseSet<const ExprNode *> seen;
  std::vector<const ExprNode *> stack{root->body().get()};
  while (!stack.empty()) {
    const ExprNode *e = stack.back();
    stack.pop_back();
    if (!e || !seen.insert(e).second)
      continue;
    if (auto *c = llvm::dyn_cast<CallNode>(e)) {
      for (auto &a : c->args())
        stack.push_back(a.get());
      if (const FunctionNode *f = m.callee(*c); f && names.insert(f->name()).second)
        stack.push_back(f->body().get());
    } else if (auto *t = llvm::dyn_cast<TupleNode>(e)) {
      for (auto &a : t->fields())
        stack.push_back(a.get());
    } else if (auto *g = llvm::dyn_cast<TupleGetItemNode>(e)) {
      stack.push_back(g->tuple().get());
    }
  }
  return names;
}

void Module::setMain(Function newMain) {
  add(std::move(newMain));
  removeUnreferencedFunctions();
}

void Module::removeUnreferencedFunctions() {
  Function m = main();
  if (!m)
    return;
  llvm::StringSet<> used = reachableFunctions(*this, m);
  // Survivors keep their order (functions are added callees first); main,
  // which calls them all, goes last.
  std::vector<Function> kept;
  for (auto &f : functions_)
    if (f.get() != m.get() && used.count(f->name()))
      kept.push_back(f);
  kept.push_back(m);
  functions_.clear();
  index_.clear();
  for (auto &f : kept)
    add(f);
}

} // namespace kc
