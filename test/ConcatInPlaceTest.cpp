//===- ConcatInPlaceTest.cpp - Concatenations written by their producers --===//
//
// Where a torch.cat's pieces lie end to end in its result, their producers
// write them in place and the cat's step goes (ConcatInPlace.cpp). Each
// model here is checked against values worked out from its input, and for
// which cats still run as steps.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Parser.h"
#include "kc/IR/TypeInference.h"
#include "kc/Runtime/Interpreter.h"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>

using namespace kc;

namespace {

using Values = std::vector<float>;

struct Ran {
  std::vector<Values> outputs;
  int catSteps = 0; ///< steps that run a torch.cat (each cat is named)
};

/// `text` compiled (with fusion unless `fuse` is false) and run twice on
/// x of `shape` (the second run reuses the first's memory).
Ran run(const std::string &text, const rt::Shape &shape, const Values &x, bool fuse = true) {
  auto m = parseModule(text, "cat.kc");
  REQUIRE_MESSAGE(bool(m), (m ? "" : llvm::toString(m.takeError())));
  llvm::Error e = inferTypes(**m);
  REQUIRE_MESSAGE(!e, llvm::toString(std::move(e)));
  rt::CompileOptions opts;
  opts.profile = true;
  opts.fuseActivations = fuse;
  auto cm = rt::CompiledModel::compile(**m, opts);
  REQUIRE_MESSAGE(bool(cm), (cm ? "" : llvm::toString(cm.takeError())));
  rt::Tensor in = rt::Tensor::empty(DType::F32, shape);
  std::copy(x.begin(), x.end(), in.data<float>());
  Ran r;
  for (int i = 0; i < 2; ++i) {
    auto out = (*cm)->run({in});
    REQUIRE_MESSAGE(bool(out), (out ? "" : llvm::toString(out.takeError())));
    r.outputs.clear();
    for (const rt::Tensor &t : *out)
      r.outputs.emplace_back(t.data<float>(), t.data<float>() + t.numel());
  }
  for (const rt::OpProfile &p : (*cm)->profile())
    r.catSteps += p.op.find("torch.cat") != std::string::npos;
  return r;
}

void expectValues(const Values &got, const std::vector<double> &want, const char *what) {
  CAPTURE(what);
  REQUIRE(got.size() == want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    bad += std::fabs(double(got[i]) - want[i]) > 1e-6 + 1e-6 * std::fabs(want[i]);
  CHECK(bad == 0);
}

double relu(double v) { return v > 0 ? v : 0; }
double sigmoid(double v) { return 1 / (1 + std::exp(-v)); }

/// Each function of `pieces` applied to every value of x, the pieces one
/// after another: a channel concatenation of elementwise results of x.
std::vector<double> joined(const std::vector<std::function<double(double)>> &pieces,
                           const Values &x) {
  std::vector<double> r;
  for (const auto &f : pieces)
    for (float v : x)
      r.push_back(f(double(v)));
  return r;
}

Values uniformValues(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  Values v(n);
  for (float &f : v)
    f = d(rng);
  return v;
}

} // namespace

TEST_CASE("concat in place: pieces written by their producers, read after the cat too") {
  const char *text = R"(fn @main(%x: f32[1,2,4,6]) -> ? {
  %0 = nn.ReLU(%x) : ?
  %1 = nn.Tanh(%x) : ?
  %2 = torch.cat(%0, %1) {dim=1} : ? name("cat1")
  %3 = nn.Sigmoid(%2) : ?
  %4 = nn.Sigmoid(%0) : ?
  %5 = (%3, %4) : ?
  return %5
}
)";
  Values x = uniformValues(48, 1);
  auto tanhf = [](double v) { return std::tanh(v); };
  std::vector<double> want0 = joined({[](double v) { return sigmoid(relu(v)); },
                                      [&](double v) { return sigmoid(tanhf(v)); }},
                                     x),
                      want1 = joined({[](double v) { return sigmoid(relu(v)); }}, x);
  for (bool fuse : {true, false}) {
    CAPTURE(fuse);
    Ran r = run(text, {1, 2, 4, 6}, x, fuse);
    REQUIRE(r.outputs.size() == 2);
    expectValues(r.outputs[0], want0, "sigmoid of the cat");
    expectValues(r.outputs[1], want1, "a piece read after the cat");
    CHECK(r.catSteps == (fuse ? 0 : 1));
  }
}

TEST_CASE("concat in place: values made between the pieces keep out of the cat's bytes") {
  // The cat's bytes are held from its first piece's step: the values made
  // between the two pieces (%1, larger than the cat and gone before the
  // second piece) must not be placed over the first. Max-pooling the
  // nearest x2 upsampling gives x back.
  const char *text = R"(fn @main(%x: f32[1,2,4,6]) -> ? {
  %0 = nn.ReLU(%x) : ?
  %1 = nn.Upsample(%x) {mode="nearest", scale_factor=[2.0,2.0]} : ?
  %2 = nn.MaxPool2d(%1) {kernel_size=[2,2], stride=[2,2]} : ?
  %3 = nn.Sigmoid(%2) : ?
  %4 = torch.cat(%0, %3) {dim=1} : ? name("cat")
  %5 = nn.Tanh(%4) : ?
  return %5
}
)";
  Values x = uniformValues(48, 4);
  Ran r = run(text, {1, 2, 4, 6}, x);
  expectValues(r.outputs[0],
               joined({[](double v) { return std::tanh(relu(v)); },
                       [](double v) { return std::tanh(sigmoid(v)); }},
                      x),
               "cat of pieces made apart");
  CHECK(r.catSteps == 0);
}

TEST_CASE("concat in place: nested cats and a densenet block's growing cats") {
  // %3 = cat(a, b) and %4 = cat(a, b, c): the longer places a, b and c,
  // the shorter is then a view of its first two. %6 = cat(cat(a, b), c).
  const char *text = R"(fn @main(%x: f32[1,3,5,4]) -> ? {
  %0 = nn.ReLU(%x) : ?
  %1 = nn.Tanh(%x) : ?
  %2 = nn.Sigmoid(%x) : ?
  %3 = torch.cat(%0, %1) {dim=1} : ? name("cat2")
  %4 = torch.cat(%0, %1, %2) {dim=1} : ? name("cat3")
  %5 = nn.Tanh(%3) : ?
  %6 = nn.Sigmoid(%4) : ?
  %7 = nn.ReLU(%x) : ?
  %8 = nn.Hardswish(%x) : ?
  %9 = torch.cat(%7, %8) {dim=1} : ? name("cat4")
  %10 = nn.Tanh(%x) : ?
  %11 = torch.cat(%9, %10) {dim=1} : ? name("cat5")
  %12 = nn.Sigmoid(%11) : ?
  %13 = (%5, %6, %12) : ?
  return %13
}
)";
  Values x = uniformValues(60, 2);
  auto th = [](double v) { return std::tanh(v); };
  auto hs = [](double v) { return v * std::min(std::max(v + 3, 0.0), 6.0) / 6; };
  std::vector<double> a = joined({[&](double v) { return th(relu(v)); },
                                  [&](double v) { return th(th(v)); }},
                                 x),
                      b = joined({[](double v) { return sigmoid(relu(v)); },
                                  [&](double v) { return sigmoid(th(v)); },
                                  [](double v) { return sigmoid(sigmoid(v)); }},
                                 x),
                      c = joined({[](double v) { return sigmoid(relu(v)); },
                                  [&](double v) { return sigmoid(hs(v)); },
                                  [&](double v) { return sigmoid(th(v)); }},
                                 x);
  Ran r = run(text, {1, 3, 5, 4}, x);
  REQUIRE(r.outputs.size() == 3);
  expectValues(r.outputs[0], a, "the shorter cat, a view");
  expectValues(r.outputs[1], b, "the longer cat");
  expectValues(r.outputs[2], c, "cat of a cat");
  CHECK(r.catSteps == 0);
}

TEST_CASE("concat in place: cats whose pieces cannot be placed still copy") {
  Values x = uniformValues(48, 3);
  SUBCASE("along the last dim: pieces interleave") {
    Ran r = run(R"(fn @main(%x: f32[1,2,4,6]) -> ? {
  %0 = nn.ReLU(%x) : ?
  %1 = nn.Sigmoid(%x) : ?
  %2 = torch.cat(%0, %1) {dim=-1} : ? name("cat6")
  %3 = nn.Tanh(%2) : ?
  return %3
}
)",
                {1, 2, 4, 6}, x);
    std::vector<double> want;
    for (size_t row = 0; row < 8; ++row) {
      for (size_t i = 0; i < 6; ++i)
        want.push_back(std::tanh(relu(x[row * 6 + i])));
      for (size_t i = 0; i < 6; ++i)
        want.push_back(std::tanh(sigmoid(x[row * 6 + i])));
    }
    expectValues(r.outputs[0], want, "cat along W");
    CHECK(r.catSteps == 1);
  }
  SUBCASE("one piece twice, a model input, a model output") {
    Ran r = run(R"(fn @main(%x: f32[1,2,4,6]) -> ? {
  %0 = nn.ReLU(%x) : ?
  %1 = torch.cat(%0, %0) {dim=1} : ? name("cat7")
  %2 = nn.Tanh(%1) : ?
  %3 = torch.cat(%x, %0) {dim=1} : ? name("cat8")
  %4 = nn.Tanh(%3) : ?
  %5 = nn.Sigmoid(%x) : ?
  %6 = torch.cat(%5, %0) {dim=1} : ? name("cat9")
  %7 = nn.Tanh(%6) : ?
  %8 = (%2, %4, %7, %5) : ?
  return %8
}
)",
                {1, 2, 4, 6}, x);
    auto reluThenTanh = [](double v) { return std::tanh(relu(v)); };
    expectValues(r.outputs[0], joined({reluThenTanh, reluThenTanh}, x), "cat(a, a)");
    expectValues(r.outputs[1], joined({[](double v) { return std::tanh(v); }, reluThenTanh}, x),
                 "cat(input, a)");
    expectValues(r.outputs[2],
                 joined({[](double v) { return std::tanh(sigmoid(v)); }, reluThenTanh}, x),
                 "cat(output, a)");
    expectValues(r.outputs[3], joined({[](double v) { return sigmoid(v); }}, x),
                 "the output piece");
    CHECK(r.catSteps == 3);
  }
}
