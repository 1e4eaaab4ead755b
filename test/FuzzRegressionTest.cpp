//===- FuzzRegressionTest.cpp - Inputs that once broke a reader -----------===//
//
// Every file under fuzz/regressions/<target>/ goes through the fuzz target's
// body (fuzz/FuzzTargets.h); under the sanitizer build this catches any
// return of the bug. New crashers found by scripts/fuzz.sh are kept here.
//
//===----------------------------------------------------------------------===//
#include "../fuzz/FuzzTargets.h"

#include "kc/IR/ScalarEval.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <doctest/doctest.h>

#include <cmath>

namespace {

size_t runAll(const char *target, int (*body)(const uint8_t *, size_t)) {
  std::string dir = std::string(KC_SOURCE_DIR) + "/fuzz/regressions/" + target;
  std::error_code ec;
  size_t n = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    auto buf = llvm::MemoryBuffer::getFile(it->path());
    REQUIRE(bool(buf));
    INFO(it->path());
    auto bytes = (*buf)->getBuffer();
    CHECK(body(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()) == 0);
    ++n;
  }
  return n;
}

} // namespace

TEST_CASE("fuzz regressions: every kept input is handled without a crash") {
  CHECK(runAll("param", kc::fuzz::param) >= 0);
  CHECK(runAll("zip", kc::fuzz::zip) >= 1);
  CHECK(runAll("npy", kc::fuzz::npy) >= 15);
  CHECK(runAll("expression", kc::fuzz::expression) >= 1);
  CHECK(runAll("kcText", kc::fuzz::kcText) >= 3);
  CHECK(runAll("model", kc::fuzz::model) >= 20);
}

namespace {

/// The error of importing `body` (the lines after the header) and inferring
/// its types, or "" when both succeed.
std::string inferError(const std::string &body, int lines) {
  std::string text =
      "7767517\n" + std::to_string(lines) + " " + std::to_string(lines) + "\n" + body;
  auto m = kc::importPnnxFromBuffer(text, "hostile.param", nullptr);
  if (!m)
    return llvm::toString(m.takeError());
  llvm::Error e = kc::inferTypes(**m);
  return e ? llvm::toString(std::move(e)) : "";
}

} // namespace

TEST_CASE("limits: attributes whose output sizes overflow int64 are refused with errors") {
  CHECK(inferError("pnnx.Input in 0 1 a #a=(1,1,4,4)f32\n"
                   "nn.Conv2d c 1 1 a b kernel_size=(3,3) padding=(9223372036854775807,1)\n"
                   "pnnx.Output out 1 0 b\n",
                   3)
            .find("outside int64") != std::string::npos);
  CHECK(inferError("pnnx.Input in 0 1 a #a=(1,4,4,4)f32\n"
                   "nn.PixelUnshuffle c 1 1 a b downscale_factor=0\npnnx.Output out 1 0 b\n",
                   3)
            .find("must be positive, got 0") != std::string::npos);
  CHECK(inferError("pnnx.Input in 0 1 a #a=(4)f32\n"
                   "Tensor.reshape c 1 1 a b shape=(4294967296,4294967296,4294967296)\n"
                   "pnnx.Output out 1 0 b\n",
                   3)
            .find("more elements than int64 holds") != std::string::npos);
  CHECK(inferError("pnnx.Input in 0 1 a #a=(16777216)f32\ntorch.unbind c 1 1 a b dim=0\n"
                   "pnnx.Output out 1 0 b\n",
                   3)
            .find("would produce 16777216 outputs, more than the limit of 65536") !=
        std::string::npos);
  // A huge step still gives one element, as PyTorch does.
  CHECK(inferError("pnnx.Input in 0 1 a #a=(4)f32\n"
                   "Tensor.slice t 1 1 a b dim=0 start=0 end=4 step=9223372036854775807\n"
                   "pnnx.Output out 1 0 b #b=(1)f32\n",
                   3) == "");
}

TEST_CASE("limits: integer folding never overflows; what does not fit in int64 is not folded") {
  using kc::AttrValue;
  auto eval = [](const char *op, std::vector<AttrValue> args) {
    return kc::evalScalarOp(op, args);
  };
  auto I = [](int64_t v) { return AttrValue::integer(v); };
  const int64_t max = INT64_MAX, min = INT64_MIN;
  CHECK(!eval("mul", {I(max), I(2)}));
  CHECK(!eval("add", {I(max), I(1)}));
  CHECK(!eval("sub", {I(min), I(1)}));
  CHECK(!eval("neg", {I(min)}));
  CHECK(!eval("abs", {I(min)}));
  CHECK(!eval("square", {I(int64_t(1) << 32)}));
  CHECK(!eval("floor_divide", {I(min), I(-1)}));
  CHECK(!eval("floor_divide", {I(1), I(0)}));
  CHECK(eval("remainder", {I(min), I(-1)})->getInt() == 0);
  CHECK(eval("remainder", {I(max), I(-2)})->getInt() == -1);
  CHECK(eval("remainder", {I(-7), I(2)})->getInt() == 1);
  CHECK(eval("floor_divide", {I(-7), I(2)})->getInt() == -4);
  CHECK(eval("lshift", {I(-1), I(3)})->getInt() == -8);
  CHECK(!eval("lshift", {I(max), I(1)}));
  CHECK(eval("rshift", {I(-9), I(1)})->getInt() == -5);
  CHECK(eval("pow", {I(2), I(62)})->getInt() == int64_t(1) << 62);
  CHECK(!eval("pow", {I(2), I(63)}));
  CHECK(eval("pow", {I(-1), I(65)})->getInt() == -1);
  CHECK(eval("pow", {I(0), I(0)})->getInt() == 1);
  CHECK(!eval("ceil", {AttrValue::real(1e300)}));
  CHECK(!eval("int", {AttrValue::real(NAN)}));
  CHECK(eval("floor", {AttrValue::real(-2.5)})->getInt() == -3);
}

TEST_CASE("limits: deeply nested kc text is refused, not recursed into") {
  std::string type(1000, '(');
  type += "f32[]" + std::string(1000, ')');
  auto m = kc::parseModule("fn @main(%x: " + type + ") -> ? {\n  return %x\n}\n", "deep.kc");
  REQUIRE(!m);
  CHECK(llvm::toString(m.takeError()).find("nested deeper than 256") != std::string::npos);
}

TEST_CASE("limits: a deep expression and an overflowing shape are refused with errors") {
  std::string deep;
  for (int i = 0; i < 300; ++i)
    deep += "add(";
  deep += "@0";
  for (int i = 0; i < 300; ++i)
    deep += ",1)";
  std::vector<kc::Var> params{kc::var("0", kc::tensorType(kc::DType::F32, {2}))};
  auto e = kc::parseExpression(deep, params);
  REQUIRE(!e);
  CHECK(llvm::toString(e.takeError()).find("deeper") != std::string::npos);

  auto m = kc::importPnnxFromBuffer(
      "7767517\n2 2\npnnx.Input in 0 1 0 #0=(4294967296,4294967296,4294967296)f32\n"
      "pnnx.Output out 1 0 0\n",
      "big.param", nullptr);
  REQUIRE(!m);
  std::string msg = llvm::toString(m.takeError());
  CHECK(msg.find("big.param:3") != std::string::npos);
  CHECK(msg.find("elements") != std::string::npos);
}

TEST_CASE("limits: a 10 MB single-line param file is refused quickly") {
  std::string text = "7767517\n1 1\nnn.ReLU r 1 1 a b " + std::string(10 << 20, 'x') + "\n";
  auto pf = kc::parseParamFile(text, "long.param");
  REQUIRE(!pf);
  CHECK(llvm::toString(pf.takeError()).find("long.param:3") != std::string::npos);
}

TEST_CASE("limits: a 100,000-op chain imports, infers, verifies and runs -O") {
  std::string text = "7767517\n100002 100002\npnnx.Input in 0 1 v0 #v0=(1,4)f32\n";
  for (int i = 0; i < 100000; ++i)
    text += "nn.ReLU r" + std::to_string(i) + " 1 1 v" + std::to_string(i) + " v" +
            std::to_string(i + 1) + "\n";
  text += "pnnx.Output out 1 0 v100000\n";
  auto m = kc::importPnnxFromBuffer(text, "chain.param", nullptr);
  REQUIRE(bool(m));
  REQUIRE(!kc::inferTypes(**m));
  REQUIRE(!kc::verifyModule(**m));
  kc::PassManager pm;
  REQUIRE(!pm.addPipeline(kc::defaultPipeline()));
  llvm::Error err = pm.run(**m);
  CHECK_MESSAGE(!err, llvm::toString(std::move(err)));
  CHECK(kc::typeToString((*m)->main()->body()->type()) == "f32[1,4]");
}
