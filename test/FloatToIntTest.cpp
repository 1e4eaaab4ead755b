//===- FloatToIntTest.cpp - Floating to integer conversion ----------------===//
//
// kc converts floating values to integers only through kc/Support/FloatToInt.h.
// The expected values below are PyTorch 1.13.1's on x86-64, printed by
//
//   vals = [nan, inf, -inf, 1e10, -1e10, 3e9, -3e9, 1e20, -1e20, 300.7, -300.7,
//           70000.5, -1.5, 2.5, 255.9, 256.0, -129.0, 9.3e18, -9.3e18]
//   for n in (1, 7, 100003):   # scalar and vectorized loops agree
//       torch.tensor(vals, dtype=torch.float32).repeat(n).to(T)[:len(vals)]
//
// (the same for float64 sources), and `Tensor.to` must reproduce them.
// Literals that do not fit their integer type are refused when read.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Module.h"
#include "kc/IR/Parser.h"
#include "kc/IR/TypeInference.h"
#include "kc/Runtime/Interpreter.h"
#include "kc/Support/FloatToInt.h"

#include "TextModel.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <vector>

using namespace kc;

namespace {

const std::vector<double> kValues = {NAN,     INFINITY, -INFINITY, 1e10,  -1e10, 3e9,    -3e9,
                                     1e20,    -1e20,    300.7,     -300.7, 70000.5, -1.5,  2.5,
                                     255.9,   256.0,    -129.0,    9.3e18, -9.3e18};
constexpr int64_t kMin64 = INT64_MIN;
constexpr int64_t kMin32 = INT32_MIN;
const std::vector<int64_t> kTorchI64 = {kMin64, kMin64, kMin64, 10000000000, -10000000000,
                                        3000000000, -3000000000, kMin64, kMin64, 300, -300,
                                        70000, -1, 2, 255, 256, -129, kMin64, kMin64};
const std::vector<int64_t> kTorchI32 = {kMin32, kMin32, kMin32, kMin32, kMin32, kMin32, kMin32,
                                        kMin32, kMin32, 300,    -300,   70000,  -1,     2,
                                        255,    256,    -129,   kMin32, kMin32};
const std::vector<int64_t> kTorchI16 = {0, 0, 0,   0,   0,   0,    0,  0, 0, 300,
                                        -300, 4464, -1, 2, 255, 256, -129, 0, 0};
const std::vector<int64_t> kTorchI8 = {0, 0, 0, 0, 0, 0, 0, 0, 0, 44, -44, 112, -1, 2, -1, 0, 127, 0, 0};
const std::vector<int64_t> kTorchU8 = {0,  0,   0,   0,   0, 0,   0, 0,   0, 44,
                                       212, 112, 255, 2, 255, 0, 127, 0, 0};

} // namespace

TEST_CASE("float to int: torchCast gives PyTorch 1.13's x86-64 results for every value") {
  for (size_t i = 0; i < kValues.size(); ++i) {
    INFO("value " << kValues[i]);
    for (double v : {kValues[i], double(float(kValues[i]))}) {
      CHECK(torchCast<int64_t>(v) == kTorchI64[i]);
      CHECK(torchCast<int32_t>(v) == kTorchI32[i]);
      CHECK(torchCast<int16_t>(v) == kTorchI16[i]);
      CHECK(torchCast<int8_t>(v) == kTorchI8[i]);
      CHECK(torchCast<uint8_t>(v) == kTorchU8[i]);
      CHECK(torchCast<bool>(v) == true); // no value in the table is 0
    }
  }
  CHECK(torchCast<bool>(0.0) == false);
  CHECK(torchCast<bool>(-0.0) == false);
  CHECK(torchCast<int64_t>(-9223372036854775808.0) == INT64_MIN);
  CHECK(torchCast<int32_t>(-2147483648.9) == INT32_MIN);
  CHECK(torchCast<int32_t>(2147483647.9) == INT32_MAX);
}

TEST_CASE("float to int: the checked and saturating forms") {
  CHECK(!truncToInt64(NAN));
  CHECK(!truncToInt64(9223372036854775808.0));
  CHECK(*truncToInt64(-2.9) == -2);
  CHECK(!exactInt64(2.5));
  CHECK(*exactInt64(-4.0) == -4);
  CHECK(saturatingInt64(NAN) == 0);
  CHECK(saturatingInt64(1e300) == INT64_MAX);
  CHECK(saturatingInt64(-INFINITY) == INT64_MIN);
}

namespace {

/// Runs `Tensor.to` from `from` (f32 or f64) to `to` on kValues.
std::vector<int64_t> runCast(const char *from, const char *to) {
  std::string n = std::to_string(kValues.size());
  std::string torchName = std::string(to) == "i64"   ? "torch.long"
                          : std::string(to) == "i32" ? "torch.int"
                                                     : "torch.bool";
  std::string text = std::string("fn @main(%x: ") + from + "[" + n +
                     "]) -> ? {\n  %0 = Tensor.to(%x) {dtype=\"" + torchName + "\"} : " + to + "[" +
                     n + "]\n  return %0\n}\n";
  auto m = parseModule(text, "cast.kc");
  REQUIRE(bool(m));
  REQUIRE(!inferTypes(**m));
  auto cm = rt::CompiledModel::compile(**m, {});
  REQUIRE(bool(cm));
  bool f32 = std::string(from) == "f32";
  rt::Tensor x = rt::Tensor::empty(f32 ? DType::F32 : DType::F64, {int64_t(kValues.size())});
  for (size_t i = 0; i < kValues.size(); ++i) {
    if (f32)
      x.data<float>()[i] = float(kValues[i]);
    else
      x.data<double>()[i] = kValues[i];
  }
  auto out = (*cm)->run({x});
  REQUIRE(bool(out));
  const rt::Tensor &y = (*out)[0];
  std::vector<int64_t> r;
  for (size_t i = 0; i < kValues.size(); ++i) {
    if (y.dtype() == DType::I64)
      r.push_back(y.data<int64_t>()[i]);
    else if (y.dtype() == DType::I32)
      r.push_back(y.data<int32_t>()[i]);
    else
      r.push_back(y.data<uint8_t>()[i]);
  }
  return r;
}

} // namespace

TEST_CASE("float to int: Tensor.to matches PyTorch on NaN, infinities and out-of-range values") {
  for (const char *from : {"f32", "f64"}) {
    INFO(from);
    CHECK(runCast(from, "i64") == kTorchI64);
    CHECK(runCast(from, "i32") == kTorchI32);
    CHECK(runCast(from, "bool") == std::vector<int64_t>(kValues.size(), 1));
  }
}

TEST_CASE("float to int: Tensor.to between integers keeps the low bits, as PyTorch") {
  auto m = parseModule("fn @main(%x: i64[4]) -> ? {\n  %0 = Tensor.to(%x) {dtype=\"torch.int\"} : i32[4]\n"
                       "  %1 = Tensor.to(%x) {dtype=\"torch.double\"} : f64[4]\n  %2 = (%0, %1) : ?\n  return %2\n}\n",
                       "cast.kc");
  REQUIRE(bool(m));
  REQUIRE(!inferTypes(**m));
  auto cm = rt::CompiledModel::compile(**m, {});
  REQUIRE(bool(cm));
  rt::Tensor x = rt::Tensor::empty(DType::I64, {4});
  const int64_t in[4] = {(int64_t(1) << 40) + 5, -(int64_t(1) << 33) - 7, int64_t(1) << 31,
                         (int64_t(1) << 53) + 1};
  std::memcpy(x.raw(), in, sizeof in);
  auto out = (*cm)->run({x});
  REQUIRE(bool(out));
  const int32_t *i32 = (*out)[0].data<int32_t>();
  CHECK(i32[0] == 5); // torch: [5, -7, -2147483648, 1]
  CHECK(i32[1] == -7);
  CHECK(i32[2] == INT32_MIN);
  CHECK(i32[3] == 1);
  CHECK((*out)[1].data<double>()[3] == 9007199254740992.0); // rounded once, as torch
}

TEST_CASE("float to int: literals that do not fit their integer type are refused, named") {
  struct Case {
    const char *literal, *why;
  };
  for (Case c : {Case{"1e300:i64", "'1e300:i64' does not fit in i64"},
                 Case{"nan:i32", "'nan:i32' does not fit in i32"},
                 Case{"inf:i64", "'inf:i64' does not fit in i64"},
                 Case{"2.5:i64", "'2.5:i64' does not fit in i64"},
                 Case{"3000000000:i32", "'3000000000:i32' does not fit in i32"},
                 Case{"300:i8", "'300:i8' does not fit in i8"},
                 Case{"-1:u8", "'-1:u8' does not fit in u8"},
                 Case{"2:bool", "'2:bool' does not fit in bool"},
                 Case{"9223372036854775808.0:i64", "does not fit in i64"}}) {
    INFO(c.literal);
    std::string text = std::string("fn @main(%x: f32[2]) -> ? {\n  %0 = add(%x, ") + c.literal +
                       ") : ?\n  return %0\n}\n";
    auto m = parseModule(text, "lit.kc");
    REQUIRE(!m);
    std::string msg = llvm::toString(m.takeError());
    CHECK(msg.find("lit.kc:2:16: error: literal ") != std::string::npos);
    CHECK(msg.find(c.why) != std::string::npos);
  }
  for (const char *ok : {"-9223372036854775808:i64", "4.0:i64", "-2147483648:i32", "255:u8",
                         "1:bool", "true:bool", "1e300:f32", "nan:f64"}) {
    INFO(ok);
    std::string text = std::string("fn @main(%x: f32[2]) -> ? {\n  %0 = add(%x, ") + ok +
                       ") : ?\n  return %0\n}\n";
    auto m = parseModule(text, "lit.kc");
    CHECK_MESSAGE(bool(m), (m ? "" : llvm::toString(m.takeError())));
  }
}

TEST_CASE("float to int: the clamped index and the scalar check of FloatToInt.h") {
  CHECK(clampedIndex(NAN, 2, 5) == 2);
  CHECK(clampedIndex(1e300, 2, 5) == 5);
  CHECK(clampedIndex(-INFINITY, -2, 5) == -2);
  CHECK(clampedIndex(3.9, 0, 5) == 3);
  CHECK(!scalarFits(NAN, DType::I64));
  CHECK(!scalarFits(1e300, DType::I64));
  CHECK(!scalarFits(9.3e18, DType::I64));
  CHECK(scalarFits(-2.7, DType::I64));
  CHECK(!scalarFits(3e9, DType::I32));
  CHECK(scalarFits(NAN, DType::Bool));
  CHECK(!scalarFits(1e300, DType::F32));
  CHECK(scalarFits(INFINITY, DType::F32));
  CHECK(scalarFits(NAN, DType::F32));
}

TEST_CASE("float to int: fill and masked_fill refuse what PyTorch cannot convert, else truncate") {
  // torch.zeros(3, dtype=torch.long).fill_(v): "value cannot be converted
  // to type int64_t without overflow" for NaN, 1e300, inf, 9.3e18; 2.7 -> 2.
  for (const char *v : {"nan", "1e300", "-inf", "9.3e18"}) {
    INFO(std::string(v));
    std::string e = test::typeError(
        test::oneOp("%x: i64[3]", std::string("Tensor.fill(%x) {value=") + v + "}"));
    CHECK(e.find("Tensor.fill: attribute 'value' = ") != std::string::npos);
    CHECK(e.find(" cannot be converted to i64 without overflow") != std::string::npos);
    e = test::typeError(test::oneOp("%x: i64[3], %m: bool[3]",
                                    std::string("Tensor.masked_fill(%x, %m) {value=") + v + "}"));
    CHECK(e.find("Tensor.masked_fill: attribute 'value' = ") != std::string::npos);
  }
  CHECK(test::typeError(test::oneOp("%x: f32[3]", "Tensor.fill(%x) {value=1e300}"))
            .find("cannot be converted to f32") != std::string::npos);
  CHECK(test::typeError(test::oneOp("%x: f32[3]", "Tensor.fill(%x) {value=nan}")) == "");
  CHECK(test::typeError(test::oneOp("%x: bool[3]", "Tensor.fill(%x) {value=nan}")) == "");
  rt::Tensor i = test::tensorOf<int64_t>(DType::I64, {3}, {5, 6, 7});
  test::TextRun r = test::runText(test::oneOp("%x: i64[3]", "Tensor.fill(%x) {value=-2.7}"), {i});
  REQUIRE_MESSAGE(r.error == "", r.error);
  CHECK(r.outputs[0].data<int64_t>()[1] == -2);
  r = test::runText(test::oneOp("%x: i64[3]", "Tensor.fill(%x) {value=3000000000.0}"), {i});
  REQUIRE_MESSAGE(r.error == "", r.error);
  CHECK(r.outputs[0].data<int64_t>()[0] == 3000000000);
  rt::Tensor m = test::tensorOf<uint8_t>(DType::Bool, {3}, {1, 0, 1});
  r = test::runText(
      test::oneOp("%x: i64[3], %m: bool[3]", "Tensor.masked_fill(%x, %m) {value=2.7}"), {i, m});
  REQUIRE_MESSAGE(r.error == "", r.error);
  const int64_t *y = r.outputs[0].data<int64_t>();
  CHECK((y[0] == 2 && y[1] == 6 && y[2] == 2)); // torch: [2, 6, 2]
}

namespace {

/// torchvision.ops.roi_align(arange(16.).reshape(1, 1, 4, 4), [box],
/// (2, 2), 1.0, ratio, aligned).
std::vector<float> roiAlign(std::vector<float> box, int ratio, bool aligned) {
  rt::Tensor x = rt::Tensor::empty(DType::F32, {1, 1, 4, 4});
  for (int i = 0; i < 16; ++i)
    x.data<float>()[i] = float(i);
  std::string call = "torchvision.ops.RoIAlign(%x, %b) {output_size=[2,2], spatial_scale=1.0, "
                     "sampling_ratio=" +
                     std::to_string(ratio) + ", aligned=" + (aligned ? "true" : "false") + "}";
  test::TextRun r = test::runText(test::oneOp("%x: f32[1,1,4,4], %b: f32[1,5]", call),
                                  {x, test::f32({1, 5}, box)});
  REQUIRE_MESSAGE(r.error == "", r.error);
  return test::values(r.outputs[0]);
}

} // namespace

TEST_CASE("float to int: RoIAlign's NaN, infinite and huge boxes give defined values") {
  for (int ratio : {-1, 2})
    for (bool aligned : {false, true}) {
      INFO("sampling_ratio " << ratio << ", aligned " << aligned);
      // torchvision: zeros with an adaptive grid (int(ceil(NaN)) is
      // INT32_MIN samples); it crashes with a fixed one. kc: zeros.
      CHECK(roiAlign({0, NAN, 0, 2, 2}, ratio, aligned) == std::vector<float>(4, 0.f));
      CHECK(roiAlign({0, 0, 0, NAN, 2}, ratio, aligned) == std::vector<float>(4, 0.f));
      CHECK(roiAlign({0, 0, 0, INFINITY, 2}, ratio, aligned) == std::vector<float>(4, 0.f));
      CHECK(roiAlign({0, -INFINITY, 0, 2, 2}, ratio, aligned) == std::vector<float>(4, 0.f));
      // torchvision: zeros (the box lies beyond the image).
      CHECK(roiAlign({0, 0, 0, 1e30f, 2}, ratio, aligned) == std::vector<float>(4, 0.f));
      CHECK(roiAlign({0, 0, 0, 1e10f, 2}, ratio, aligned) == std::vector<float>(4, 0.f));
      // A batch index that is NaN or beyond every image names none: zeros
      // (torchvision reads image 0 through an int overflow).
      CHECK(roiAlign({NAN, 0, 0, 2, 2}, ratio, aligned) == std::vector<float>(4, 0.f));
      CHECK(roiAlign({1e20f, 0, 0, 2, 2}, ratio, aligned) == std::vector<float>(4, 0.f));
    }
  // A fractional batch index truncates, as torchvision's int conversion.
  std::vector<float> want = {0.625f, 1.5f, 4.125f, 5.f};
  std::vector<float> got = roiAlign({0.7f, 0, 0, 2, 2}, 2, true);
  for (int i = 0; i < 4; ++i)
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
  CHECK(roiAlign({0.7f, 0, 0, 2, 2}, -1, true) == std::vector<float>{0, 1, 4, 5});
}

TEST_CASE("float to int: DeformConv2d samples NaN at a NaN offset, 0 beyond the image") {
  // torchvision: deform_conv2d(ones(1, 2, 5, 5), full((1, 18, 5, 5), v),
  // ones(3, 2, 3, 3), ones(3), padding=1): all NaN for NaN, the bias (1)
  // for inf, 1e30 and 3e9.
  for (float v : {NAN, INFINITY, 1e30f, 3e9f, -INFINITY}) {
    INFO(v);
    Var x = var("x", tensorType(DType::F32, {1, 2, 5, 5}));
    Var off = var("off", tensorType(DType::F32, {1, 18, 5, 5}));
    auto weight = [](const char *name, std::vector<int64_t> shape) {
      std::vector<uint8_t> bytes(size_t(std::accumulate(shape.begin(), shape.end(), int64_t(1),
                                                        std::multiplies<int64_t>())) *
                                 sizeof(float));
      for (size_t i = 0; i < bytes.size(); i += sizeof(float)) {
        float one = 1;
        std::memcpy(bytes.data() + i, &one, sizeof one);
      }
      return tensorConstant(name, tensorType(DType::F32, shape),
                            TensorData::owned(std::move(bytes)));
    };
    Attrs attrs{{"kernel_size", AttrValue::intList({3, 3})},
                {"padding", AttrValue::intList({1, 1})},
                {"stride", AttrValue::intList({1, 1})},
                {"dilation", AttrValue::intList({1, 1})},
                {"groups", AttrValue::integer(1)}};
    Call c =
        call("torchvision.ops.DeformConv2d",
             {Expr(x), Expr(off), weight("d.weight", {3, 2, 3, 3}), weight("d.bias", {3})},
             std::move(attrs),
             {ArgKey{}, ArgKey{}, {ArgRole::Weight, "weight"}, {ArgRole::Weight, "bias"}}, "d");
    auto m = std::make_shared<Module>();
    m->add(make<const FunctionNode>("main", std::vector<Var>{x, off}, Expr(c), Type(), false));
    REQUIRE(!inferTypes(*m));
    auto cm = rt::CompiledModel::compile(*m, {});
    REQUIRE(bool(cm));
    rt::Tensor xs = rt::Tensor::empty(DType::F32, {1, 2, 5, 5});
    rt::Tensor os = rt::Tensor::empty(DType::F32, {1, 18, 5, 5});
    std::fill(xs.data<float>(), xs.data<float>() + xs.numel(), 1.f);
    std::fill(os.data<float>(), os.data<float>() + os.numel(), v);
    auto out = (*cm)->run({xs, os});
    REQUIRE(bool(out));
    for (float y : test::values((*out)[0]))
      CHECK((std::isnan(v) ? std::isnan(y) : y == 1.f));
  }
}

TEST_CASE("float to int: torch.roll of shifts near the int64 limits is PyTorch's") {
  rt::Tensor x = test::f32({2, 3}, {0, 1, 2, 3, 4, 5});
  struct Case {
    const char *attrs;
    std::vector<float> want;
  };
  // torch.roll(arange(6.).reshape(2, 3), ...): its (n - shift) % n wraps
  // for shifts near INT64_MIN, which kc reproduces without overflowing.
  const Case cases[] = {
      {"shifts=[-9223372036854775808], dims=[1]", {1, 2, 0, 4, 5, 3}},
      {"shifts=[9223372036854775807], dims=[1]", {2, 0, 1, 5, 3, 4}},
      {"shifts=[-9223372036854775807], dims=[1]", {0, 1, 2, 3, 4, 5}},
      {"shifts=[9223372036854775807, 9223372036854775807], dims=[1, 1]", {1, 2, 0, 4, 5, 3}},
      {"shifts=[9223372036854775807]", {5, 0, 1, 2, 3, 4}},
      {"shifts=[-5], dims=[1]", {2, 0, 1, 5, 3, 4}},
  };
  for (const Case &c : cases) {
    INFO(c.attrs);
    test::TextRun r = test::runText(
        test::oneOp("%x: f32[2,3]", std::string("torch.roll(%x) {") + c.attrs + "}"), {x});
    REQUIRE_MESSAGE(r.error == "", r.error);
    CHECK(test::values(r.outputs[0]) == c.want);
  }
}

TEST_CASE("float to int: an integer attribute that holds no integer is refused, named") {
  for (const char *v : {"1.5", "nan", "-inf", "1e300"}) {
    INFO(std::string(v));
    // Read by the type rule: type inference refuses it.
    std::string e =
        test::typeError(test::oneOp("%x: f32[2,3]", std::string("torch.sum(%x) {dim=") + v + "}"));
    CHECK(e.find("t.kc:2:3: error: @main: torch.sum: attribute 'dim' must be an integer, got ") !=
          std::string::npos);
    e = test::typeError(
        test::oneOp("%x: f32[2,3]", std::string("torch.sum(%x) {dim=[0, ") + v + "]}"));
    CHECK(e.find("attribute 'dim' must be an integer") != std::string::npos);
    // Read by the kernel only: loading the model refuses it.
    test::TextRun r =
        test::runText(test::oneOp("%x: f32[2,3]", std::string("nn.Softmax(%x) {dim=") + v + "}"),
                      {test::f32({2, 3}, {1, 2, 3, 4, 5, 6})});
    CHECK(r.error.find("nn.Softmax (line 2): attribute 'dim' must be an integer, got ") !=
          std::string::npos);
  }
  // An integral float is an integer (PNNX writes some so).
  CHECK(test::typeError(test::oneOp("%x: f32[2,3]", "nn.Softmax(%x) {dim=1.0}")) == "");
  // An attribute only the kernel reads is refused when the kernel is made.
  rt::Tensor x = rt::Tensor::empty(DType::F32, {1, 1, 4, 4});
  test::TextRun r = test::runText(
      test::oneOp("%x: f32[1,1,4,4], %b: f32[1,5]",
                  "torchvision.ops.RoIAlign(%x, %b) {output_size=[2,2], sampling_ratio=2.5}"),
      {x, test::f32({1, 5}, {0, 0, 0, 2, 2})});
  CHECK(r.error.find("torchvision.ops.RoIAlign (line 2): attribute 'sampling_ratio' must be an "
                     "integer, got 2.5") != std::string::npos);
}

TEST_CASE("float to int: IntAttrCheck reports the first non-integer to the innermost check") {
  Attrs attrs{
      {"a", AttrValue::real(2.5)}, {"b", AttrValue::real(3.0)}, {"c", AttrValue::real(NAN)}};
  IntAttrCheck outer;
  {
    IntAttrCheck inner;
    CHECK(attrs.getInt("b", 0) == 3);
    CHECK(inner.failure(attrs) == "");
    CHECK(attrs.getInt("a", 0) == 2);
    CHECK(attrs.getInts("c") == std::vector<int64_t>{0});
    CHECK(inner.failure(attrs) == "attribute 'a' must be an integer, got 2.5");
  }
  CHECK(outer.failure(attrs) == "");
  AttrValue copy = *attrs.find("c");
  (void)copy.getInt();
  CHECK(outer.failure(attrs) == "an attribute that must be an integer is nan");
}

TEST_CASE("float to int: resampling sources far outside the input read its edge") {
  // A size with a scale_factor of 1e-20 (the kernels take 1 / scale as the
  // step): sources near 1e20 once converted to int64 with overflow and
  // indexed before the input. Every mode now reads elements of the input.
  rt::Tensor x = rt::Tensor::empty(DType::F32, {1, 1, 4, 4});
  for (int i = 0; i < 16; ++i)
    x.data<float>()[i] = float(i + 1);
  for (const char *mode : {"nearest", "bilinear", "bicubic", "nearest-exact"}) {
    INFO(std::string(mode));
    test::TextRun r = test::runText(
        test::oneOp("%x: f32[1,1,4,4]", std::string("nn.Upsample(%x) {size=[8,8], "
                                                    "scale_factor=[1e-20,1e-20], mode=\"") +
                                            mode + "\"}"),
        {x});
    REQUIRE_MESSAGE(r.error == "", r.error);
    for (float v : test::values(r.outputs[0]))
      CHECK((std::isfinite(v) && std::fabs(v) <= 40.f)); // bicubic overshoots a little
  }
}
