//===- FuzzRegressionTest.cpp - Inputs that once broke a reader -----------===//
//
// Every file under fuzz/regressions/<target>/ goes through the fuzz target's
// body (fuzz/FuzzTargets.h); under the sanitizer build this catches any
// return of the bug. New crashers found by scripts/fuzz.sh are kept here.
//
//===----------------------------------------------------------------------===//
#include "../fuzz/FuzzTargets.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <doctest/doctest.h>

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
  CHECK(runAll("expression", kc::fuzz::expression) >= 1);
  CHECK(runAll("kcText", kc::fuzz::kcText) >= 1);
  CHECK(runAll("model", kc::fuzz::model) >= 2);
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
