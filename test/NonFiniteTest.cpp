//===- NonFiniteTest.cpp - NaN and infinities as PyTorch has them ---------===//
//
// Every activation kc runs, alone and fused into the convolution or linear
// layer before it, on NaN, +-inf, +-0 and finite values, against PyTorch
// 1.13's outputs for the same module on the same values (the table below,
// from torch.nn modules). Tolerance for finite values:
// |got - want| <= 1e-6 + 1e-5 * |want| (kc's exp is an approximation within
// 2 ulp); NaN must be NaN and an infinity the same infinity.
//
//===----------------------------------------------------------------------===//
#include "FuseOps.h"

#include "kc/IR/Expr.h"
#include "kc/IR/Module.h"
#include "kc/IR/Parser.h"
#include "kc/IR/TypeInference.h"
#include "kc/Runtime/Interpreter.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace kc;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// The inputs, in this order, for every case.
const std::vector<float> kInputs = {float(kNaN), float(kInf), -float(kInf), 0.f,
                                    -0.f,        2.f,         -2.f,         0.5f};

struct Case {
  const char *op, *attrs;
  std::vector<double> want; ///< PyTorch's output for kInputs
};

// torch.nn.<Module>(<attrs>)(torch.tensor(kInputs)), PyTorch 1.13.
const std::vector<Case> kCases = {
    {"nn.ReLU", "", {kNaN, kInf, 0.0, 0.0, -0.0, 2.0, 0.0, 0.5}},
    {"nn.ReLU6", "", {kNaN, 6.0, 0.0, 0.0, -0.0, 2.0, 0.0, 0.5}},
    {"nn.Sigmoid",
     "",
     {kNaN, 1.0, 0.0, 0.5, 0.5, 0.8807970285415649, 0.11920291930437088, 0.622459352016449}},
    {"nn.Tanh",
     "",
     {kNaN, 1.0, -1.0, 0.0, -0.0, 0.9640275835990906, -0.9640275835990906, 0.46211716532707214}},
    {"nn.SiLU",
     "",
     {kNaN, kInf, kNaN, 0.0, -0.0, 1.7615940570831299, -0.23840583860874176, 0.3112296760082245}},
    {"nn.Hardswish",
     "",
     {kNaN, kInf, kNaN, 0.0, -0.0, 1.6666666269302368, -0.3333333432674408, 0.2916666567325592}},
    {"nn.Hardsigmoid",
     "",
     {kNaN, 1.0, 0.0, 0.5, 0.5, 0.8333333134651184, 0.1666666716337204, 0.5833333134651184}},
    {"nn.SELU",
     "",
     {kNaN, kInf, -1.7580993175506592, 0.0, 0.0, 2.1014020442962646, -1.5201665163040161,
      0.5253505110740662}},
    {"nn.Mish",
     "",
     {kNaN, kInf, kNaN, 0.0, -0.0, 1.9439589977264404, -0.2525014579296112, 0.37524524331092834}},
    {"nn.Softsign",
     "",
     {kNaN, kNaN, kNaN, 0.0, -0.0, 0.6666666865348816, -0.6666666865348816, 0.3333333432674408}},
    {"nn.LogSigmoid",
     "",
     {kNaN, 0.0, -kInf, -0.6931471824645996, -0.6931471824645996, -0.12692801654338837,
      -2.1269280910491943, -0.4740769863128662}},
    {"nn.Tanhshrink",
     "",
     {kNaN, kInf, -kInf, 0.0, 0.0, 1.0359723567962646, -1.0359723567962646, 0.037882834672927856}},
    {"nn.GELU",
     "",
     {kNaN, kInf, kNaN, 0.0, 0.0, 1.9544999599456787, -0.045500099658966064, 0.3457311987876892}},
    {"nn.GELU",
     "approximate=\"tanh\"",
     {kNaN, kInf, kNaN, 0.0, -0.0, 1.9545977115631104, -0.04540228843688965, 0.3457140028476715}},
    {"nn.LeakyReLU",
     "negative_slope=0.1",
     {kNaN, kInf, -kInf, 0.0, -0.0, 2.0, -0.20000000298023224, 0.5}},
    {"nn.ELU", "alpha=1.5", {kNaN, kInf, -1.5, 0.0, 0.0, 2.0, -1.2969970703125, 0.5}},
    {"nn.CELU", "alpha=0.5", {kNaN, kInf, -0.5, 0.0, 0.0, 2.0, -0.49084219336509705, 0.5}},
    {"nn.Softplus",
     "beta=2.0, threshold=10.0",
     {kNaN, kInf, 0.0, 0.3465735912322998, 0.3465735912322998, 2.0090749263763428,
      0.009074964560568333, 0.65663081407547}},
    {"nn.Hardtanh", "max_val=1.5, min_val=-0.5", {kNaN, 1.5, -0.5, 0.0, -0.0, 1.5, -0.5, 0.5}},
    {"nn.Hardshrink", "lambd=0.5", {kNaN, kInf, -kInf, 0.0, 0.0, 2.0, -2.0, 0.0}},
    // PyTorch's softshrink maps NaN to 0 (it tests x > lambd, then x < -lambd).
    {"nn.Softshrink", "lambd=0.5", {0.0, kInf, -kInf, 0.0, 0.0, 1.5, -1.5, 0.0}},
    {"nn.Threshold", "threshold=0.1, value=20.0", {kNaN, kInf, 20.0, 20.0, 20.0, 2.0, 20.0, 0.5}},
    // One NaN in a softmax's row makes the whole row NaN; so does +inf.
    {"nn.Softmax", "dim=0", {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}},
    {"nn.LogSoftmax", "dim=0", {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}},
    {"nn.Softmin", "dim=0", {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}},
};

/// The activations a convolution or linear layer takes into its epilogue.
const char *const kFusable[] = {"nn.ReLU",    "nn.ReLU6",     "nn.SiLU",
                                "nn.Sigmoid", "nn.Hardswish", "nn.LeakyReLU"};

const Case &caseOf(llvm::StringRef op) {
  for (const Case &c : kCases)
    if (op == c.op)
      return c;
  FAIL("no case for " << op.str());
  return kCases[0];
}

/// n values: kInputs repeated, so that vector steps and tails both see each.
std::vector<float> cycled(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = kInputs[i % kInputs.size()];
  return v;
}

void expectLikeTorch(const rt::Tensor &got, const Case &c, const std::string &what) {
  INFO(what);
  REQUIRE(got.dtype() == DType::F32);
  const float *g = got.data<float>();
  int bad = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double want = c.want[size_t(i) % c.want.size()], v = g[i];
    bool ok = std::isnan(want)   ? std::isnan(v)
              : std::isinf(want) ? v == want
                                 : std::fabs(v - want) <= 1e-6 + 1e-5 * std::fabs(want);
    if (!ok && bad++ < 4)
      MESSAGE("value " << i << " (input " << kInputs[size_t(i) % kInputs.size()] << "): got " << v
                       << ", PyTorch " << want);
  }
  CHECK(bad == 0);
}

std::vector<rt::Tensor> compileAndRun(const Module &m, const rt::Tensor &x, size_t expectSteps) {
  auto cm = rt::CompiledModel::compile(m);
  if (!cm)
    FAIL(llvm::toString(cm.takeError()));
  CHECK((*cm)->numSteps() == expectSteps);
  auto out = (*cm)->run({x});
  if (!out)
    FAIL(llvm::toString(out.takeError()));
  return std::move(*out);
}

rt::Tensor tensorOf(std::vector<int64_t> shape, const std::vector<float> &v) {
  rt::Tensor t = rt::Tensor::empty(DType::F32, shape);
  REQUIRE(size_t(t.numel()) == v.size());
  std::memcpy(t.raw(), v.data(), v.size() * sizeof(float));
  return t;
}

Expr weight(const std::string &name, std::vector<int64_t> shape, const std::vector<float> &v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(float));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return tensorConstant(name, tensorType(DType::F32, shape), TensorData::owned(std::move(bytes)));
}

/// main(%x) = act(layer(%x, weight, bias)): `layer` an nn.Conv2d or nn.Linear
/// with the given weights.
ModulePtr layerThenAct(const std::string &layer, Attrs layerAttrs, std::vector<int64_t> in, Expr w,
                       Expr b, const std::string &act, Attrs actAttrs) {
  Var x = var("x", tensorType(DType::F32, in));
  Call l = call(layer, {x, w, b}, std::move(layerAttrs),
                {ArgKey{}, {ArgRole::Weight, "weight"}, {ArgRole::Weight, "bias"}}, "layer");
  Call a = call(act, {l}, std::move(actAttrs), {}, "act");
  auto m = std::make_shared<Module>();
  m->add(make<const FunctionNode>("main", std::vector<Var>{x}, Expr(a), Type(), false));
  if (llvm::Error e = inferTypes(*m))
    FAIL(llvm::toString(std::move(e)));
  test::fuseOps(*m);
  return m;
}

Attrs actAttrs(llvm::StringRef op) {
  Attrs a;
  if (op == "nn.LeakyReLU")
    a.set("negative_slope", AttrValue::real(0.1));
  return a;
}

Attrs convAttrs(int64_t channels, int64_t k, int64_t groups) {
  Attrs a;
  a.set("in_channels", AttrValue::integer(channels));
  a.set("out_channels", AttrValue::integer(channels));
  a.set("kernel_size", AttrValue::intList({k, k}));
  a.set("padding", AttrValue::intList({k / 2, k / 2}));
  a.set("groups", AttrValue::integer(groups));
  a.set("bias", AttrValue::boolean(true));
  return a;
}

} // namespace

TEST_CASE("non-finite values: every activation as PyTorch") {
  for (const Case &c : kCases)
    for (int64_t n : {8, 40, 131}) {
      std::string shape = "f32[" + std::to_string(n) + "]";
      std::string text = "fn @main(%x: " + shape + ") -> " + shape + " {\n  %0 = " + c.op +
                         "(%x) {" + c.attrs + "} : " + shape + "\n  return %0\n}\n";
      auto m = parseModule(text, "non-finite");
      if (!m)
        FAIL(llvm::toString(m.takeError()));
      if (llvm::Error e = inferTypes(**m))
        FAIL(llvm::toString(std::move(e)));
      auto out = compileAndRun(**m, tensorOf({n}, cycled(size_t(n))), 1);
      expectLikeTorch(out[0], c, std::string(c.op) + " " + c.attrs + " over " + shape);
    }
}

// A 1x1 convolution and a linear layer of weight 1 and bias 0 pass their
// input through, so the fused activation sees the special values itself.
TEST_CASE("non-finite values: activations fused into a convolution or linear layer") {
  for (const char *act : kFusable) {
    const Case &c = caseOf(act);
    for (int64_t w : {8, 40, 131}) {
      auto conv = layerThenAct("nn.Conv2d", convAttrs(1, 1, 1), {1, 1, 1, w},
                               weight("c.w", {1, 1, 1, 1}, {1.f}), weight("c.b", {1}, {0.f}), act,
                               actAttrs(act));
      auto out = compileAndRun(*conv, tensorOf({1, 1, 1, w}, cycled(size_t(w))), 1);
      expectLikeTorch(out[0], c,
                      std::string("nn.Conv2d 1x1 + ") + act + " over " + std::to_string(w));
      Attrs la;
      la.set("in_features", AttrValue::integer(1));
      la.set("out_features", AttrValue::integer(1));
      auto linear = layerThenAct("nn.Linear", std::move(la), {w, 1}, weight("l.w", {1, 1}, {1.f}),
                                 weight("l.b", {1}, {0.f}), act, actAttrs(act));
      out = compileAndRun(*linear, tensorOf({w, 1}, cycled(size_t(w))), 1);
      expectLikeTorch(out[0], c, std::string("nn.Linear + ") + act + " over " + std::to_string(w));
    }
  }
}

// PyTorch multiplies every tap, those on the padding included, so one NaN
// weight makes every output of its channel NaN, whatever follows.
TEST_CASE("non-finite values: a NaN weight survives a fused ReLU in every convolution") {
  for (int64_t k : {1, 3})
    for (int64_t groups : {1, 8})
      for (int64_t width : {7, 30, 56}) {
        const int64_t C = 8;
        std::vector<float> wv(size_t(C * (C / groups) * k * k), 0.25f);
        wv[0] = float(kNaN); // channel 0's first tap
        auto m = layerThenAct("nn.Conv2d", convAttrs(C, k, groups), {1, C, width, width},
                              weight("c.w", {C, C / groups, k, k}, wv),
                              weight("c.b", {C}, std::vector<float>(C, 0.f)), "nn.ReLU", {});
        std::vector<float> x(size_t(C * width * width));
        for (size_t i = 0; i < x.size(); ++i)
          x[i] = float(i % 13) - 6.f;
        auto out = compileAndRun(*m, tensorOf({1, C, width, width}, x), 1);
        INFO(k << "x" << k << " groups " << groups << " width " << width);
        const float *y = out[0].data<float>();
        int64_t plane = width * width, nanInChannel0 = 0, nanElsewhere = 0;
        for (int64_t i = 0; i < out[0].numel(); ++i)
          (i < plane ? nanInChannel0 : nanElsewhere) += std::isnan(y[i]);
        CHECK(nanInChannel0 == plane);
        // Grouped: only channel 0 reads the NaN weight; dense: it is the
        // weight of output 0 only, too.
        CHECK(nanElsewhere == 0);
      }
}

// What --check-nan relies on: the fused step's output holds the NaN.
TEST_CASE("non-finite values: checkNan names the convolution a NaN weight feeds") {
  std::vector<float> wv(8 * 8 * 9, 0.25f);
  wv[5] = float(kNaN);
  auto m =
      layerThenAct("nn.Conv2d", convAttrs(8, 3, 1), {1, 8, 12, 12}, weight("c.w", {8, 8, 3, 3}, wv),
                   weight("c.b", {8}, std::vector(8, 0.f)), "nn.ReLU", {});
  rt::CompileOptions opts;
  opts.checkNan = true;
  auto cm = rt::CompiledModel::compile(*m, opts);
  REQUIRE(bool(cm));
  auto out = (*cm)->run({tensorOf({1, 8, 12, 12}, std::vector<float>(8 * 144, 1.f))});
  REQUIRE(!out);
  CHECK(llvm::toString(out.takeError()) == "NaN in output 0 of nn.Conv2d+nn.ReLU 'layer'");
}
