//===- NodeReleaseTest.cpp - Dropping deep graphs -------------------------===//
//
// The last reference to a graph takes its nodes with it; however deep the
// graph, that must not recurse once per level (an 8 MB stack holds about
// 100,000 nested destructor calls).
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Expr.h"

#include <doctest/doctest.h>

#include <thread>

using namespace kc;

namespace {

constexpr size_t kDeep = 1000000;

/// x -> add(x, x) -> add(that, x) -> ...: `n` calls, each the only holder of
/// the one before it, so dropping the root frees them all in one cascade.
Expr buildAddChain(size_t n) {
  Var x = var("x", tensorType(DType::F32, {4}));
  Expr prev = x;
  for (size_t i = 0; i < n; ++i)
    prev = call("add", {prev, x});
  return prev;
}

} // namespace

TEST_CASE("a 1,000,000-call chain is dropped without overflowing the stack") {
  Expr root = buildAddChain(kDeep);
  REQUIRE(llvm::isa<CallNode>(root.get()));
  root.reset();
  CHECK(!root);
}

TEST_CASE("a function over a deep chain is dropped without overflowing the stack") {
  Var x = var("x", tensorType(DType::F32, {4}));
  Expr prev = x;
  for (size_t i = 0; i < kDeep; ++i)
    prev = call("neg", {prev});
  Function f = make<const FunctionNode>("main", llvm::ArrayRef<Var>{x}, prev, nullptr, false);
  prev.reset();
  x.reset();
  f.reset();
  CHECK(!f);
}

TEST_CASE("deep chains are dropped on several threads at once") {
  // Each thread drains its own deletions.
  std::vector<Expr> roots;
  for (int i = 0; i < 2; ++i)
    roots.push_back(buildAddChain(kDeep / 4));
  std::vector<std::thread> threads;
  for (Expr &r : roots)
    threads.emplace_back([&r] { r.reset(); });
  for (std::thread &t : threads)
    t.join();
  for (Expr &r : roots)
    CHECK(!r);
}
