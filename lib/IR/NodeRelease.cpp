//===- NodeRelease.cpp - Iterative deletion of IR nodes -------------------===//
//
// A node's destructor releases its children, and a child whose count drops to
// zero would be deleted inside that destructor: a chain of N nodes would nest
// N destructor calls and overflow the stack. Instead the outermost deletion on
// a thread owns a worklist; deletions that start while it runs are queued on
// it and performed by its loop, one level deep.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Node.h"

#include "llvm/ADT/SmallVector.h"

namespace kc {

namespace {
/// The worklist of the deletion running on this thread; null when none is.
/// A plain pointer: no constructor or destructor, so it is usable even while
/// static objects holding nodes are destroyed at exit.
thread_local llvm::SmallVectorImpl<const Node *> *pendingDeletes = nullptr;
} // namespace

void Node::destroy(const Node *n) {
  if (pendingDeletes) {
    pendingDeletes->push_back(n);
    return;
  }
  // The common case (a node with a few dying children) stays off the heap.
  llvm::SmallVector<const Node *, 16> pending;
  pendingDeletes = &pending;
  delete n;
  while (!pending.empty())
    delete pending.pop_back_val();
  pendingDeletes = nullptr;
}

} // namespace kc
