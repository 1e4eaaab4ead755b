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

/// Functions called (directly or through other functions) from `root`, callees
/// before callers.
static std::vector<Function> calledFunctions(const Function &root) {
  std::vector<Function> order;
  llvm::DenseSet<const ExprNode *> seen;
  // Post-order DFS with an explicit stack: (node, children pushed?).
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
      stack.push_back({c->callee().get(), false});
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
  std::vector<Function> fns = calledFunctions(newMain);
  // Keep the existing order for functions that survive; new ones follow.
  std::vector<Function> ordered;
  llvm::StringSet<> placed;
  llvm::StringMap<Function> byName;
  for (auto &f : fns)
    byName[f->name()] = f;
  for (auto &old : functions_) {
    auto it = byName.find(old->name());
    if (it != byName.end() && old->name() != "main" && placed.insert(old->name()).second)
      ordered.push_back(it->second);
  }
  for (auto &f : fns)
    if (f->name() != "main" && f.get() != newMain.get() && placed.insert(f->name()).second)
      ordered.push_back(f);
  functions_.clear();
  index_.clear();
  for (auto &f : ordered)
    add(f);
  add(newMain);
}

void Module::removeUnreferencedFunctions() {
  Function m = main();
  if (!m)
    return;
  // Iterative walk over every reachable node, collecting called functions.
  llvm::StringSet<> used;
  llvm::DenseSet<const ExprNode *> seen;
  std::vector<const ExprNode *> stack{m.get()};
  while (!stack.empty()) {
    const ExprNode *e = stack.back();
    stack.pop_back();
    if (!e || !seen.insert(e).second)
      continue;
    if (auto *f = llvm::dyn_cast<FunctionNode>(e)) {
      used.insert(f->name());
      stack.push_back(f->body().get());
    } else if (auto *c = llvm::dyn_cast<CallNode>(e)) {
      stack.push_back(c->callee().get());
      for (auto &a : c->args())
        stack.push_back(a.get());
    } else if (auto *t = llvm::dyn_cast<TupleNode>(e)) {
      for (auto &a : t->fields())
        stack.push_back(a.get());
    } else if (auto *g = llvm::dyn_cast<TupleGetItemNode>(e)) {
      stack.push_back(g->tuple().get());
    }
  }
  std::vector<Function> kept;
  for (auto &f : functions_)
    if (used.count(f->name()))
      kept.push_back(f);
  functions_.clear();
  index_.clear();
  for (auto &f : kept)
    add(f);
}

} // namespace kc
