//===- StructuralHash.cpp - Hashing nodes for hash-consing ----------------===//
#include "kc/IR/StructuralHash.h"
#include "kc/IR/Type.h"

namespace kc {

// Ops are one node each; two GlobalVars of one name are the same callee.
static llvm::hash_code calleeHash(const CallNode &c) {
  if (const GlobalVarNode *g = c.global())
    return llvm::hash_value(g->name());
  return llvm::hash_value(c.callee().get());
}

static bool sameCallee(const CallNode &a, const CallNode &b) {
  const GlobalVarNode *ga = a.global(), *gb = b.global();
  if (ga || gb)
    return ga && gb && ga->name() == gb->name();
  return a.callee().get() == b.callee().get();
}

llvm::hash_code callHash(const CallNode &c) {
  llvm::hash_code h = calleeHash(c);
  for (size_t i = 0; i < c.numArgs(); ++i)
    h = llvm::hash_combine(h, c.arg(i).get(), c.keys()[i].name, int(c.keys()[i].role));
  for (auto &[k, v] : c.attrs().entries())
    h = llvm::hash_combine(h, k, v);
  return h;
}

bool sameCall(const CallNode &a, const CallNode &b) {
  if (!sameCallee(a, b) || a.numArgs() != b.numArgs() || a.attrs() != b.attrs())
    return false;
  for (size_t i = 0; i < a.numArgs(); ++i)
    if (a.arg(i).get() != b.arg(i).get() || !(a.keys()[i] == b.keys()[i]))
      return false;
  return true;
}

static llvm::hash_code typeHash(const Type &t) {
  auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(t.get());
  if (!tt)
    return llvm::hash_value(t ? int(t->kind()) : -1);
  return llvm::hash_combine(int(tt->dtype()),
                            llvm::hash_combine_range(tt->dims().begin(), tt->dims().end()));
}

llvm::hash_code literalHash(const ConstantNode &k) {
  return llvm::hash_combine(k.scalar(), typeHash(k.type()));
}

bool sameLiteral(const ConstantNode &a, const ConstantNode &b) {
  return a.isScalar() && b.isScalar() && a.scalar() == b.scalar() && typeEqual(a.type(), b.type());
}

} // namespace kc
