//===- ImporterErrorTest.cpp - Malformed .pnnx.param text in memory -------===//
//
// importPnnxFromBuffer on bad inputs must return an error, never crash, and
// the message must name the file and the offending line (`bad.pnnx.param:N:`).
// Each text is a valid model with one thing broken, so the error can only
// come from that one thing.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Printer.h"
#include "kc/Import/Importer.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace kc;

namespace {

const char *kFile = "bad.pnnx.param";

/// A .param text: the magic, a header counting `ops`, then the lines. Operator
/// lines start on line 3.
std::string param(const std::vector<std::string> &ops) {
  std::string s = "7767517\n" + std::to_string(ops.size()) + " 99\n";
  for (const std::string &op : ops)
    s += op + "\n";
  return s;
}

/// input (line 3) → `op` (line 4) → output of operand 1 (line 5).
std::string withOp(const std::string &op) {
  return param({"pnnx.Input in0 0 1 0 #0=(1,4)f32", op, "pnnx.Output out0 1 0 1"});
}

/// An expression (line 4) on the one input.
std::string withExpr(const std::string &expr) {
  return withOp("pnnx.Expression e 1 1 0 1 expr=" + expr);
}

std::string importError(const std::string &text, const ImportOptions &opts = {}) {
  auto m = importPnnxFromBuffer(text, kFile, nullptr, opts);
  if (m)
    return "";
  return llvm::toString(m.takeError());
}

/// Checks that `text` fails with an error at `line` whose message has `needle`.
void expectErrorAt(const std::string &text, unsigned line, const std::string &needle,
                   const ImportOptions &opts = {}) {
  INFO("input:\n" << text);
  std::string msg = importError(text, opts);
  REQUIRE_MESSAGE(!msg.empty(), "imported without an error");
  std::string where = std::string(kFile) + ":" + std::to_string(line) + ":";
  CHECK_MESSAGE(msg.find(where) == 0, "error \"" << msg << "\" does not start with " << where);
  CHECK_MESSAGE(msg.find("error:") != std::string::npos, msg);
  CHECK_MESSAGE(msg.find(needle) != std::string::npos,
                "error \"" << msg << "\" does not mention \"" << needle << "\"");
}

} // namespace

TEST_CASE("importer errors: the baseline texts import") {
  // The broken texts below are these with one change; they must be valid.
  CHECK(importError(withOp("nn.ReLU relu 1 1 0 1 #0=(1,4)f32 #1=(1,4)f32")) == "");
  CHECK(importError(withExpr("add(@0,mul(@0,2.5))")) == "");
  CHECK(importError(withOp("nn.Linear fc 1 1 0 1 bias=False in_features=4 out_features=2 "
                           "@weight=(2,4)f32 #1=(1,2)f32")) == "");
}

TEST_CASE("importer errors: file structure") {
  SUBCASE("bad magic") {
    expectErrorAt("7767518\n1 1\npnnx.Input in0 0 1 0\n", 1, "magic");
  }
  SUBCASE("empty text") { expectErrorAt("", 1, "magic"); }
  SUBCASE("bad header") {
    expectErrorAt("7767517\nthree 4\npnnx.Input in0 0 1 0\n", 2, "operator count");
  }
  SUBCASE("header counts more operators than the file has") {
    expectErrorAt("7767517\n5 5\npnnx.Input in0 0 1 0\npnnx.Output out0 1 0 0\n", 4,
                  "declares 5 operators");
  }
  SUBCASE("header operator count over the limit") {
    expectErrorAt("7767517\n1000000000 1\n", 2, "exceeds the limit");
  }
  SUBCASE("a line with too few tokens") {
    expectErrorAt(withOp("nn.ReLU relu 1"), 4, "expected '<type> <name>");
  }
  SUBCASE("a line with fewer operands than it declares") {
    expectErrorAt(withOp("nn.ReLU relu 1 1 0"), 4, "declares 1 inputs and 1 outputs");
  }
  SUBCASE("huge operand counts") {
    expectErrorAt(withOp("nn.ReLU relu 18446744073709551615 18446744073709551615 0 1"), 4,
                  "inputs");
  }
  SUBCASE("a non-numeric operand count") {
    expectErrorAt(withOp("nn.ReLU relu one 1 0 1"), 4, "input count");
  }
  SUBCASE("a parameter that is not key=value") {
    expectErrorAt(withOp("nn.ReLU relu 1 1 0 1 inplace"), 4, "key=value");
  }
  SUBCASE("an over-long line") {
    ImportOptions opts;
    opts.paramLimits.maxLineBytes = 64;
    expectErrorAt(withOp("nn.ReLU relu 1 1 0 1 " + std::string(100, 'x') + "=1"), 4, "limit",
                  opts);
  }
}

TEST_CASE("importer errors: annotations and weights") {
  SUBCASE("unknown dtype in an annotation") {
    expectErrorAt(withOp("nn.ReLU relu 1 1 0 1 #1=(1,4)f33"), 4, "unknown dtype 'f33'");
  }
  SUBCASE("unknown dtype in a weight") {
    expectErrorAt(withOp("nn.Linear fc 1 1 0 1 bias=False in_features=4 out_features=2 "
                         "@weight=(2,4)q8"),
                  4, "unknown dtype 'q8'");
  }
  SUBCASE("a negative dim") {
    expectErrorAt(withOp("nn.ReLU relu 1 1 0 1 #1=(1,-4)f32"), 4, "bad dim");
  }
  SUBCASE("an unclosed shape") {
    expectErrorAt(withOp("nn.ReLU relu 1 1 0 1 #1=(1,4f32"), 4, "missing ')'");
  }
  SUBCASE("a dynamic dim in a weight") {
    expectErrorAt(withOp("nn.Linear fc 1 1 0 1 bias=False in_features=4 out_features=2 "
                         "@weight=(?,4)f32"),
                  4, "dynamic dim");
  }
  SUBCASE("an annotation of an operand not on the line") {
    expectErrorAt(withOp("nn.ReLU relu 1 1 0 1 #7=(1,4)f32"), 4, "not on this line");
  }
  SUBCASE("an argument name for an operand that is not an input") {
    expectErrorAt(withOp("nn.ReLU relu 1 1 0 1 $input=5"), 4, "$input");
  }
  SUBCASE("an input shape whose element count overflows int64") {
    expectErrorAt(param({"pnnx.Input in0 0 1 0 #0=(4294967296,4294967296,4294967296)f32",
                         "nn.ReLU relu 1 1 0 1", "pnnx.Output out0 1 0 1"}),
                  3, "elements");
  }
  SUBCASE("an operator's result shape whose element count overflows int64") {
    expectErrorAt(withOp("nn.ReLU relu 1 1 0 1 #1=(4294967296,4294967296,4294967296)f32"), 4,
                  "elements");
  }
  SUBCASE("a weight shape whose element count overflows int64") {
    expectErrorAt(withOp("nn.Linear fc 1 1 0 1 bias=False in_features=4 out_features=2 "
                         "@weight=(4294967296,4294967296,4294967296)f32"),
                  4, "elements");
  }
  SUBCASE("a shape just over the element limit") {
    ImportOptions opts;
    opts.maxElements = 1000;
    expectErrorAt(withOp("nn.ReLU relu 1 1 0 1 #1=(10,10,11)f32"), 4, "limit of 1000", opts);
  }
  SUBCASE("a weight without its archive when weights are required") {
    ImportOptions opts;
    opts.requireWeights = true;
    expectErrorAt(withOp("nn.Linear fc 1 1 0 1 bias=False in_features=4 out_features=2 "
                         "@weight=(2,4)f32"),
                  4, "fc.weight", opts);
  }
}

TEST_CASE("importer errors: operands") {
  SUBCASE("an undefined operand") {
    expectErrorAt(withOp("nn.ReLU relu 1 1 7 1"), 4, "operand '7' is never defined");
  }
  SUBCASE("an operand used before its definition") {
    expectErrorAt(param({"pnnx.Input in0 0 1 0", "nn.ReLU r1 1 1 2 1", "nn.ReLU r2 1 1 0 2",
                         "pnnx.Output out0 1 0 1"}),
                  4, "used before its definition on line 5");
  }
  SUBCASE("an operand defined twice") {
    expectErrorAt(withOp("nn.ReLU relu 1 1 0 0"), 4, "operand '0' is already defined on line 3");
  }
  SUBCASE("an operand defined twice on one line") {
    expectErrorAt(withOp("torch.unbind u 1 2 0 1 1 dim=0"), 4, "already defined on line 4");
  }
  SUBCASE("an operator name used twice") {
    expectErrorAt(param({"pnnx.Input in0 0 1 0", "nn.ReLU r 1 1 0 1", "nn.ReLU r 1 1 1 2",
                         "pnnx.Output out0 1 0 2"}),
                  5, "operator name 'r' is already used on line 4");
  }
  SUBCASE("pnnx.Input with an input") {
    expectErrorAt(param({"pnnx.Input in0 0 1 0", "pnnx.Input in1 1 1 0 1",
                         "pnnx.Output out0 1 0 1"}),
                  4, "expected 0 inputs");
  }
  SUBCASE("pnnx.Attribute without its @data") {
    expectErrorAt(param({"pnnx.Input in0 0 1 0", "pnnx.Attribute a 0 1 1",
                         "pnnx.Output out0 1 0 1"}),
                  4, "@data");
  }
}

TEST_CASE("importer errors: expressions") {
  SUBCASE("an unclosed parenthesis") {
    expectErrorAt(withExpr("add(@0,@0"), 4, "missing ')'");
  }
  SUBCASE("an extra closing parenthesis") {
    expectErrorAt(withExpr("add(@0,@0))"), 4, "unexpected ')'");
  }
  SUBCASE("a parenthesis before any function") {
    expectErrorAt(withExpr("(@0)"), 4, "unexpected '('");
  }
  SUBCASE("an unclosed list") { expectErrorAt(withExpr("[1,2"), 4, "']'"); }
  SUBCASE("an unknown function") {
    expectErrorAt(withExpr("frobnicate(@0)"), 4, "unknown function 'frobnicate'");
  }
  SUBCASE("too few arguments") {
    expectErrorAt(withExpr("add(@0)"), 4, "'add' takes 2 argument(s), got 1");
  }
  SUBCASE("too many arguments") {
    expectErrorAt(withExpr("neg(@0,@0)"), 4, "'neg' takes 1 argument(s), got 2");
  }
  SUBCASE("size with three arguments") {
    expectErrorAt(withExpr("size(@0,1,2)"), 4, "'size' takes 1 or 2");
  }
  SUBCASE("an operand index out of range") {
    expectErrorAt(withExpr("mul(@0,@3)"), 4, "operand @3 is out of range");
  }
  SUBCASE("a huge operand index") {
    expectErrorAt(withExpr("mul(@0,@99999999999999999999)"), 4, "@99999999999999999999");
  }
  SUBCASE("a bare @") { expectErrorAt(withExpr("neg(@)"), 4, "bad operand reference"); }
  SUBCASE("an empty expression") { expectErrorAt(withExpr(""), 4, "empty expression"); }
  SUBCASE("a missing expr=") {
    expectErrorAt(withOp("pnnx.Expression e 1 1 0 1"), 4, "missing expr=");
  }
  SUBCASE("the pnnx `unary,@0` form with an operand out of range") {
    expectErrorAt(withExpr("expm1,@2"), 4, "operand @2 is out of range");
  }
  SUBCASE("nesting deeper than the limit") {
    std::string e;
    for (int i = 0; i < 300; ++i)
      e += "neg(";
    e += "@0";
    e += std::string(300, ')');
    expectErrorAt(withExpr(e), 4, "deeper than");
  }
  SUBCASE("very deep nesting is refused without recursing through it") {
    std::string e;
    for (int i = 0; i < 200000; ++i)
      e += "neg(";
    e += "@0";
    e += std::string(200000, ')');
    expectErrorAt(withExpr(e), 4, "deeper than");
  }
}
