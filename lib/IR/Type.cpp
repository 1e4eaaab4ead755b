//===- Type.cpp - Tensor and tuple types ----------------------------------===//
#include "kc/IR/Type.h"

#include "llvm/Support/MathExtras.h"

namespace kc {

llvm::StringRef nodeKindName(NodeKind k) {
  switch (k) {
#define KC_EXPR_NODE(Name)                                                                         \
  case NodeKind::Name:                                                                             \
    return #Name;
#define KC_TYPE_NODE(Name) KC_EXPR_NODE(Name)
#include "kc/IR/Nodes.def"
  }
  return "?";
}

bool TensorTypeNode::isStatic() const {
  for (int64_t d : dims_)
    if (d < 0)
      return false;
  return true;
}

std::optional<int64_t> TensorTypeNode::numElements() const {
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d < 0)
      return std::nullopt;
    if (d != 0 && n > INT64_MAX / d)
      return std::nullopt;
    n *= d;
  }
  return n;
}

bool typeEqual(const Type &a, const Type &b) {
  if (a.get() == b.get())
    return true;
  if (!a || !b || a->kind() != b->kind())
    return false;
  if (auto *ta = llvm::dyn_cast<TensorTypeNode>(a.get())) {
    auto *tb = llvm::cast<TensorTypeNode>(b.get());
    return ta->dtype() == tb->dtype() && ta->dims() == tb->dims();
  }
  auto *ta = llvm::cast<TupleTypeNode>(a.get());
  auto *tb = llvm::cast<TupleTypeNode>(b.get());
  if (ta->size() != tb->size())
    return false;
  for (size_t i = 0; i < ta->size(); ++i)
    if (!typeEqual(ta->fields()[i], tb->fields()[i]))
      return false;
  return true;
}

std::string typeToString(const Type &t) {
  if (!t)
    return "?";
  if (auto *tt = llvm::dyn_cast<TensorTypeNode>(t.get())) {
    std::string s = dtypeName(tt->dtype()).str();
    s += '[';
    for (size_t i = 0; i < tt->rank(); ++i) {
      if (i)
        s += ',';
      s += tt->dims()[i] < 0 ? std::string("?") : std::to_string(tt->dims()[i]);
    }
    s += ']';
    return s;
  }
  auto *tt = llvm::cast<TupleTypeNode>(t.get());
  std::string s = "(";
  for (size_t i = 0; i < tt->size(); ++i) {
    if (i)
      s += ", ";
    s += typeToString(tt->fields()[i]);
  }
  return s + ")";
}

} // namespace kc
