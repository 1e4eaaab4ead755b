//===- ExprFunctionTest.cpp - The one table of expression functions -------===//
//
// kc/IR/ExprFunctions.def lists every function an expression may call; the
// op registry, the parser's arities, folding and the expression kernel all
// come from it. These tests walk the table against each consumer, and pin
// values on non-finite operands that folding (in double) and the kernel (in
// f32) compute from the table's one formula: PyTorch's values.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Attr.h"
#include "kc/IR/ExprFunctions.h"
#include "kc/IR/Op.h"
#include "kc/IR/ScalarEval.h"
#include "kc/IR/TypeInference.h"
#include "kc/Import/ExpressionParser.h"
#include "kc/Import/Importer.h"
#include "kc/Runtime/Interpreter.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace kc;

namespace {

struct Entry {
  const char *name;
  int arity;
  bool floatValue;
};

std::vector<Entry> table() {
  return {
#define KC_EXPR_FN(Id, Name, Arity, Flags, Doc, Value) {Name, Arity, true},
#define KC_EXPR_ALIAS(Id, Name, Arity, Flags, Doc, Of) {Name, Arity, true},
#define KC_EXPR_OTHER(Id, Name, Arity, Flags, Doc) {Name, Arity, false},
#include "kc/IR/ExprFunctions.def"
  };
}

/// f(@0, @1) over two f32 inputs of n values, run by the expression kernel.
std::vector<float> runBinary(const std::string &f, const std::vector<float> &a,
                             const std::vector<float> &b) {
  std::string n = std::to_string(a.size());
  std::string text = "7767517\n4 4\n"
                     "pnnx.Input      in0  0 1 0 #0=(" +
                     n +
                     ")f32\n"
                     "pnnx.Input      in1  0 1 1 #1=(" +
                     n +
                     ")f32\n"
                     "pnnx.Expression e    2 1 0 1 2 expr=" +
                     f + "(@0,@1) #2=(" + n +
                     ")f32\n"
                     "pnnx.Output     out  1 0 2\n";
  auto m = importPnnxFromBuffer(text, "e.pnnx.param", nullptr);
  REQUIRE_MESSAGE(bool(m), (m ? "" : llvm::toString(m.takeError())));
  llvm::Error e = inferTypes(**m);
  REQUIRE_MESSAGE(!e, llvm::toString(std::move(e)));
  auto cm = rt::CompiledModel::compile(**m);
  REQUIRE_MESSAGE(bool(cm), (cm ? "" : llvm::toString(cm.takeError())));
  rt::Tensor x = rt::Tensor::empty(DType::F32, {int64_t(a.size())});
  rt::Tensor y = rt::Tensor::empty(DType::F32, {int64_t(b.size())});
  std::copy(a.begin(), a.end(), x.data<float>());
  std::copy(b.begin(), b.end(), y.data<float>());
  auto r = (*cm)->run({x, y});
  REQUIRE_MESSAGE(bool(r), (r ? "" : llvm::toString(r.takeError())));
  const float *p = (*r)[0].data<float>();
  return std::vector<float>(p, p + a.size());
}

/// Equal, NaN equal to NaN.
bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

} // namespace

TEST_CASE("expression functions: the registry and the parser take the table's names") {
  auto all = table();
  CHECK(all.size() >= 68); // 19 binary, 30 unary, 19 casts
  for (const Entry &e : all) {
    INFO("function " << e.name);
    const OpDef *op = OpRegistry::global().lookup(e.name);
    REQUIRE(op);
    CHECK(op->is(OpFlags::ExprOp));
    CHECK(op->arity() == e.arity);
    CHECK(expressionArity(e.name) == e.arity);
    const ExprFunction *f = findExprFunction(e.name);
    REQUIRE(f);
    CHECK((f->value != nullptr) == e.floatValue);
  }
  // Every cast the dtype parser knows is a function of the table.
  for (const char *cast :
       {"torch.float", "torch.float64", "torch.half", "torch.bfloat16", "torch.int", "torch.long",
        "torch.int16", "torch.int8", "torch.uint8", "torch.bool", "torch.complex64"})
    CHECK_MESSAGE(findExprFunction(cast), cast);
  CHECK(findExprFunction("size") == nullptr); // a form of its own, not elementwise
  CHECK(expressionArity("size") == -1);
  CHECK(expressionArity("no_such_function") == 0);
}

TEST_CASE("expression functions: folding and the kernel give PyTorch's values from one formula") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  // torch.<f>(torch.tensor(a), torch.tensor(b)) for each pair.
  struct Case {
    const char *f;
    double a, b, want;
  };
  const Case cases[] = {
      {"logaddexp", inf, inf, inf},
      {"logaddexp", -inf, -inf, -inf},
      {"logaddexp", inf, 1, inf},
      {"logaddexp", -inf, 2, 2},
      {"logaddexp", inf, nan, nan},
      {"logaddexp", 0, 0, std::log(2.0)},
      {"max", nan, 1, nan},
      {"max", 1, nan, nan},
      {"minimum", 2, nan, nan},
      {"min", -inf, 3, -inf},
      {"remainder", -3, 2, 1},
      {"remainder", 3, -2, -1},
      {"fmod", -3, 2, -1},
      {"floor_divide", -7, 2, -4},
      {"pow", -3, 2, 9},
      {"atan2", 1, 1, std::atan2(1.0, 1.0)},
  };
  std::vector<float> a, b;
  for (const Case &c : cases) {
    a.push_back(float(c.a));
    b.push_back(float(c.b));
  }
  for (const Case &c : cases) {
    INFO(c.f << "(" << c.a << ", " << c.b << ")");
    auto folded = evalScalarOp(c.f, {AttrValue::real(c.a), AttrValue::real(c.b)});
    REQUIRE(folded);
    CHECK(same(folded->getNumber(), c.want));
    // The same function over every pair at once, in f32.
    auto ran = runBinary(c.f, a, b);
    size_t i = size_t(&c - cases);
    bool close = same(ran[i], float(c.want)) ||
                 std::fabs(ran[i] - float(c.want)) <= 1e-6f * std::fabs(float(c.want));
    CHECK_MESSAGE(close, "the kernel gives " << ran[i]);
  }
}
