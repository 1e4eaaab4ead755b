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

/// `root` and the module's functions it calls, directly or through other
/// functions, callees before callers.
static std::vector<Function> calledFunctions(const Module &m, const Function &root) {
  std::vector<Function> order;
  llvm::DenseSet<const ExprNode *> seen;
  llvm::StringSet<> placed;
  // Post-order DFS with an explicit stack: (node, children pushed?). A
  // function is entered from the calls of it, by name.
  std::vector<std::pair<const ExprNode *, bool>> stack{{root.get(), false}};
  while (!stack.empty()) {
    auto [e, expanded] = stack.back();
    if (!e || (!expanded && !seen.insert(e).second)) {
      stack.pop_back();
      continue;
    }
    if (expanded) {
      stack.pop_back();
      if (auto *f = llvm::dyn_cast<FunctionNode>(e))
        order.push_back(Function(f));
      continue;
    }
    stack.back().second = true;
    if (auto *f = llvm::dyn_cast<FunctionNode>(e)) {
      stack.push_back({f->body().get(), false});
    } else if (auto *c = llvm::dyn_cast<CallNode>(e)) {
      for (auto &a : c->args())
        stack.push_back({a.get(), false});
      if (const FunctionNode *f = m.callee(*c); f && placed.insert(f->name()).second)
        stack.push_back({f, false});
    } else if (auto *t = llvm::dyn_cast<TupleNode>(e)) {
      for (auto &a : t->fields())
        stack.push_back({a.get(), false});
    } else if (auto *g = llvm::dyn_cast<TupleGetItemNode>(e)) {
      stack.push_back({g->tuple().get(), false});
    }
  }
  return order;
}

void Module::setMain(Function newMain) {
  add(std::move(newMain));
  removeUnreferencedFunctions();
}

void Module::removeUnreferencedFunctions() {
  Function m = main();
  if (!m)
    return;
  llvm::StringSet<> used;
  for (const Function &f : calledFunctions(*this, m))
    used.insert(f->name());
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
