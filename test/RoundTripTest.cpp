//===- RoundTripTest.cpp - kc text and PNNX export round trips ------------===//
//
// For every reference model, op fixture and corpus file:
//   print → parseModule → print is exact, and
//   exportPnnx → importPnnxFromBuffer → print is the original print,
// both as imported and after type inference; weight bytes survive both ways.
// Then parseModule's diagnostics: `name:line:col: error: ...`.
//
//===----------------------------------------------------------------------===//
#include "ModelFiles.h"
#include "TestPaths.h"

#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/IR/Parser.h"
#include "kc/IR/Printer.h"
#include "kc/IR/TypeInference.h"
#include "kc/Import/Exporter.h"
#include "kc/Import/ExpressionParser.h"
#include "kc/Import/Importer.h"
#include "kc/Support/ZipArchive.h"

#include <regex>
#include <doctest/doctest.h>

#include <map>
#include <sstream>

using namespace kc;
using kc::test::ModelFile;

namespace {

std::string errorText(llvm::Error e) { return e ? llvm::toString(std::move(e)) : std::string(); }

/// "" when equal, else the first differing line of each, for the failure message.
std::string firstDifference(const std::string &a, const std::string &b) {
  if (a == b)
    return "";
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool ha = bool(std::getline(sa, la)), hb = bool(std::getline(sb, lb));
    if (!ha && !hb)
      return "texts differ (line endings?)";
    if (!ha || !hb || la != lb) {
      std::ostringstream os;
      os << "line " << line << ":\n  expected: " << (ha ? la : "<end>")
         << "\n  actual:   " << (hb ? lb : "<end>");
      return os.str();
    }
  }
}

/// The bytes of every tensor constant reachable from main, by name; a
/// constant without bytes maps to {0xde, 0xad} (no real weight is 2 bytes of
/// f32), so "has bytes" is compared too.
std::map<std::string, std::vector<uint8_t>> weightBytes(const Module &m) {
  std::map<std::string, std::vector<uint8_t>> out;
  PostOrderVisit(m.main()->body(), [&](const Expr &e) {
    if (auto *k = llvm::dyn_cast<ConstantNode>(e.get())) {
      if (k->isScalar())
        return;
      if (k->hasData())
        out[k->name()].assign(k->data()->bytes().begin(), k->data()->bytes().end());
      else
        out[k->name()] = {0xde, 0xad};
    }
  });
  return out;
}

/// The checks for one module state (as imported, or typed).
/// `typed`: run inferTypes on each re-read module before printing.
void checkRoundTrips(const ModelFile &f, const Module &m, bool typed) {
  const std::string state = typed ? "after inferTypes" : "as imported";
  INFO(state);
  const std::string original = printModule(m);
  REQUIRE(!original.empty());
  const auto originalWeights = weightBytes(m);

  // print → parse → print.
  {
    auto parsed = parseModule(original, f.param + ".kc");
    REQUIRE_MESSAGE(!!parsed, errorText(parsed.takeError()));
    if (typed)
      REQUIRE(errorText(inferTypes(**parsed)).empty());
    std::string again = printModule(**parsed);
    CHECK_MESSAGE(again == original, firstDifference(original, again));
  }
  // The same with the archive: the weights are bound by name, byte for byte.
  if (!f.bin.empty()) {
    auto zip = ZipReader::open(f.bin);
    REQUIRE_MESSAGE(!!zip, errorText(zip.takeError()));
    auto parsed = parseModule(original, f.param + ".kc", zip->get());
    REQUIRE_MESSAGE(!!parsed, errorText(parsed.takeError()));
    CHECK(weightBytes(**parsed) == originalWeights);
  }

  // exportPnnx → importPnnxFromBuffer → print.
  auto exported = exportPnnx(m);
  REQUIRE_MESSAGE(!!exported, errorText(exported.takeError()));
  CHECK(exported->param.rfind("7767517\n", 0) == 0);
  // The archive is written exactly when every weight has bytes (models
  // without weights, e.g. a lone Upsample, get an empty archive).
  CHECK(exported->bin.has_value() == (!f.bin.empty() || originalWeights.empty()));
  if (!exported->bin)
    CHECK(!exported->missingWeight.empty());
  std::unique_ptr<ZipReader> zip;
  const std::string name = "exported.pnnx.param";
  if (exported->bin) {
    auto z = ZipReader::fromBuffer(*exported->bin, "exported.pnnx.bin");
    REQUIRE_MESSAGE(!!z, errorText(z.takeError()));
    zip = std::move(*z);
  }
  auto back = importPnnxFromBuffer(exported->param, name, zip.get());
  REQUIRE_MESSAGE(!!back, errorText(back.takeError()));
  if (typed)
    REQUIRE(errorText(inferTypes(**back)).empty());
  std::string again = printModule(**back);
  CHECK_MESSAGE(again == original, firstDifference(original, again));
  CHECK(weightBytes(**back) == originalWeights);

  // Exporting the re-imported module writes the same .param again.
  auto reexported = exportPnnx(**back);
  REQUIRE_MESSAGE(!!reexported, errorText(reexported.takeError()));
  CHECK_MESSAGE(reexported->param == exported->param,
                firstDifference(exported->param, reexported->param));
  CHECK(reexported->bin == exported->bin);
}

/// `mayFailTypes`: a model kc cannot type (an op fixture of a mode kc
/// refuses) still round-trips as imported; its type error names a line.
void checkFile(const ModelFile &f, bool mayFailTypes = false) {
  INFO("file: " << f.param);
  auto mod = importPnnx(f.param);
  REQUIRE_MESSAGE(!!mod, errorText(mod.takeError()));
  checkRoundTrips(f, **mod, /*typed=*/false);
  std::string typeError = errorText(inferTypes(**mod));
  if (mayFailTypes && !typeError.empty()) {
    // `FILE:LINE:COL: error:` (type errors) or `(line N)` (run-time errors).
    static const std::regex namesLine(R"(:[0-9]+:[0-9]+: error:|\(line [0-9]+\))");
    CHECK_MESSAGE(std::regex_search(typeError, namesLine), typeError);
    return;
  }
  REQUIRE_MESSAGE(typeError.empty(), typeError);
  checkRoundTrips(f, **mod, /*typed=*/true);
}

} // namespace

TEST_CASE("round trip: every reference model") {
  KC_SKIP_UNLESS_DIR(kc::test::modelsDir(), "KC_MODELS_DIR");
  auto files = kc::test::referenceModels();
  CHECK(!files.empty());
  for (const ModelFile &f : files)
    checkFile(f);
}

TEST_CASE("round trip: every op fixture, those kc cannot run included") {
  auto files = kc::test::opFixtures();
  CHECK(files.size() >= 100);
  for (const ModelFile &f : files)
    checkFile(f, /*mayFailTypes=*/true);
}

TEST_CASE("round trip: every corpus file") {
  KC_SKIP_UNLESS_DIR(kc::test::corpusDir(), "KC_CORPUS_DIR");
  auto files = kc::test::corpusFiles();
  CHECK(!files.empty());
  for (const ModelFile &f : files)
    checkFile(f);
}

//===----------------------------------------------------------------------===//
// parseModule diagnostics
//===----------------------------------------------------------------------===//

namespace {

/// The error parseModule gives for `text` (named t.kc); "" if it parses.
std::string parseError(const std::string &text) {
  auto m = parseModule(text, "t.kc");
  return m ? std::string() : errorText(m.takeError());
}

/// True if `msg` starts with `t.kc:<line>:<col>: error: `.
bool hasLocation(const std::string &msg) {
  llvm::StringRef s(msg);
  if (!s.consume_front("t.kc:"))
    return false;
  for (int field = 0; field < 2; ++field) {
    size_t digits = 0;
    while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9')
      ++digits;
    if (digits == 0 || s[0] == '0')
      return false;
    s = s.drop_front(digits);
    if (!s.consume_front(":"))
      return false;
  }
  return s.startswith(" error: ");
}

} // namespace

TEST_CASE("parseModule: a well-formed module parses") {
  // The baseline the error cases below are variations of.
  const char *ok = "fn @main(%x: f32[2]) -> f32[2] {\n"
                   "  %0 = nn.ReLU(%x) : f32[2]\n"
                   "  return %0\n"
                   "}\n";
  CHECK(parseError(ok) == "");
}

TEST_CASE("parseModule: errors name the line and column") {
  SUBCASE("use of an undefined value") {
    std::string msg = parseError("fn @main(%x: f32[2]) -> f32[2] {\n"
                                 "  %0 = nn.ReLU(%y) : f32[2]\n"
                                 "  return %0\n"
                                 "}\n");
    CHECK_MESSAGE(hasLocation(msg), msg);
    CHECK_MESSAGE(msg.find("t.kc:2:16: error:") != std::string::npos, msg);
    CHECK_MESSAGE(msg.find("undefined value '%y'") != std::string::npos, msg);
  }
  SUBCASE("an undefined value returned") {
    std::string msg = parseError("fn @main(%x: f32[2]) -> f32[2] {\n"
                                 "  return %nope\n"
                                 "}\n");
    CHECK_MESSAGE(hasLocation(msg), msg);
    CHECK_MESSAGE(msg.find("t.kc:2:") != std::string::npos, msg);
  }
  SUBCASE("a bad element type") {
    std::string msg = parseError("fn @main(%x: q32[2]) -> f32[2] {\n"
                                 "  return %x\n"
                                 "}\n");
    CHECK_MESSAGE(hasLocation(msg), msg);
    CHECK_MESSAGE(msg.find("t.kc:1:14: error:") != std::string::npos, msg);
  }
  SUBCASE("a bad dimension") {
    std::string msg = parseError("fn @main(%x: f32[2,x]) -> f32[2] {\n"
                                 "  return %x\n"
                                 "}\n");
    CHECK_MESSAGE(hasLocation(msg), msg);
    CHECK_MESSAGE(msg.find("t.kc:1:") != std::string::npos, msg);
  }
  SUBCASE("a type with more elements than int64 holds") {
    std::string msg = parseError("fn @main(%x: f32[4294967296,4294967296,4294967296]) -> f32[2] {\n"
                                 "  return %x\n"
                                 "}\n");
    CHECK_MESSAGE(hasLocation(msg), msg);
    CHECK_MESSAGE(msg.find("t.kc:1:") != std::string::npos, msg);
  }
  SUBCASE("a missing return at the end of the text") {
    std::string msg = parseError("fn @main(%x: f32[2]) -> f32[2] {\n"
                                 "  %0 = nn.ReLU(%x) : f32[2]\n");
    CHECK_MESSAGE(hasLocation(msg), msg);
    CHECK_MESSAGE(msg.find("missing 'return'") != std::string::npos, msg);
  }
  SUBCASE("a missing return before the closing brace") {
    std::string msg = parseError("fn @main(%x: f32[2]) -> f32[2] {\n"
                                 "  %0 = nn.ReLU(%x) : f32[2]\n"
                                 "}\n");
    CHECK_MESSAGE(hasLocation(msg), msg);
    CHECK_MESSAGE(msg.find("t.kc:3:1: error:") != std::string::npos, msg);
    CHECK_MESSAGE(msg.find("return") != std::string::npos, msg);
  }
  SUBCASE("a value defined twice") {
    std::string msg = parseError("fn @main(%x: f32[2]) -> f32[2] {\n"
                                 "  %0 = nn.ReLU(%x) : f32[2]\n"
                                 "  %0 = nn.ReLU(%x) : f32[2]\n"
                                 "  return %0\n"
                                 "}\n");
    CHECK_MESSAGE(msg.find("t.kc:3:3: error:") != std::string::npos, msg);
  }
  SUBCASE("a call of an undefined function") {
    std::string msg = parseError("fn @main(%x: f32[2]) -> f32[2] {\n"
                                 "  %0 = @nowhere(%x) : f32[2]\n"
                                 "  return %0\n"
                                 "}\n");
    CHECK_MESSAGE(msg.find("t.kc:2:8: error:") != std::string::npos, msg);
  }
}

namespace {

/// print(parse(text)), or the parse error.
std::string reprint(const std::string &text) {
  auto m = parseModule(text, "t.kc");
  return m ? printModule(**m) : errorText(m.takeError());
}

} // namespace

TEST_CASE("round trip: names and strings of every byte read back exactly") {
  // Every byte value once, NUL and the quote and backslash included, in a
  // parameter name, a PNNX name, a string attribute and a string list.
  std::string bytes;
  for (int c = 0; c < 256; ++c)
    bytes += char(c);
  std::vector<AttrValue> strings = {AttrValue::string(bytes),
                                    AttrValue::stringList({bytes, "", std::string(1, '\0')})};
  Var x = var(bytes, tensorType(DType::F32, {2}));
  Attrs attrs;
  attrs.set("s", strings[0]);
  attrs.set("list", strings[1]);
  attrs.set(bytes, AttrValue::integer(1));
  Call c = call(OpRegistry::global().getOrOpaque("nn.ReLU")->node(), {x}, attrs, {}, bytes);
  c->setType(x->type());
  Module m;
  m.add(make<const FunctionNode>("main", std::vector<Var>{x}, c, x->type(), false));
  std::string first = printModule(m);
  INFO(first);
  auto parsed = parseModule(first, "t.kc");
  REQUIRE_MESSAGE(bool(parsed), (parsed ? "" : errorText(parsed.takeError())));
  Function main = (*parsed)->main();
  REQUIRE(main->params().size() == 1);
  CHECK(main->params()[0]->name() == bytes);
  auto *back = llvm::dyn_cast<CallNode>(main->body().get());
  REQUIRE(back);
  CHECK(back->name() == bytes);
  CHECK(back->attrs() == attrs);
  // The text is a fixed point: printing again gives the same bytes (a NUL
  // used to print as \x000 and grow by a digit each time).
  CHECK(printModule(**parsed) == first);
  CHECK(first.find("\\x000") == std::string::npos);
}

TEST_CASE("round trip: integers keep every int64 value; larger ones are refused") {
  const char *head = "fn @main(%x: f32[2]) -> f32[2] {\n  %0 = nn.ReLU(%x) {";
  const char *tail = "} : f32[2]\n  return %0\n}\n";
  for (const char *v : {"9223372036854775807", "-9223372036854775808", "[9223372036854775807,"
                                                                         "-9223372036854775808]"}) {
    std::string text = std::string(head) + "a=" + v + tail;
    CHECK(reprint(text) == text);
  }
  for (const char *v : {"9223372036854775808", "-9223372036854775809",
                        "100000000000000000000000", "[1,100000000000000000000000]"}) {
    std::string msg = reprint(std::string(head) + "a=" + v + tail);
    INFO(msg);
    // At the value, or at the list's element.
    CHECK(msg.find(v[0] == '[' ? "t.kc:2:26: error: integer '" : "t.kc:2:23: error: integer '") !=
          std::string::npos);
    CHECK(msg.find("' does not fit in int64") != std::string::npos);
  }
  // The same in a .param file and in an expression.
  auto pf = parseParamFile("7767517\n1 1\nnn.ReLU r 0 0 a=100000000000000000000000\n", "t.param");
  REQUIRE(!pf);
  CHECK(errorText(pf.takeError()) ==
        "t.param:3:17: error: parameter 'a': integer '100000000000000000000000' does not fit in "
        "int64");
  std::vector<Var> params{var("0", tensorType(DType::F32, {2}))};
  auto e = parseExpression("add(@0,100000000000000000000000)", params);
  REQUIRE(!e);
  CHECK(errorText(e.takeError()) ==
        "expression column 8: integer '100000000000000000000000' does not fit in int64");
}

TEST_CASE("export: an expression literal PNNX would read back differently is refused") {
  // A string literal holding ',' would split into two arguments of `add`.
  Var a = var("0", tensorType(DType::F32, {2}));
  Call body = call("add", {a, scalarConstant(AttrValue::string("x,y"), Type())});
  Function e = make<const FunctionNode>("e", std::vector<Var>{a}, body, Type(), true);
  Var x = var("x", tensorType(DType::F32, {2}));
  Call use = call(e, {x}, {}, {}, "e");
  use->setLoc({2, 3});
  Module m;
  m.setSourceName("t.kc");
  m.add(e);
  m.add(make<const FunctionNode>("main", std::vector<Var>{x}, use, Type(), false));
  auto r = exportPnnx(m);
  REQUIRE(!r);
  CHECK(errorText(r.takeError()) ==
        "t.kc:2:3: error: @main: e 'e': cannot export: the expression of @e, written "
        "'add(@0,x,y)', would not read back the same");
}
