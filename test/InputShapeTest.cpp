//===- InputShapeTest.cpp - Models run at the input shapes users bring ----===//
//
// A model converted at one shape runs at others its graph admits: a batch
// of two images gives, image by image, what each gives alone (kernels may
// choose other algorithms at other sizes: |a - b| <= 1e-5 + 1e-5 |b|); a
// repeated shape reuses its plan; `?` dims compile and run at any size; a
// shape the graph cannot take fails naming the op and its line, and one of
// another rank or element type fails naming the input. PyTorch's own
// answers at other shapes are in ConformanceTest.cpp (test/shapes).
//
//===----------------------------------------------------------------------===//
#include "TestFiles.h"
#include "TestPaths.h"

#include "kc/IR/Parser.h"
#include "kc/IR/TypeInference.h"
#include "kc/Import/Importer.h"
#include "kc/Import/ModuleLoader.h"
#include "kc/Runtime/Interpreter.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace kc;
using test::loadTyped;

namespace {


rt::Tensor normalTensor(const rt::Shape &shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  rt::Tensor t = rt::Tensor::empty(DType::F32, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = normal(rng);
  return t;
}

/// Elements of `whole` from `offset` on match `part`; returns the worst |a-b|.
double compareSlice(const rt::Tensor &whole, int64_t offset, const rt::Tensor &part) {
  double worst = 0;
  const float *a = whole.data<float>() + offset, *b = part.data<float>();
  for (int64_t i = 0; i < part.numel(); ++i) {
    double d = std::fabs(double(a[i]) - double(b[i]));
    CHECK_MESSAGE(d <= 1e-5 + 1e-5 * std::fabs(double(b[i])), "element " << i << ": " << a[i]
                                                                         << " vs " << b[i]);
    worst = std::max(worst, d);
  }
  return worst;
}

std::string runError(rt::CompiledModel &cm, const std::vector<rt::Tensor> &inputs) {
  auto r = cm.run(inputs);
  return r ? std::string() : llvm::toString(r.takeError());
}

} // namespace

TEST_CASE("input shapes: a batch of two gives what each image gives alone, at two sizes") {
  for (const char *name : {"tiny_mobilenet_v3", "tiny_efficientnet", "tiny_regnet_y"}) {
    INFO("model " << std::string(name));
    ModulePtr m = loadTyped(std::string(KC_SOURCE_DIR) + "/test/zoo/" + name + "/model.pnnx.param");
    auto cm = rt::CompiledModel::compile(*m);
    REQUIRE_MESSAGE(bool(cm), (cm ? "" : llvm::toString(cm.takeError())));
    CHECK((*cm)->numPlans() == 1);
    for (int64_t size : {48, 64}) {
      rt::Tensor a = normalTensor({1, 3, size, size}, 1), b = normalTensor({1, 3, size, size}, 2);
      rt::Tensor ab = rt::Tensor::empty(DType::F32, {2, 3, size, size});
      std::memcpy(ab.data<float>(), a.data<float>(), a.nbytes());
      std::memcpy(ab.data<float>() + a.numel(), b.data<float>(), b.nbytes());
      auto ra = (*cm)->run({a}), rb = (*cm)->run({b}), rab = (*cm)->run({ab});
      REQUIRE_MESSAGE(bool(ra), (ra ? "" : llvm::toString(ra.takeError())));
      REQUIRE_MESSAGE(bool(rb), (rb ? "" : llvm::toString(rb.takeError())));
      REQUIRE_MESSAGE(bool(rab), (rab ? "" : llvm::toString(rab.takeError())));
      const rt::Tensor &ya = (*ra)[0], &yb = (*rb)[0], &yab = (*rab)[0];
      REQUIRE(yab.shape().size() == ya.shape().size());
      CHECK(yab.shape()[0] == 2);
      CHECK(yab.numel() == 2 * ya.numel());
      compareSlice(yab, 0, ya);
      compareSlice(yab, ya.numel(), yb);
    }
    // Plans: 1x48 (declared), 2x48, 1x64, 2x64; running them again makes none.
    CHECK((*cm)->numPlans() == 4);
    auto again = (*cm)->run({normalTensor({2, 3, 64, 64}, 3)});
    CHECK(bool(again));
    CHECK((*cm)->numPlans() == 4);
  }
}

TEST_CASE("input shapes: a shape the graph cannot take names the op, its line and the shape") {
  ModulePtr m = loadTyped(std::string(KC_SOURCE_DIR) + "/test/zoo/tiny_mobilenet_v3/model.pnnx.param");
  auto cm = rt::CompiledModel::compile(*m);
  REQUIRE(bool(cm));
  // Rank and element type are the model's.
  std::string rank = runError(**cm, {normalTensor({3, 48, 48}, 1)});
  CHECK(rank.find("must be f32 of rank 4") != std::string::npos);
  CHECK(rank.find("f32[3,48,48]") != std::string::npos);
  std::string dtype = runError(**cm, {rt::Tensor::empty(DType::I64, {1, 3, 48, 48})});
  CHECK(dtype.find("must be f32") != std::string::npos);
  // Four channels where the first convolution takes three.
  std::string channels = runError(**cm, {normalTensor({1, 4, 48, 48}, 1)});
  CHECK(channels.find("at input shape f32[1,4,48,48]") != std::string::npos);
  CHECK(channels.find("nn.Conv2d") != std::string::npos);
  CHECK(channels.find("line 4") != std::string::npos);
  // A failed shape leaves the model as it was.
  auto ok = (*cm)->run({normalTensor({1, 3, 48, 48}, 1)});
  CHECK(bool(ok));
}

TEST_CASE("input shapes: ? dims compile, and run at each size given") {
  const char *text = R"(fn @main(%x: f32[?,3,?,?]) -> ? {
  %0 = nn.MaxPool2d(%x) {kernel_size=[2,2], stride=[2,2]} : ?
  %1 = nn.ReLU(%0) : ?
  return %1
}
)";
  auto m = parseModule(text, "dyn.kc");
  REQUIRE_MESSAGE(bool(m), (m ? "" : llvm::toString(m.takeError())));
  llvm::Error e = inferTypes(**m);
  REQUIRE_MESSAGE(!e, llvm::toString(std::move(e)));
  auto cm = rt::CompiledModel::compile(**m);
  REQUIRE_MESSAGE(bool(cm), (cm ? "" : llvm::toString(cm.takeError())));
  CHECK((*cm)->numPlans() == 0);
  REQUIRE((*cm)->inputSpecs().size() == 1);
  CHECK(rt::shapeToString((*cm)->inputSpecs()[0].shape) == "[-1,3,-1,-1]");
  for (rt::Shape shape : {rt::Shape{1, 3, 4, 6}, rt::Shape{2, 3, 6, 2}}) {
    rt::Tensor x = normalTensor(shape, 7);
    auto r = (*cm)->run({x});
    REQUIRE_MESSAGE(bool(r), (r ? "" : llvm::toString(r.takeError())));
    const rt::Tensor &y = (*r)[0];
    int64_t planes = shape[0] * 3, H = shape[2], W = shape[3], OH = H / 2, OW = W / 2;
    REQUIRE(rt::shapeToString(y.shape()) == rt::shapeToString(rt::Shape{shape[0], 3, OH, OW}));
    // Each output is the ReLU of the largest of its 2x2 window.
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          const float *w = x.data<float>() + p * H * W + 2 * i * W + 2 * j;
          float want = std::max({w[0], w[1], w[W], w[W + 1], 0.f});
          CHECK(y.data<float>()[(p * OH + i) * OW + j] == want);
        }
  }
  CHECK((*cm)->numPlans() == 2);
  // Twelve sizes: the 8 most recent plans are kept, and the figures of the
  // plan last run stay readable after it leaves the cache.
  for (int64_t w = 2; w < 26; w += 2) {
    auto r = (*cm)->run({normalTensor({1, 3, 2, w}, 8)});
    REQUIRE(bool(r));
    CHECK((*r)[0].shape()[3] == w / 2);
  }
  CHECK((*cm)->numPlans() == 8);
  CHECK((*cm)->arenaBytes() > 0);
}

/// A PNNX model from text, types inferred.
ModulePtr pnnxModel(const char *text) {
  auto m = importPnnxFromBuffer(text, "m.pnnx.param", nullptr);
  REQUIRE_MESSAGE(bool(m), (m ? "" : llvm::toString(m.takeError())));
  llvm::Error e = inferTypes(**m);
  REQUIRE_MESSAGE(!e, llvm::toString(std::move(e)));
  return *m;
}

// pnnx's dynamic reshape: the shape is an operand, an expression of the
// input's sizes, bound to an attribute when a plan is made (a static model
// gets its plan at compile time, a `?` model at each new shape).
TEST_CASE("input shapes: an attribute given as an expression of sizes takes each shape's value") {
  const char *dynamic = R"(7767517
4 4
pnnx.Input      in   0 1 0 #0=(?,?,6)f32
pnnx.Expression e    1 1 0 1 expr=[size(@0,0),size(@0,1),2,int(floor_divide(size(@0,2),2))]
Tensor.reshape  r    2 1 0 1 2 $input=0 $shape=1 #2=(?,?,2,3)f32
pnnx.Output     out  1 0 2
)";
  const char *fixed = R"(7767517
4 4
pnnx.Input      in   0 1 0 #0=(2,5,6)f32
pnnx.Expression e    1 1 0 1 expr=[size(@0,0),size(@0,1),2,int(floor_divide(size(@0,2),2))]
Tensor.reshape  r    2 1 0 1 2 $input=0 $shape=1 #2=(2,5,2,3)f32
pnnx.Output     out  1 0 2
)";
  for (const char *text : {dynamic, fixed}) {
    auto cm = rt::CompiledModel::compile(*pnnxModel(text));
    REQUIRE_MESSAGE(bool(cm), (cm ? "" : llvm::toString(cm.takeError())));
    for (rt::Shape shape : {rt::Shape{2, 5, 6}, rt::Shape{1, 3, 6}, rt::Shape{3, 1, 8}}) {
      rt::Tensor x = normalTensor(shape, 3);
      auto r = (*cm)->run({x});
      REQUIRE_MESSAGE(bool(r), (r ? "" : llvm::toString(r.takeError())));
      rt::Shape want{shape[0], shape[1], 2, shape[2] / 2};
      CHECK(rt::shapeToString((*r)[0].shape()) == rt::shapeToString(want));
      CHECK(std::memcmp((*r)[0].data<float>(), x.data<float>(), x.nbytes()) == 0);
    }
  }
  // An attribute that depends on tensor values is refused, named.
  const char *byValue = R"(7767517
4 4
pnnx.Input      in   0 1 0 #0=(2,6)f32
pnnx.Input      in1  0 1 1 #1=(2)i64
Tensor.reshape  r    2 1 0 1 2 $input=0 $shape=1 #2=(3,4)f32
pnnx.Output     out  1 0 2
)";
  auto cm = rt::CompiledModel::compile(*pnnxModel(byValue));
  REQUIRE(!cm);
  std::string msg = llvm::toString(cm.takeError());
  CHECK_MESSAGE(msg.find("m.pnnx.param:5") != std::string::npos, msg);
  CHECK_MESSAGE(msg.find("attribute 'shape' is computed from tensor values") != std::string::npos,
                msg);
}

TEST_CASE("input shapes: the plans of one model prepare each weight once") {
  for (const char *name : {"tiny_mobilenet_v3", "tiny_regnet_y"}) {
    INFO("model " << std::string(name));
    ModulePtr m = loadTyped(std::string(KC_SOURCE_DIR) + "/test/zoo/" + name + "/model.pnnx.param");
    auto cm = rt::CompiledModel::compile(*m);
    REQUIRE(bool(cm));
    CHECK((*cm)->preparedWeights() == 0); // weights are prepared on the first run
    REQUIRE(bool((*cm)->run({normalTensor({1, 3, 48, 48}, 1)})));
    size_t once = (*cm)->preparedWeights();
    CHECK(once > 0);
    // Batch 2 at the same size: a new plan, the same algorithms, the same
    // prepared weights.
    REQUIRE(bool((*cm)->run({normalTensor({2, 3, 48, 48}, 2)})));
    CHECK((*cm)->numPlans() == 2);
    CHECK((*cm)->preparedWeights() == once);
    // Larger and smaller images: layers cross the outputs-per-plane
    // thresholds between the panel and the strip kernel, and keep the one
    // their weight was packed for (without that rule: 2 to 13 more).
    for (int64_t size : {96, 32}) {
      REQUIRE(bool((*cm)->run({normalTensor({1, 3, size, size}, 3)})));
      CHECK((*cm)->preparedWeights() == once);
    }
  }
}
