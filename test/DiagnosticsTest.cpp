//===- DiagnosticsTest.cpp - Errors name their place, briefly ------------===//
//
// Every error message names the file (and the line where there is one) and
// quotes at most kMaxQuotedBytes of the offending input, however large it is:
// each hostile input below holds a 300 KB token where the error quotes input.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Parser.h"
#include "kc/IR/TypeInference.h"
#include "kc/IR/Verifier.h"
#include "kc/Import/Importer.h"
#include "kc/Pass/PassManager.h"
#include "kc/Support/Npy.h"
#include "kc/Support/Quote.h"

#include <doctest/doctest.h>

#include <string>

using namespace kc;

namespace {

const std::string kHuge(300000, 'x');
/// The quoted input plus the fixed text of the longest message.
constexpr size_t kMaxMessage = 2 * kMaxQuotedBytes + 400;

/// The error of importing `lines` (after the header), inferring and verifying.
std::string pnnxError(const std::string &lines, int count) {
  std::string text =
      "7767517\n" + std::to_string(count) + " " + std::to_string(count) + "\n" + lines;
  auto m = importPnnxFromBuffer(text, "hostile.param", nullptr);
  if (!m)
    return llvm::toString(m.takeError());
  if (llvm::Error e = inferTypes(**m))
    return llvm::toString(std::move(e));
  if (llvm::Error e = verifyModule(**m))
    return llvm::toString(std::move(e));
  return "";
}

/// The error of parsing kc text, inferring and verifying.
std::string textError(const std::string &text) {
  auto m = parseModule(text, "hostile.kc");
  if (!m)
    return llvm::toString(m.takeError());
  if (llvm::Error e = inferTypes(**m))
    return llvm::toString(std::move(e));
  if (llvm::Error e = verifyModule(**m))
    return llvm::toString(std::move(e));
  return "";
}

void expectBrief(const std::string &msg, const std::string &where, const char *what) {
  INFO(what << ": " << msg.substr(0, 600));
  CHECK(!msg.empty());
  CHECK(msg.find(where) != std::string::npos);
  CHECK(msg.size() <= kMaxMessage);
}

} // namespace

TEST_CASE("diagnostics: quoteInput bounds and escapes what it quotes") {
  CHECK(quoteInput("abc") == "'abc'");
  CHECK(quoteInput(llvm::StringRef("a\0b'\\\n", 6)) == "'a\\x00b\\x27\\x5c\\x0a'");
  std::string q = quoteInput(kHuge);
  CHECK(q == "'" + std::string(kMaxQuotedBytes, 'x') + "...' (300000 bytes)");
  CHECK(clipInput("f32[2]") == "f32[2]");
}

TEST_CASE("diagnostics: .param errors name file and line and quote little") {
  const std::string in = "pnnx.Input in 0 1 a #a=(2,3)f32\n";
  const std::string out = "pnnx.Output out 1 0 b\n";
  struct Case {
    const char *what;
    std::string lines;
    const char *where;
  };
  for (const Case &c : {
           Case{"token without '='", in + "nn.ReLU r 1 1 a b " + kHuge + "\n" + out,
                "hostile.param:4:"},
           Case{"input count", in + "nn.ReLU r " + kHuge + " 1 a b\n" + out, "hostile.param:4:"},
           Case{"weight shape", in + "nn.Linear l 1 1 a b @weight=(" + kHuge + ")f32\n" + out,
                "hostile.param:4:"},
           Case{"dtype", in + "nn.ReLU r 1 1 a b #b=(2,3)" + kHuge + "\n" + out,
                "hostile.param:4:"},
           Case{"annotation", in + "nn.ReLU r 1 1 a b #" + kHuge + "=(2,3)f32\n" + out,
                "hostile.param:4:"},
           Case{"argument name", in + "nn.ReLU r 1 1 a b $input=" + kHuge + "\n" + out,
                "hostile.param:4:"},
           Case{"undefined operand", in + "nn.ReLU r 1 1 " + kHuge + " b\n" + out,
                "hostile.param:4:"},
           Case{"expression function", in + "pnnx.Expression e 1 1 a b expr=" + kHuge + "(@0)\n" + out,
                "hostile.param:4:"},
           Case{"expression operand", in + "pnnx.Expression e 1 1 a b expr=@" + kHuge + "\n" + out,
                "hostile.param:4:"},
           Case{"long expression", in + "pnnx.Expression e 1 1 a b expr=add(@0," + kHuge + "\n" + out,
                "hostile.param:4:"},
           Case{"verifier, long name", in + "nn.Softmax " + kHuge + " 1 1 a b dim=\n" + out,
                "hostile.param:4:1: error: @main: nn.Softmax"},
           Case{"type rule, long name", in + "torch.amax " + kHuge + " 1 1 a b dim=(5)\n" + out,
                "hostile.param:4:1: error: @main: torch.amax"},
           Case{"contradicting annotations", "pnnx.Input in 0 1 " + kHuge + " #" + kHuge +
                    "=(2,3)f32\nnn.ReLU r 1 1 " + kHuge + " b #" + kHuge + "=(2,4)f32\n" + out,
                "hostile.param:4:"},
       }) {
    std::string msg = pnnxError(c.lines, 3);
    expectBrief(msg, c.where, c.what);
  }
}

TEST_CASE("diagnostics: kc text errors name file and line and quote little") {
  std::string manyDims = "f32[";
  for (int i = 0; i < 50000; ++i)
    manyDims += i ? ",1" : "1";
  manyDims += "]";
  struct Case {
    const char *what;
    std::string text;
    const char *where;
  };
  for (const Case &c : {
           Case{"undefined value", "fn @main(%x: f32[2]) -> ? {\n  return %" + kHuge + "\n}\n",
                "hostile.kc:2:"},
           Case{"undefined function",
                "fn @main(%x: f32[2]) -> ? {\n  %0 = @" + kHuge + "(%x) : ?\n  return %0\n}\n",
                "hostile.kc:2:"},
           Case{"attribute value",
                "fn @main(%x: f32[2]) -> ? {\n  %0 = nn.ReLU(%x) {a=" + kHuge + "} : ?\n  return %0\n}\n",
                "hostile.kc:2:"},
           Case{"literal",
                "fn @main(%x: f32[2]) -> ? {\n  %0 = add(%x, 1" + std::string(300000, '0') +
                    ":i32) : ?\n  return %0\n}\n",
                "hostile.kc:2:"},
           Case{"element type", "fn @main(%x: " + kHuge + "[2]) -> ? {\n  return %x\n}\n",
                "hostile.kc:1:"},
           Case{"inferred type",
                "fn @main(%x: " + manyDims + ") -> ? {\n  %0 = nn.ReLU(%x) : f32[2]\n  return %0\n}\n",
                "hostile.kc:2:3: error: @main: nn.ReLU: inferred"},
           Case{"parameter twice",
                "fn @main(%" + kHuge + ": f32[2], %" + kHuge + ": f32[2]) -> ? {\n  return %0\n}\n",
                "hostile.kc:1:"},
       }) {
    std::string msg = textError(c.text);
    expectBrief(msg, c.where, c.what);
  }
}

TEST_CASE("diagnostics: pipeline and .npy errors quote little") {
  for (const std::string &p : {kHuge, "cse{" + kHuge, "cse{" + kHuge + "=1}",
                               "merge-expressions{max-operands=" + kHuge + "}", "cse," + kHuge}) {
    PassManager pm;
    llvm::Error e = pm.addPipeline(p);
    REQUIRE(bool(e));
    expectBrief(llvm::toString(std::move(e)), "pass pipeline: ", "pipeline");
  }
  auto npy = [](const std::string &header) {
    std::string h = header;
    h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
    h += '\n';
    std::string bytes = std::string("\x93NUMPY\x02\x00", 8);
    for (int i = 0; i < 4; ++i)
      bytes += char((h.size() >> (8 * i)) & 0xff);
    bytes += h;
    auto a = readNpyBuffer(llvm::arrayRefFromStringRef(bytes), "hostile.npy");
    REQUIRE(!a);
    return llvm::toString(a.takeError());
  };
  expectBrief(npy("{'" + kHuge + "': 1}"), "hostile.npy: ", "npy key");
  expectBrief(npy("{'descr': '" + kHuge + "', 'fortran_order': False, 'shape': (1,), }"),
              "hostile.npy: ", "npy descr");
  std::string shape = "(";
  for (int i = 0; i < 100000; ++i)
    shape += "1, ";
  expectBrief(npy("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + "), }"),
              "hostile.npy: ", "npy shape");
}
