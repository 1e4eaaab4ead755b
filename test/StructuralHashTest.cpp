//===- StructuralHashTest.cpp - Hashes agree with equality ----------------===//
//
// cse merges what kc/IR/StructuralHash.h calls the same: equal values must
// hash alike (or duplicates survive), and values that differ must not
// compare equal (or different computations merge).
//
//===----------------------------------------------------------------------===//
#include "kc/IR/StructuralHash.h"
#include "kc/IR/Type.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace kc;

TEST_CASE("structural hash: attribute values hash as they compare") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Pairs that are equal: the hashes agree.
  std::vector<std::pair<AttrValue, AttrValue>> same = {
      {AttrValue::real(nan), AttrValue::real(-nan)},
      {AttrValue::real(2.5), AttrValue::real(2.5)},
      {AttrValue::floatList({1.0, nan}), AttrValue::floatList({1.0, std::nan("7")})},
      {AttrValue::intList({1, 2, 3}), AttrValue::intList({1, 2, 3})},
      {AttrValue::stringList({"a", "b"}), AttrValue::stringList({"a", "b"})},
      {AttrValue::complex({1.0, -2.0}), AttrValue::complex({1.0, -2.0})},
      {AttrValue::none(), AttrValue::none()},
  };
  for (auto &[a, b] : same) {
    CHECK(a == b);
    CHECK(hash_value(a) == hash_value(b));
  }
  // Pairs that differ: never equal, and here their hashes differ too.
  std::vector<std::pair<AttrValue, AttrValue>> apart = {
      {AttrValue::real(0.0), AttrValue::real(-0.0)},
      {AttrValue::integer(2), AttrValue::real(2.0)},
      {AttrValue::intList({1, 2}), AttrValue::intList({2, 1})},
      {AttrValue::stringList({"ab"}), AttrValue::stringList({"a", "b"})},
      {AttrValue::boolean(true), AttrValue::integer(1)},
      {AttrValue::complex({1.0, 2.0}), AttrValue::complexList({{1.0, 2.0}, {0.0, 0.0}})},
  };
  for (auto &[a, b] : apart) {
    CHECK_FALSE(a == b);
    CHECK(hash_value(a) != hash_value(b));
  }
}

TEST_CASE("structural hash: calls by callee, operands, keys and attributes") {
  Var x = var("x", tensorType(DType::F32, {4})), y = var("y", tensorType(DType::F32, {4}));
  Call a = call("nn.LeakyReLU", {x}, Attrs{{"negative_slope", AttrValue::real(0.1)}});
  Call b = call("nn.LeakyReLU", {x}, Attrs{{"negative_slope", AttrValue::real(0.1)}});
  CHECK(sameCall(*a, *b));
  CHECK(callHash(*a) == callHash(*b));
  Call otherSlope = call("nn.LeakyReLU", {x}, Attrs{{"negative_slope", AttrValue::real(0.2)}});
  Call otherOperand = call("nn.LeakyReLU", {y}, Attrs{{"negative_slope", AttrValue::real(0.1)}});
  Call otherOp = call("nn.ReLU", {x});
  for (const Call &c : {otherSlope, otherOperand, otherOp})
    CHECK_FALSE(sameCall(*a, *c));
}

TEST_CASE("structural hash: literals by value and type") {
  Constant two = scalarConstant(AttrValue::real(2.0), tensorType(DType::F32, {}));
  Constant twoAgain = scalarConstant(AttrValue::real(2.0), tensorType(DType::F32, {}));
  Constant twoF64 = scalarConstant(AttrValue::real(2.0), tensorType(DType::F64, {}));
  Constant twoInt = scalarConstant(AttrValue::integer(2), tensorType(DType::F32, {}));
  CHECK(sameLiteral(*two, *twoAgain));
  CHECK(literalHash(*two) == literalHash(*twoAgain));
  CHECK_FALSE(sameLiteral(*two, *twoF64));
  CHECK(literalHash(*two) != literalHash(*twoF64));
  CHECK_FALSE(sameLiteral(*two, *twoInt));
}
