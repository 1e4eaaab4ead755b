//===- ScaleTest.cpp - Cost linear in the model's size --------------------===//
//
// Models that are wide or long where real ones are not: a torch.cat of
// 100,000 inputs, one pnnx.Expression over 100,000 operands, a chain of
// 100,000 ops, a chain of 100,000 expressions (which merge-expressions
// merges). Each is imported, optimized (-O) and run at n/10 and at n.
// Linear cost makes the larger 10 times dearer, quadratic 100 times: the
// bound is 40 (generous against a loaded machine), with the values checked
// and the peak memory growth bounded per op. Last, every registered pass,
// the printer and the interpreter on 100,000-node chains (no recursion).
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Parser.h"
#include "kc/IR/Printer.h"
#include "kc/IR/TypeInference.h"
#include "kc/Import/Importer.h"
#include "kc/Pass/PassManager.h"
#include "kc/Runtime/Interpreter.h"

#include <doctest/doctest.h>

#include <ctime>
#include <functional>
#include <string>
#include <sys/resource.h>

using namespace kc;

namespace {

constexpr int kOps = 100000;

/// Peak resident memory of the process so far, in bytes.
size_t peakRss() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return size_t(u.ru_maxrss) * 1024;
}

struct Model {
  std::string param;
  std::vector<rt::Tensor> inputs;
  /// Checks the single output.
  std::function<void(const rt::Tensor &)> check;
};

rt::Tensor filled(std::vector<int64_t> shape, const std::vector<float> &values) {
  rt::Tensor t = rt::Tensor::empty(DType::F32, shape);
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

/// torch.cat of n inputs x_i = [i, -i] along dim 0.
Model wideCat(int n) {
  Model m;
  m.param = "7767517\n" + std::to_string(n + 2) + " " + std::to_string(n + 1) + "\n";
  std::string ins;
  for (int i = 0; i < n; ++i) {
    std::string x = "x" + std::to_string(i);
    m.param += "pnnx.Input in" + std::to_string(i) + " 0 1 " + x + " #" + x + "=(1,2)f32\n";
    ins += " " + x;
    m.inputs.push_back(filled({1, 2}, {float(i), -float(i)}));
  }
  m.param += "torch.cat cat " + std::to_string(n) + " 1" + ins + " y dim=0 #y=(" +
             std::to_string(n) + ",2)f32\npnnx.Output out 1 0 y\n";
  m.check = [n](const rt::Tensor &y) {
    REQUIRE(y.numel() == 2 * int64_t(n));
    int bad = 0;
    for (int i = 0; i < n; ++i)
      bad += y.data<float>()[2 * i] != float(i) || y.data<float>()[2 * i + 1] != -float(i);
    CHECK(bad == 0);
  };
  return m;
}

/// A balanced add() tree over operands [lo, hi).
void addTree(std::string &out, int lo, int hi) {
  if (hi - lo == 1) {
    out += "@" + std::to_string(lo);
    return;
  }
  int mid = (lo + hi) / 2;
  out += "add(";
  addTree(out, lo, mid);
  out += ",";
  addTree(out, mid, hi);
  out += ")";
}

/// One expression summing n inputs x_i = [1, i % 7]: small integers, so
/// every partial sum is exact in f32.
Model wideExpression(int n) {
  Model m;
  m.param = "7767517\n" + std::to_string(n + 2) + " " + std::to_string(n + 1) + "\n";
  std::string ins;
  for (int i = 0; i < n; ++i) {
    std::string x = "x" + std::to_string(i);
    m.param += "pnnx.Input in" + std::to_string(i) + " 0 1 " + x + " #" + x + "=(2)f32\n";
    ins += " " + x;
    m.inputs.push_back(filled({2}, {1.f, float(i % 7)}));
  }
  std::string expr;
  addTree(expr, 0, n);
  m.param += "pnnx.Expression e " + std::to_string(n) + " 1" + ins + " y expr=" + expr +
             " #y=(2)f32\npnnx.Output out 1 0 y\n";
  double sevens = 0;
  for (int i = 0; i < n; ++i)
    sevens += i % 7;
  m.check = [n, sevens](const rt::Tensor &y) {
    REQUIRE(y.numel() == 2);
    CHECK(y.data<float>()[0] == float(n));
    CHECK(y.data<float>()[1] == float(sevens));
  };
  return m;
}

/// n ops alternating nn.ReLU and Tensor.reshape (a view) on a 2x3 tensor.
Model longChain(int n) {
  Model m;
  m.param = "7767517\n" + std::to_string(n + 2) + " " + std::to_string(n + 1) +
            "\npnnx.Input in 0 1 v0 #v0=(2,3)f32\n";
  for (int i = 0; i < n; ++i) {
    std::string a = "v" + std::to_string(i), b = "v" + std::to_string(i + 1);
    // The reshapes alternate (3,2) and (2,3); each ReLU keeps its input's.
    std::string shape = i % 4 == 1 || i % 4 == 2 ? "(3,2)" : "(2,3)";
    std::string op = i % 2 == 0 ? "nn.ReLU r" : "Tensor.reshape s";
    m.param += op + std::to_string(i) + " 1 1 " + a + " " + b + (i % 2 ? " shape=" + shape : "") +
               " #" + b + "=" + shape + "f32\n";
  }
  m.param += "pnnx.Output out 1 0 v" + std::to_string(n) + "\n";
  m.inputs.push_back(filled({2, 3}, {-1, 2, -3, 4, -5, 6}));
  m.check = [](const rt::Tensor &y) {
    REQUIRE(y.numel() == 6);
    std::vector<float> want = {0, 2, 0, 4, 0, 6};
    CHECK(std::vector<float>(y.data<float>(), y.data<float>() + 6) == want);
  };
  return m;
}

/// n chained expressions y_{i+1} = add(y_i, 1) from x = [0, 5]: the output
/// is x + n, exact in f32.
Model expressionChain(int n) {
  Model m;
  m.param = "7767517\n" + std::to_string(n + 2) + " " + std::to_string(n + 1) +
            "\npnnx.Input in 0 1 v0 #v0=(2)f32\n";
  for (int i = 0; i < n; ++i) {
    std::string a = "v" + std::to_string(i), b = "v" + std::to_string(i + 1);
    m.param += "pnnx.Expression e" + std::to_string(i) + " 1 1 " + a + " " + b +
               " expr=add(@0,1) #" + b + "=(2)f32\n";
  }
  m.param += "pnnx.Output out 1 0 v" + std::to_string(n) + "\n";
  m.inputs.push_back(filled({2}, {0, 5}));
  m.check = [n](const rt::Tensor &y) {
    REQUIRE(y.numel() == 2);
    CHECK(y.data<float>()[0] == float(n));
    CHECK(y.data<float>()[1] == float(n + 5));
  };
  return m;
}

/// CPU seconds used by the process: unlike wall time, not inflated when
/// other work shares the machine.
double cpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

/// Import, infer, -O, compile, run and check; returns the CPU seconds taken.
double importOptimizeRun(const Model &model) {
  double start = cpuSeconds();
  auto m = importPnnxFromBuffer(model.param, "scale.param", nullptr);
  REQUIRE_MESSAGE(bool(m), llvm::toString(m.takeError()));
  REQUIRE(!inferTypes(**m));
  PassManager pm;
  REQUIRE(!pm.addPipeline(defaultPipeline()));
  if (auto e = pm.run(**m))
    FAIL(llvm::toString(std::move(e)));
  auto compiled = rt::CompiledModel::compile(**m);
  REQUIRE_MESSAGE(bool(compiled), llvm::toString(compiled.takeError()));
  auto out = (*compiled)->run(model.inputs);
  REQUIRE_MESSAGE(bool(out), llvm::toString(out.takeError()));
  REQUIRE(out->size() == 1);
  model.check((*out)[0]);
  return cpuSeconds() - start;
}

void checkLinear(const char *what, Model (*make)(int)) {
  double small = importOptimizeRun(make(kOps / 10));
  size_t before = peakRss();
  double large = importOptimizeRun(make(kOps));
  size_t grown = peakRss() - before;
  MESSAGE(std::string(what) << ": " << kOps / 10 << " in " << small << " s, " << kOps << " in "
                            << large << " s, peak memory +" << grown / (1 << 20) << " MiB");
  // 0.05 s absorbs timer noise when the small case is very fast.
  CHECK(large <= 40 * std::max(small, 0.05));
  // Quadratic memory would be gigabytes (docs/performance.md has figures).
  CHECK(grown <= size_t(kOps) * 16 * 1024);
}

} // namespace

TEST_CASE("scale: torch.cat of 100,000 inputs") { checkLinear("cat", wideCat); }
TEST_CASE("scale: an expression of 100,000 operands") { checkLinear("expression", wideExpression); }
TEST_CASE("scale: a chain of 100,000 ops") { checkLinear("chain", longChain); }
// Each link uses its input three times: lowered as a tree, the chain's
// program would be 3^16 (43 million) instructions; with values reused, 80.
TEST_CASE("scale: 16 chained expressions that use their input thrice") {
  const int k = 16;
  Model m = expressionChain(k);
  for (size_t at; (at = m.param.find("add(@0,1)")) != std::string::npos;)
    m.param.replace(at, 9, "add(mul(@0,@0),@0)");
  m.inputs = {filled({2}, {-0.5f, -0.25f})};
  double want[2] = {-0.5, -0.25};
  for (int i = 0; i < k; ++i)
    for (double &x : want)
      x = float(float(x * x) + x);
  m.check = [want](const rt::Tensor &y) {
    REQUIRE(y.numel() == 2);
    CHECK(y.data<float>()[0] == doctest::Approx(want[0]).epsilon(1e-6));
    CHECK(y.data<float>()[1] == doctest::Approx(want[1]).epsilon(1e-6));
  };
  double seconds = importOptimizeRun(m);
  MESSAGE("shared chain of " << k << ": " << seconds << " s");
  CHECK(seconds < 10);
}

TEST_CASE("scale: a chain of 100,000 expressions") {
  checkLinear("expression chain", expressionChain);
}

/// A chain of kOps ReLUs in main feeding a primitive function whose body
/// is a chain of kOps negations: deep where pnnx's graphs are wide.
static std::string deepModule() {
  std::string t = "fn @e(%a: f32[4]) -> f32[4] primitive {\n";
  std::string prev = "%a";
  for (int i = 0; i < kOps; ++i) {
    t += "  %" + std::to_string(i) + " = neg(" + prev + ") : f32[4]\n";
    prev = "%" + std::to_string(i);
  }
  t += "  return " + prev + "\n}\nfn @main(%x: f32[4]) -> f32[4] {\n";
  prev = "%x";
  for (int i = 0; i < kOps; ++i) {
    t += "  %" + std::to_string(i) + " = nn.ReLU(" + prev + ") : f32[4]\n";
    prev = "%" + std::to_string(i);
  }
  t += "  %" + std::to_string(kOps) + " = @e(" + prev + ") : f32[4]\n";
  return t + "  return %" + std::to_string(kOps) + "\n}\n";
}

// Passes walk with the mixed-mode visitors and mutators, which expand
// dataflow with a stack of their own; recursive walks would overflow the
// thread's stack here. Every registered pass, then the printer and the
// interpreter, on 100,000-node chains in main and in an expression.
TEST_CASE("scale: every pass on a 100,000-node chain and a 100,000-node expression") {
  const std::string text = deepModule();
  const rt::Tensor x = filled({4}, {-1.5f, 0.f, 2.f, 3.25f});
  for (const PassRegistry::Entry *pass : PassRegistry::global().all()) {
    CAPTURE(pass->name);
    double start = cpuSeconds();
    auto m = parseModule(text, "deep.kc");
    REQUIRE_MESSAGE(bool(m), llvm::toString(m.takeError()));
    REQUIRE(!inferTypes(**m));
    PassManager pm;
    REQUIRE(!pm.addPipeline(pass->name));
    if (auto e = pm.run(**m))
      FAIL(llvm::toString(std::move(e)));
    CHECK(printModule(**m).size() > size_t(kOps) * 10);
    auto compiled = rt::CompiledModel::compile(**m);
    REQUIRE_MESSAGE(bool(compiled), llvm::toString(compiled.takeError()));
    auto out = (*compiled)->run({x});
    REQUIRE_MESSAGE(bool(out), llvm::toString(out.takeError()));
    // An even number of negations of relu(x).
    const float *y = (*out)[0].data<float>();
    CHECK(y[0] == 0.f);
    CHECK(y[1] == 0.f);
    CHECK(y[2] == 2.f);
    CHECK(y[3] == 3.25f);
    MESSAGE(pass->name << ": " << cpuSeconds() - start << " s");
  }
}

