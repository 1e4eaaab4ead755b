//===- Op.cpp - Operator definitions and the op registry ------------------===//
#include "kc/IR/Op.h"

#include <algorithm>

namespace kc {

OpDef &OpDef::describe(std::string text) {
  summary_ = std::move(text);
  return *this;
}
OpDef &OpDef::alias(std::string name) {
  aliases_.push_back(name);
  OpRegistry::global().addAlias(name, this);
  return *this;
}
OpDef &OpDef::input(std::string name) {
  inputs_.push_back(std::move(name));
  return *this;
}
OpDef &OpDef::weight(std::string name, bool optional) {
  weights_.push_back({std::move(name), optional});
  return *this;
}
OpDef &OpDef::attr(std::string name, AttrValue dflt, bool required) {
  attrs_.push_back({std::move(name), std::move(dflt), required});
  return *this;
}
OpDef &OpDef::outputs(int n) {
  numOutputs_ = n;
  return *this;
}
OpDef &OpDef::flags(OpFlags f) {
  flags_ = flags_ | f;
  return *this;
}
OpDef &OpDef::typeRule(TypeRule rule) {
  typeRule_ = rule;
  return *this;
}
OpDef &OpDef::typeRule(ModuleTypeRule rule) {
  moduleTypeRule_ = rule;
  return *this;
}
OpDef &OpDef::arity(int n) {
  arity_ = n;
  return *this;
}

OpDef &OpDef::activation(ActivationKind k) {
  activation_ = k;
  return *this;
}

OpDef &OpDef::window(WindowOp op, int rank, PoolKind pool) {
  window_ = WindowSpec{op, rank, pool};
  return *this;
}
OpDef &OpDef::channelAxis(int axis) {
  channelAxis_ = axis;
  return *this;
}

const AttrSpec *OpDef::findAttr(llvm::StringRef name) const {
  for (auto &a : attrs_)
    if (a.name == name)
      return &a;
  return nullptr;
}

const Op &OpDef::node() const {
  if (!node_)
    node_ = make<const OpNode>(this);
  return node_;
}

OpRegistry &OpRegistry::global() {
  static OpRegistry registry;
  return registry;
}

OpDef &OpRegistry::add(llvm::StringRef name) {
  defs_.push_back(std::make_unique<OpDef>(name.str()));
  OpDef *def = defs_.back().get();
  addAlias(name, def);
  return *def;
}

void OpRegistry::addAlias(llvm::StringRef name, OpDef *def) { byName_[name] = def; }

const OpDef *OpRegistry::lookup(llvm::StringRef name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : it->second;
}

const OpDef *OpRegistry::getOrOpaque(llvm::StringRef name) {
  if (const OpDef *d = lookup(name))
    return d;
  OpDef &d = add(name);
  d.flags(OpFlags::Opaque | OpFlags::Variadic).outputs(-1);
  return &d;
}

std::vector<const OpDef *> OpRegistry::all() const {
  std::vector<const OpDef *> r;
  for (auto &d : defs_)
    if (!d->isOpaque())
      r.push_back(d.get());
  std::sort(r.begin(), r.end(), [](auto *a, auto *b) { return a->name() < b->name(); });
  return r;
}

const OpDef *calleeOp(const ExprNode *e) {
  if (auto *c = llvm::dyn_cast_or_null<CallNode>(e))
    return c->opDef();
  return nullptr;
}

bool isCallTo(const ExprNode *e, llvm::StringRef name) {
  const OpDef *d = calleeOp(e);
  return d && d == OpRegistry::global().lookup(name);
}

} // namespace kc
