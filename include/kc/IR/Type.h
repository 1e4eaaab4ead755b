//===- kc/IR/Type.h - Tensor and tuple types --------------------*- C++ -*-===//
///
/// \file
/// The types of IR values: TensorType (element type and dims, a dim may be
/// dynamic) and TupleType (operators and functions with several results).
/// A null Type means "not known yet"; `infer-types` fills it in.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Node.h"
#include "kc/Support/DType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace kc {

class TypeNode : public Node {
public:
  static bool classof(const Node *n) {
    return n->kind() >= kFirstTypeKind && n->kind() <= kLastTypeKind;
  }

protected:
  using Node::Node;
};

using Type = Ref<const TypeNode>;

/// A dim whose extent is only known at run time (`?` in PNNX and kc text).
constexpr int64_t kDynamicDim = -1;

class TensorTypeNode final : public TypeNode {
public:
  TensorTypeNode(DType dtype, llvm::ArrayRef<int64_t> dims)
      : TypeNode(NodeKind::TensorType), dtype_(dtype), dims_(dims.begin(), dims.end()) {}

  DType dtype() const { return dtype_; }
  llvm::ArrayRef<int64_t> dims() const { return dims_; }
  size_t rank() const { return dims_.size(); }
  int64_t dim(int i) const { return dims_[i < 0 ? i + (int)dims_.size() : i]; }
  bool isStatic() const;
  /// Element count, or nullopt when a dim is dynamic or the count overflows int64.
  std::optional<int64_t> numElements() const;

  static bool classof(const Node *n) { return n->kind() == NodeKind::TensorType; }

private:
  DType dtype_;
  llvm::SmallVector<int64_t, 6> dims_;
};

class TupleTypeNode final : public TypeNode {
public:
  explicit TupleTypeNode(llvm::ArrayRef<Type> fields)
      : TypeNode(NodeKind::TupleType), fields_(fields.begin(), fields.end()) {}

  llvm::ArrayRef<Type> fields() const { return fields_; }
  size_t size() const { return fields_.size(); }

  static bool classof(const Node *n) { return n->kind() == NodeKind::TupleType; }

private:
  llvm::SmallVector<Type, 4> fields_;
};

inline Type tensorType(DType dtype, llvm::ArrayRef<int64_t> dims) {
  return make<const TensorTypeNode>(dtype, dims);
}
inline Type tupleType(llvm::ArrayRef<Type> fields) { return make<const TupleTypeNode>(fields); }

/// Structural equality of types; two null types are equal.
bool typeEqual(const Type &a, const Type &b);
/// kc's textual form: `f32[1,3,?,?]`, `(f32[2], i64[])`, `?` for a null type.
std::string typeToString(const Type &t);

} // namespace kc
