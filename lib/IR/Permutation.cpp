//===- Permutation.cpp - Tensor.permute's dims ----------------------------===//
#include "kc/IR/Permutation.h"
#include "kc/IR/Op.h"

namespace kc {

const OpDef *permuteOp() {
  static const OpDef *op = OpRegistry::global().lookup("Tensor.permute");
  return op;
}

llvm::Expected<std::vector<int64_t>> permutationOf(const CallNode &c, int64_t rank) {
  auto error = [](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  };
  std::vector<int64_t> p = c.attrs().getInts("dims");
  if (int64_t(p.size()) != rank)
    return error("dims has " + llvm::Twine(p.size()) + " entries for rank " + llvm::Twine(rank));
  std::vector<bool> seen(p.size());
  for (int64_t &x : p) {
    if (x < -rank || x >= rank)
      return error("dims is not a permutation");
    x = x < 0 ? x + rank : x;
    if (seen[size_t(x)])
      return error("dims is not a permutation");
    seen[size_t(x)] = true;
  }
  return p;
}

} // namespace kc
