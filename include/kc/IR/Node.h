//===- kc/IR/Node.h - Base of all IR nodes ----------------------*- C++ -*-===//
///
/// \file
/// Every IR object (expressions and types) derives from Node: immutable after
/// construction, reference-counted, and tagged with a NodeKind that serves as
/// the runtime type index. The functor dispatch tables are indexed by that
/// kind, and LLVM-style isa/cast/dyn_cast use it through `classof`.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Casting.h"

#include <atomic>
#include <cstdint>

namespace kc {

/// Runtime type index of a node; generated from Nodes.def.
enum class NodeKind : uint8_t {
#define KC_EXPR_NODE(Name) Name,
#define KC_TYPE_NODE(Name) Name,
#include "kc/IR/Nodes.def"
};

/// Number of node kinds: the size of every dispatch table.
constexpr unsigned kNumNodeKinds = 0
#define KC_EXPR_NODE(Name) +1
#define KC_TYPE_NODE(Name) +1
#include "kc/IR/Nodes.def"
    ;

/// The first and last expression kinds (expression kinds come first in Nodes.def).
constexpr NodeKind kFirstExprKind = NodeKind::Var;
constexpr NodeKind kLastExprKind = NodeKind::Op;
constexpr NodeKind kFirstTypeKind = NodeKind::TensorType;
constexpr NodeKind kLastTypeKind = NodeKind::TupleType;

llvm::StringRef nodeKindName(NodeKind k);

/// Base class of every IR node. Reference counting is thread safe so that a
/// compiled model can be shared by threads.
class Node {
public:
  Node(const Node &) = delete;
  Node &operator=(const Node &) = delete;
  virtual ~Node() = default;

  NodeKind kind() const { return kind_; }
  unsigned typeIndex() const { return static_cast<unsigned>(kind_); }

  // The protocol of llvm::IntrusiveRefCntPtr.
  void Retain() const { refCount_.fetch_add(1, std::memory_order_relaxed); }
  void Release() const {
    if (refCount_.fetch_sub(1, std::memory_order_acq_rel) == 1)
      destroy(this);
  }

protected:
  explicit Node(NodeKind k) : kind_(k) {}

private:
  /// Deletes a node whose last reference is gone, without recursion: a
  /// destructor's release of a child that dies too is deferred to a loop, so
  /// a long chain cannot overflow the stack (NodeRelease.cpp).
  static void destroy(const Node *n);

  mutable std::atomic<int> refCount_{0};
  const NodeKind kind_;
};

/// A strong reference to a node. Copying shares; nodes die with their last reference.
template <typename T> using Ref = llvm::IntrusiveRefCntPtr<T>;

template <typename T, typename... Args> Ref<T> make(Args &&...args) {
  return Ref<T>(new T(std::forward<Args>(args)...));
}

using NodeRef = Ref<const Node>;

// Forward declarations of every node class, from the one list.
#define KC_EXPR_NODE(Name) class Name##Node;
#define KC_TYPE_NODE(Name) class Name##Node;
#include "kc/IR/Nodes.def"

/// The NodeKind of each node class, generated from the one list.
template <typename T> struct NodeKindOf;
#define KC_EXPR_NODE(Name)                                                                         \
  template <> struct NodeKindOf<Name##Node> {                                                      \
    static constexpr NodeKind value = NodeKind::Name;                                              \
  };
#define KC_TYPE_NODE(Name) KC_EXPR_NODE(Name)
#include "kc/IR/Nodes.def"

} // namespace kc
