//===- ModuleTest.cpp - Calls name functions through the module -----------===//
//
// A call of a function holds a GlobalVar (the function's name); the module
// maps it to the function. Replacing a function is then one Module::add:
// every call of it, in main and in a fused group, runs the new body, while
// a copy of the module made before keeps the old one.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Parser.h"
#include "kc/IR/Printer.h"
#include "kc/IR/StructuralHash.h"
#include "kc/IR/TypeInference.h"
#include "kc/IR/Verifier.h"
#include "kc/Runtime/Interpreter.h"

#include <doctest/doctest.h>

#include <cstring>

using namespace kc;

namespace {

// @scale is called twice from main and once from a fused group.
const char *kText = R"(fn @scale(%a: f32[4]) -> f32[4] primitive {
  %0 = mul(%a, 2.0:f32) : f32[4]
  return %0
}

fn @group(%x0: f32[4]) -> f32[4] fused {
  %0 = @scale(%x0) : f32[4]
  %1 = nn.ReLU(%0) : f32[4]
  return %1
}

fn @main(%x: f32[4]) -> f32[4] {
  %0 = @scale(%x) : f32[4]
  %1 = @scale(%0) : f32[4]
  %2 = @group(%1) : f32[4]
  return %2
}
)";

ModulePtr parsed() {
  auto m = parseModule(kText, "module.kc");
  REQUIRE_MESSAGE(bool(m), (m ? "" : llvm::toString(m.takeError())));
  REQUIRE(!bool(inferTypes(**m)));
  REQUIRE(!bool(verifyModule(**m)));
  return std::move(*m);
}

std::vector<float> run(const Module &m, std::vector<float> in) {
  auto cm = rt::CompiledModel::compile(m, {});
  REQUIRE_MESSAGE(bool(cm), (cm ? "" : llvm::toString(cm.takeError())));
  rt::Tensor x = rt::Tensor::empty(DType::F32, {int64_t(in.size())});
  std::memcpy(x.data<float>(), in.data(), in.size() * sizeof(float));
  auto out = (*cm)->run({x});
  REQUIRE_MESSAGE(bool(out), (out ? "" : llvm::toString(out.takeError())));
  const rt::Tensor &y = (*out)[0];
  return std::vector<float>(y.data<float>(), y.data<float>() + in.size());
}

/// @scale's body with mul(%a, 2) made mul(%a, factor).
Function rescaled(const Module &m, double factor) {
  Function f = m.lookup("scale");
  const Var &a = f->params()[0];
  return withBody(f, f->params(), call("mul", {a, floatConstant(factor)}));
}

} // namespace

TEST_CASE("module: a call names its function; the module resolves it") {
  ModulePtr m = parsed();
  const auto *call0 = llvm::cast<CallNode>(m->lookup("group")->body().get());
  const auto *inner = llvm::cast<CallNode>(call0->arg(0).get());
  REQUIRE(inner->global());
  CHECK(inner->global()->name() == "scale");
  CHECK(m->callee(*inner) == m->lookup("scale").get());
  CHECK(m->callee(*call0) == nullptr); // nn.ReLU is an op
  // x * 2 * 2 * 2, then ReLU.
  CHECK(run(*m, {1, -1, 0.5f, 3}) == std::vector<float>{8, 0, 4, 24});
}

TEST_CASE("module: replacing a function is one add, seen by every call") {
  ModulePtr before = parsed();
  ModulePtr after = before->clone(); // shares every node, GlobalVars included
  after->add(rescaled(*after, 3.0));
  REQUIRE(!bool(inferTypes(*after)));
  REQUIRE(!bool(verifyModule(*after)));
  // Three calls of @scale (two in main, one in @group) now multiply by 3;
  // the module copied before still multiplies by 2.
  CHECK(run(*after, {1, -1, 0.5f, 3}) == std::vector<float>{27, 0, 13.5f, 81});
  CHECK(run(*before, {1, -1, 0.5f, 3}) == std::vector<float>{8, 0, 4, 24});
  std::string text;
  llvm::raw_string_ostream os(text);
  printModule(*after, os);
  CHECK(os.str().find("mul(%a, 3.0:f32)") != std::string::npos);
  CHECK(os.str().find("2.0:f32") == std::string::npos);
}

TEST_CASE("module: a call of a function the module lacks is refused") {
  ModulePtr m = parsed();
  REQUIRE(m->remove("scale"));
  llvm::Error e = verifyModule(*m);
  REQUIRE(bool(e));
  CHECK(llvm::toString(std::move(e)).find("calls @scale, which is not in the module") !=
        std::string::npos);
}

TEST_CASE("module: calls of one function through two GlobalVars are the same call") {
  Var x = var("x", tensorType(DType::F32, {4}));
  Function f = make<const FunctionNode>("f", std::vector<Var>{x}, Expr(x), Type(), true);
  Call a = call(f, {x}), b = call(f, {x});
  REQUIRE(a->callee().get() != b->callee().get()); // two GlobalVar nodes
  CHECK(callHash(*a) == callHash(*b));
  CHECK(sameCall(*a, *b));
  Function g = make<const FunctionNode>("g", std::vector<Var>{x}, Expr(x), Type(), true);
  Call c = call(g, {x});
  CHECK_FALSE(sameCall(*a, *c));
}
