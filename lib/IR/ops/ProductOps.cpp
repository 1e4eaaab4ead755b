//===- ProductOps.cpp - einsum, addmm, baddbmm, mv ------------------------===//
#include "TypeRuleUtils.h"

#include "kc/IR/Einsum.h"

using namespace kc;
using namespace kc::typerules;

namespace {

llvm::Expected<Type> einsum(const CallNode &c) {
  std::vector<std::vector<int64_t>> shapes;
  DType dt = DType::F32;
  for (size_t i = 0; i < c.numDataArgs(); ++i) {
    const TensorTypeNode *t = dataType(c, i);
    if (!t || !t->isStatic())
      return Type();
    shapes.emplace_back(t->dims().begin(), t->dims().end());
    dt = t->dtype();
  }
  auto spec = parseEinsum(c.attrs().getString("equation", ""), shapes);
  if (!spec)
    return fail(c, "equation '" + c.attrs().getString("equation", "") +
                       "': " + llvm::toString(spec.takeError()));
  std::vector<int64_t> d;
  for (int l : spec->output)
    d.push_back(spec->sizes[l]);
  return tensorType(dt, d);
}

/// addmm: (n, m) @ (m, p); baddbmm: (b, n, m) @ (b, m, p); the added
/// input broadcasts to the product.
llvm::Expected<Type> addProduct(const CallNode &c, size_t rank) {
  const TensorTypeNode *in = dataType(c, 0), *a = dataType(c, 1), *b = dataType(c, 2);
  if (!in || !a || !b)
    return Type();
  if (a->rank() != rank || b->rank() != rank)
    return fail(c, "expects " + llvm::Twine(rank) + "-d factors");
  int64_t k1 = a->dim(-1), k2 = b->dim(-2);
  if (k1 >= 0 && k2 >= 0 && k1 != k2)
    return fail(c, "inner dims differ: " + llvm::Twine(k1) + " and " + llvm::Twine(k2));
  std::vector<int64_t> d(a->dims().begin(), a->dims().end());
  d.back() = b->dim(-1);
  if (rank == 3 && a->dim(0) != b->dim(0))
    return fail(c, "batch sizes differ");
  if (!broadcast(in->dims(), d) || *broadcast(in->dims(), d) != d)
    return fail(c, "input " + typeToString(c.dataArg(0)->type()) +
                       " does not broadcast to the product");
  return tensorType(a->dtype(), d);
}
llvm::Expected<Type> addmm(const CallNode &c) { return addProduct(c, 2); }
llvm::Expected<Type> baddbmm(const CallNode &c) { return addProduct(c, 3); }

llvm::Expected<Type> mv(const CallNode &c) {
  const TensorTypeNode *a = dataType(c, 0), *v = dataType(c, 1);
  if (!a || !v)
    return Type();
  if (a->rank() != 2 || v->rank() != 1 ||
      (a->dim(1) >= 0 && v->dim(0) >= 0 && a->dim(1) != v->dim(0)))
    return fail(c, "expects a matrix and a vector of its column count");
  return tensorType(a->dtype(), {a->dim(0)});
}

const OpFlags kPure = OpFlags::Pure;

KC_REGISTER_OP(einsum_, "torch.einsum")
    .describe("Einstein summation over the operands")
    .attr("equation", AttrValue(), true)
    .flags(kPure | OpFlags::Variadic)
    .typeRule(einsum);
KC_REGISTER_OP(addmm_, "torch.addmm")
    .describe("beta * input + alpha * (mat1 @ mat2)")
    .input("input")
    .input("mat1")
    .input("mat2")
    .attr("beta", AttrValue::real(1.0))
    .attr("alpha", AttrValue::real(1.0))
    .flags(kPure)
    .typeRule(addmm);
KC_REGISTER_OP(baddbmm_, "torch.baddbmm")
    .describe("beta * input + alpha * (batch1 @ batch2), batched")
    .input("input")
    .input("batch1")
    .input("batch2")
    .attr("beta", AttrValue::real(1.0))
    .attr("alpha", AttrValue::real(1.0))
    .flags(kPure)
    .typeRule(baddbmm);
KC_REGISTER_OP(mv_, "torch.mv")
    .describe("matrix @ vector")
    .input("input")
    .input("vec")
    .flags(kPure)
    .typeRule(mv);

} // namespace
