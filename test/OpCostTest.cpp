//===- OpCostTest.cpp - FLOP counts, summaries, profiles ------------------===//
//
// Each op's FLOP count against a figure derived by hand from its shapes and
// the conventions of docs/ops.md (a multiply-add counts 2); the module
// summary's totals; the profile's shapes and FLOPs of a fused step.
//
//===----------------------------------------------------------------------===//
#include "FuseOps.h"
#include "TestPaths.h"

#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/IR/OpCost.h"
#include "kc/IR/Parser.h"
#include "kc/IR/Summary.h"
#include "kc/IR/TypeInference.h"
#include "kc/Import/ModuleLoader.h"
#include "kc/Runtime/Interpreter.h"
#include "kc/Runtime/OpKernel.h"

#include <doctest/doctest.h>

#include <map>

using namespace kc;

namespace {

const char *kCostModel = R"(
fn @e(%a: f32[2,3], %b: f32[2,3]) -> ? primitive {
  %0 = mul(%a, %b) : ?
  %1 = add(%0, 1.0:f32) : ?
  return %1
}

fn @main(%x: f32[2,4,9,9], %t: f32[1,3,4,4], %l: f32[3,7], %a: f32[2,3,4], %b: f32[4,6], %p: f32[1,2,7,7], %r: f32[4,5], %s: f32[2,3], %q: f32[1,5,8], %d: f32[?,3]) -> ? {
  %0 = nn.Conv2d(%x, weight=@c.weight: f32[6,2,3,3], bias=@c.bias: f32[6]) {groups=2, in_channels=4, kernel_size=[3,3], out_channels=6, padding=[1,1], stride=[2,2]} : ? name("conv")
  %1 = nn.ConvTranspose2d(%t, weight=@u.weight: f32[3,5,2,2], bias=@u.bias: f32[5]) {in_channels=3, kernel_size=[2,2], out_channels=5, stride=[2,2]} : ? name("up")
  %2 = nn.Linear(%l, weight=@fc.weight: f32[5,7]) {bias=false, in_features=7, out_features=5} : ? name("fc")
  %3 = torch.matmul(%a, %b) : ? name("mm")
  %4 = nn.MaxPool2d(%p) {kernel_size=[3,3], stride=[2,2]} : ? name("max")
  %5 = nn.AvgPool2d(%p) {kernel_size=[2,2]} : ? name("avg")
  %6 = torch.mean(%r) {dim=[1]} : ? name("mean")
  %7 = @e(%s, %s) : ? name("expr")
  %8 = Tensor.reshape(%s) {shape=[3,2]} : ? name("reshape")
  %9 = nn.ReLU(%s) : ? name("relu")
  %10 = nn.Softmax(%s) {dim=1} : ? name("softmax")
  %11 = nn.MultiheadAttention(%q, in_proj_weight=@m.in_proj_weight: f32[24,8], out_proj.weight=@m.out_proj.weight: f32[8,8]) {batch_first=true, embed_dim=8, num_heads=2} : ? name("mha")
  %12 = nn.ReLU(%d) : ? name("dynamic")
  %13 = (%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12) : ?
  return %13
}
)";

ModulePtr costModel() {
  auto m = parseModule(kCostModel, "cost-test");
  REQUIRE_MESSAGE(bool(m), (m ? "" : llvm::toString(m.takeError())));
  llvm::Error e = inferTypes(**m);
  REQUIRE_MESSAGE(!e, llvm::toString(std::move(e)));
  return *m;
}

/// The calls of main by name.
std::map<std::string, const CallNode *> callsByName(const Module &m) {
  std::map<std::string, const CallNode *> calls;
  for (const Expr &f : llvm::cast<TupleNode>(m.main()->body().get())->fields())
    calls[llvm::cast<CallNode>(f.get())->name()] = llvm::cast<CallNode>(f.get());
  return calls;
}

} // namespace

TEST_CASE("op cost: FLOPs of each op from its shapes") {
  ModulePtr m = costModel();
  auto calls = callsByName(*m);
  // name -> FLOPs, derived from the shapes the type rules give (in comments).
  std::map<std::string, double> expected = {
      // [2,6,5,5] = 300 outputs, each (4/2 groups) x 3x3 = 18 multiply-adds, + bias.
      {"conv", 2 * 300 * 18 + 300},
      // 48 input elements, each spread over 5 x 2x2 outputs, + bias on 320.
      {"up", 2 * 48 * 20 + 320},
      // [3,5] outputs of 7 multiply-adds, no bias.
      {"fc", 2 * 15 * 7},
      // [2,3,6] outputs of 4 multiply-adds.
      {"mm", 2 * 36 * 4},
      // [1,2,3,3] outputs of a 3x3 window; average: 2x2 window and a division.
      {"max", 18 * 9},
      {"avg", 18 * 4 + 18},
      // 20 inputs summed, 4 divisions.
      {"mean", 20 + 4},
      // mul and add on 6 elements.
      {"expr", 2 * 6},
      {"reshape", 0},
      {"relu", 6},
      {"softmax", 5 * 6},
      // L = S = 5, E = 8, 2 heads: 4 projections of 5x8x8, Q·Kᵀ and ·V of
      // 5x5x8 each, a softmax on 2x5x5 scores.
      {"mha", 2 * (4 * 5 * 8 * 8) + 2 * (2 * 5 * 5 * 8) + 5 * 2 * 5 * 5},
  };
  for (auto &[name, flops] : expected) {
    CAPTURE(name);
    REQUIRE(calls.count(name));
    auto got = flopCount(*calls[name], *m);
    REQUIRE(got.has_value());
    CHECK(*got == flops);
  }
  CHECK_FALSE(flopCount(*calls["dynamic"], *m).has_value());
}

TEST_CASE("op cost: every registered op has a cost rule") {
  for (const OpDef *op : OpRegistry::global().all()) {
    CAPTURE(op->name());
    CHECK(hasCostRule(*op));
  }
}

TEST_CASE("op cost: module summary") {
  ModulePtr m = costModel();
  ModuleSummary s = summarizeModule(*m);
  CHECK(s.calls == 13);
  CHECK(s.ops.size() == 12); // nn.ReLU twice
  // Weights: 108 + 6 + 60 + 5 + 35 + 192 + 64 elements of f32.
  CHECK(s.parameters == 470);
  CHECK(s.parameterBytes == 470 * 4);
  CHECK(s.flops == 11100 + 2240 + 210 + 288 + 162 + 90 + 24 + 12 + 0 + 6 + 30 + 3610);
  CHECK(s.unknownFlops == 1);
  // Every static result: 300 + 320 + 15 + 36 + 18 + 18 + 4 + 6 + 6 + 6 + 6 + 40 floats.
  CHECK(s.intermediateBytes == 775 * 4);
  REQUIRE(!s.ops.empty());
  CHECK(s.ops.front().op == "nn.Conv2d");
  std::string text;
  llvm::raw_string_ostream os(text);
  printSummary(s, os);
  CHECK(os.str().find("FLOPs per run: 17772 (17.772 K) (1 calls unknown)") != std::string::npos);
  CHECK(os.str().find("parameters: 470 (0.00 MiB)") != std::string::npos);
}

TEST_CASE("op cost: the profile gives each step's shapes, FLOPs and bytes") {
  auto m = loadModule(std::string(KC_SOURCE_DIR) + "/examples/cnn_basic/model.pnnx.param");
  REQUIRE_MESSAGE(bool(m), (m ? "" : llvm::toString(m.takeError())));
  REQUIRE(!inferTypes(**m));
  test::fuseOps(**m);
  rt::CompileOptions opts;
  opts.profile = true;
  auto cm = rt::CompiledModel::compile(**m, opts);
  REQUIRE_MESSAGE(bool(cm), (cm ? "" : llvm::toString(cm.takeError())));
  rt::Tensor x = rt::Tensor::empty(DType::F32, {1, 3, 32, 32});
  for (int runs = 0; runs < 2; ++runs)
    REQUIRE(bool((*cm)->run({x})));
  bool found = false;
  for (const rt::OpProfile &p : (*cm)->profile()) {
    if (p.name != "convbn2d_0")
      continue;
    found = true;
    // The 3x3 convolution 3 -> 16 channels on 32x32 with bias, and the ReLU
    // folded into it: 2 x 16384 x 27 + 16384 + 16384.
    CHECK(p.op == "nn.Conv2d+nn.ReLU");
    CHECK(p.inputShapes == "f32[1,3,32,32]");
    CHECK(p.outputShapes == "f32[1,16,32,32]");
    REQUIRE(p.flops.has_value());
    CHECK(*p.flops == 2.0 * 16384 * 27 + 16384 + 16384);
    // Its input and output in f32, once a run: 4 x (3 x 1024 + 16 x 1024).
    CHECK(p.bytes == 4.0 * (3 * 1024 + 16 * 1024));
    CHECK(p.calls == 2);
    CHECK(p.totalMs > 0);
  }
  CHECK(found);
  // Cleared, it counts only the runs after.
  (*cm)->clearProfile();
  for (const rt::OpProfile &p : (*cm)->profile())
    CHECK((p.calls == 0 && p.totalMs == 0));
  REQUIRE(bool((*cm)->run({x})));
  for (const rt::OpProfile &p : (*cm)->profile())
    CHECK(p.calls == 1);
}

TEST_CASE("op cost: ops whose factors are operands, einsum, recurrent layers") {
  // fixture -> FLOPs of its one computing call, from the shapes in its .param.
  std::map<std::string, double> expected = {
      // [3,5] outputs of 4 multiply-adds.
      {"einsum_matmul", 2 * 3 * 4 * 5},
      // i=2, k=3, l=4, j=2: 48 combinations of 3 operands.
      {"einsum_three", 3 * 2 * 3 * 4 * 2},
      // [1,3,7,9] = 189 outputs of 4 x 3x2 multiply-adds, + bias.
      {"F_conv2d", 2 * 189 * 24 + 189},
      // 5 steps x batch 2, weights 12x6 + 12x4.
      {"nn_gru", 2 * 10 * (72 + 48)},
      // [3,5] outputs of 4 multiply-adds, + the added input.
      {"prod_addmm", 2 * 15 * 4 + 15},
  };
  for (auto &[fixture, flops] : expected) {
    CAPTURE(fixture);
    auto m = loadModule(std::string(KC_SOURCE_DIR) + "/test/ops/fixtures/" + fixture +
                        "/model.pnnx.param");
    REQUIRE_MESSAGE(bool(m), (m ? "" : llvm::toString(m.takeError())));
    REQUIRE(!inferTypes(**m));
    std::optional<double> got;
    int computing = 0;
    PostOrderVisit((*m)->main()->body(), [&](const Expr &e) {
      auto *c = llvm::dyn_cast<CallNode>(e.get());
      if (!c || !c->opDef())
        return;
      auto f = flopCount(*c, **m);
      if (f && *f > 0)
        got = f, ++computing;
    });
    CHECK(computing == 1);
    REQUIRE(got.has_value());
    CHECK(*got == flops);
  }
}
