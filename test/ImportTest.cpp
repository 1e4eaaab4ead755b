//===- ImportTest.cpp - Importing every real PNNX file --------------------===//
//
// Each reference model and each corpus `.param` is imported with
// kc::importPnnx and the result is checked against counts taken from the
// `.param` text itself, with plain string splitting here (not the library's
// reader): the operator count of line 2, one Call in main per real operator,
// one main parameter per pnnx.Input, one primitive function per
// pnnx.Expression, and the `#operand=(dims)dtype` annotations on the IR
// values. Then type inference and the verifier must accept the module.
//
//===----------------------------------------------------------------------===//
#include "ModelFiles.h"
#include "TestPaths.h"

#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/IR/TypeInference.h"
#include "kc/IR/Verifier.h"
#include "kc/Import/Importer.h"

#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace kc;
using kc::test::ModelFile;

namespace {

//===----------------------------------------------------------------------===//
// An independent reading of the .param text
//===----------------------------------------------------------------------===//

struct TextOp {
  std::string type, name;
  std::vector<std::string> inputs, outputs;
  /// `#operand=(dims)dtype` as kc prints the type: `f32[1,3,?,?]`.
  std::map<std::string, std::string> annotations;
  int line = 0;
};

struct TextModel {
  bool magicOk = false;
  long long declaredOps = -1, declaredOperands = -1;
  std::vector<TextOp> ops;
  bool wellFormed = true; ///< false if a line could not be split as expected
};

/// `(1,3,?,?)f32` → `f32[1,3,?,?]`; "" if it does not look like a shape.
std::string shapeToKcType(const std::string &decl) {
  size_t close = decl.find(')');
  if (decl.empty() || decl[0] != '(' || close == std::string::npos)
    return "";
  return decl.substr(close + 1) + "[" + decl.substr(1, close - 1) + "]";
}

TextModel readParamText(const std::string &path) {
  TextModel m;
  std::ifstream in(path);
  std::string line;
  int lineNo = 0, nonBlank = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    std::istringstream ss(line);
    std::vector<std::string> toks;
    for (std::string t; ss >> t;)
      toks.push_back(t);
    if (toks.empty())
      continue;
    ++nonBlank;
    if (nonBlank == 1) {
      m.magicOk = toks.size() == 1 && toks[0] == "7767517";
      continue;
    }
    if (nonBlank == 2) {
      if (toks.size() == 2) {
        m.declaredOps = std::stoll(toks[0]);
        m.declaredOperands = std::stoll(toks[1]);
      }
      continue;
    }
    TextOp op;
    op.line = lineNo;
    if (toks.size() < 4) {
      m.wellFormed = false;
      continue;
    }
    op.type = toks[0];
    op.name = toks[1];
    size_t nin = std::stoul(toks[2]), nout = std::stoul(toks[3]);
    if (4 + nin + nout > toks.size()) {
      m.wellFormed = false;
      continue;
    }
    op.inputs.assign(toks.begin() + 4, toks.begin() + 4 + nin);
    op.outputs.assign(toks.begin() + 4 + nin, toks.begin() + 4 + nin + nout);
    for (size_t i = 4 + nin + nout; i < toks.size(); ++i) {
      const std::string &t = toks[i];
      size_t eq = t.find('=');
      if (t[0] == '#' && eq != std::string::npos)
        op.annotations[t.substr(1, eq - 1)] = shapeToKcType(t.substr(eq + 1));
    }
    m.ops.push_back(std::move(op));
  }
  return m;
}

/// Types that are plumbing rather than operators: they become Vars,
/// Constants, Tuples or main's result, never Calls.
bool isPlumbing(const std::string &type) {
  return type == "pnnx.Input" || type == "pnnx.Output" || type == "pnnx.Attribute" ||
         type == "prim::TupleConstruct";
}

//===----------------------------------------------------------------------===//
// Reading the IR
//===----------------------------------------------------------------------===//

/// The Calls of one function body, without entering the functions it calls.
class BodyCalls final : public MixedModeVisitor {
public:
  using MixedModeVisitor::VisitExpr_;
  std::vector<const CallNode *> calls;
  void VisitExpr_(const CallNode *op) override {
    calls.push_back(op);
    MixedModeVisitor::VisitExpr_(op);
  }
  void VisitExpr_(const FunctionNode *) override {} // stay in this body
};

std::string errorText(llvm::Error e) { return e ? llvm::toString(std::move(e)) : std::string(); }

/// The annotation of `operand` on the line that defines it, else on `user`.
std::string annotationOf(const TextModel &tm, const std::string &operand,
                         const TextOp *user = nullptr) {
  for (const TextOp &op : tm.ops)
    for (const std::string &o : op.outputs)
      if (o == operand) {
        auto it = op.annotations.find(operand);
        if (it != op.annotations.end())
          return it->second;
      }
  if (user) {
    auto it = user->annotations.find(operand);
    if (it != user->annotations.end())
      return it->second;
  }
  return "";
}

/// The operands main returns: pnnx.Output's inputs, with a
/// prim::TupleConstruct feeding it replaced by its inputs.
std::vector<std::string> resultOperands(const TextModel &tm) {
  std::map<std::string, const TextOp *> tuples;
  for (const TextOp &op : tm.ops)
    if (op.type == "prim::TupleConstruct" && op.outputs.size() == 1)
      tuples[op.outputs[0]] = &op;
  std::vector<std::string> out;
  for (const TextOp &op : tm.ops)
    if (op.type == "pnnx.Output")
      for (const std::string &in : op.inputs) {
        auto t = tuples.find(in);
        if (t != tuples.end())
          out.insert(out.end(), t->second->inputs.begin(), t->second->inputs.end());
        else
          out.push_back(in);
      }
  return out;
}

/// Checks main's parameters and results, each Call's result type and each
/// expression function's signature against the annotations of the text.
void checkAnnotatedTypes(const TextModel &tm, const Module &m, const Function &main,
                         const std::map<std::string, const CallNode *> &callByName) {
  // Parameters: one per pnnx.Input, in order, named and typed by its output.
  size_t p = 0;
  for (const TextOp &op : tm.ops) {
    if (op.type != "pnnx.Input")
      continue;
    REQUIRE(p < main->params().size());
    const Var &v = main->params()[p++];
    INFO("pnnx.Input line " << op.line);
    CHECK(v->name() == op.outputs[0]);
    std::string want = annotationOf(tm, op.outputs[0]);
    if (!want.empty())
      CHECK(typeToString(v->type()) == want);
  }

  // Results: main's body (a Tuple when there are several) and its declared type.
  std::vector<std::string> results = resultOperands(tm);
  std::vector<Expr> fields;
  if (results.size() == 1) {
    fields.push_back(main->body());
  } else if (auto *t = llvm::dyn_cast<TupleNode>(main->body().get())) {
    fields.assign(t->fields().begin(), t->fields().end());
  }
  REQUIRE(fields.size() == results.size());
  auto *retTuple = llvm::dyn_cast_or_null<TupleTypeNode>(main->retType().get());
  if (results.size() > 1)
    REQUIRE(retTuple);
  for (size_t i = 0; i < results.size(); ++i) {
    std::string want = annotationOf(tm, results[i]);
    INFO("result " << i << " (operand " << results[i] << ")");
    if (want.empty())
      continue;
    CHECK(typeToString(fields[i]->type()) == want);
    CHECK(typeToString(retTuple ? retTuple->fields()[i] : main->retType()) == want);
  }

  // Every operator's outputs; an expression's operands and result.
  for (const TextOp &op : tm.ops) {
    if (isPlumbing(op.type))
      continue;
    auto it = callByName.find(op.name);
    if (it == callByName.end())
      continue; // reported by the count check
    const CallNode *c = it->second;
    INFO(op.type << " '" << op.name << "' on line " << op.line);
    if (op.outputs.size() == 1) {
      std::string want = annotationOf(tm, op.outputs[0]);
      if (!want.empty())
        CHECK(typeToString(c->type()) == want);
    } else if (op.outputs.size() > 1) {
      auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(c->type().get());
      REQUIRE(tt);
      REQUIRE(tt->size() == op.outputs.size());
      for (size_t i = 0; i < op.outputs.size(); ++i) {
        std::string want = annotationOf(tm, op.outputs[i]);
        if (!want.empty())
          CHECK(typeToString(tt->fields()[i]) == want);
      }
    }
    if (op.type == "pnnx.Expression") {
      Function fn = m.lookup(op.name);
      REQUIRE(fn);
      CHECK(m.callee(*c) == fn.get());
      REQUIRE(fn->params().size() == op.inputs.size());
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        std::string want = annotationOf(tm, op.inputs[i], &op);
        if (!want.empty())
          CHECK(typeToString(fn->params()[i]->type()) == want);
      }
      std::string want = annotationOf(tm, op.outputs[0]);
      if (!want.empty())
        CHECK(typeToString(fn->retType()) == want);
    }
  }
}

/// Imports one file and checks it against its own text.
void checkImport(const ModelFile &f) {
  const std::string what = f.param + (f.bin.empty() ? " (no .bin)" : " (with .bin)");
  INFO("file: " << what);
  TextModel tm = readParamText(f.param);
  REQUIRE(tm.magicOk);
  REQUIRE(tm.wellFormed);
  // Line 2 gives the operator count.
  CHECK(tm.declaredOps == (long long)tm.ops.size());

  auto mod = importPnnx(f.param);
  REQUIRE_MESSAGE(!!mod, errorText(mod.takeError()));
  Module &m = **mod;
  Function main = m.main();
  REQUIRE(main);

  // Counts by kind of line.
  size_t inputs = 0, expressions = 0, operators = 0;
  std::map<const OpDef *, size_t> textOpCounts;
  std::set<std::string> exprNames;
  for (const TextOp &op : tm.ops) {
    if (op.type == "pnnx.Input")
      ++inputs;
    if (isPlumbing(op.type))
      continue;
    ++operators;
    if (op.type == "pnnx.Expression")
      exprNames.insert(op.name);
    else
      ++textOpCounts[OpRegistry::global().getOrOpaque(op.type)];
  }
  expressions = exprNames.size();

  // One Call in main per operator line: op calls plus expression calls.
  BodyCalls bc;
  bc.VisitExpr(main->body());
  size_t exprCalls = 0;
  std::map<const OpDef *, size_t> irOpCounts;
  std::map<std::string, const CallNode *> callByName;
  for (const CallNode *c : bc.calls) {
    callByName[c->name()] = c;
    if (const FunctionNode *fn = m.callee(*c)) {
      CHECK(fn->isPrimitive());
      ++exprCalls;
    } else {
      ++irOpCounts[c->opDef()];
    }
  }
  CHECK(bc.calls.size() == operators);
  CHECK(exprCalls == expressions);
  CHECK(bc.calls.size() - exprCalls == operators - expressions);
  CHECK(callByName.size() == bc.calls.size()); // one call per operator name
  // Operators counted by type (types resolved through the registry, so that
  // F.relu and nn.ReLU count as the same op).
  CHECK(irOpCounts == textOpCounts);
  for (const TextOp &op : tm.ops)
    if (!isPlumbing(op.type))
      CHECK_MESSAGE(callByName.count(op.name), "no Call named '" << op.name << "' (line "
                                                                  << op.line << ")");

  CHECK(main->params().size() == inputs);

  // One primitive function per pnnx.Expression, named after it.
  size_t primitives = 0;
  for (const Function &fn : m.functions())
    if (fn->isPrimitive()) {
      ++primitives;
      CHECK_MESSAGE(exprNames.count(fn->name()), "unexpected function @" << fn->name());
    }
  CHECK(primitives == expressions);
  CHECK(m.functions().size() == expressions + 1); // and main

  checkAnnotatedTypes(tm, m, main, callByName);

  // Weights: present exactly when the archive is.
  PostOrderVisit(main->body(), [&](const Expr &e) {
    if (auto *k = llvm::dyn_cast<ConstantNode>(e.get()))
      if (!k->isScalar())
        CHECK_MESSAGE(k->hasData() == !f.bin.empty(), "weight " << k->name());
  });

  std::string verr = errorText(verifyModule(m));
  CHECK_MESSAGE(verr.empty(), "verify before inference: " << verr);
  std::string ierr = errorText(inferTypes(m));
  REQUIRE_MESSAGE(ierr.empty(), "inferTypes: " << ierr);
  verr = errorText(verifyModule(m));
  CHECK_MESSAGE(verr.empty(), "verify after inference: " << verr);

  // Inference keeps the declared signature (everything here is static).
  INFO("after inferTypes");
  checkAnnotatedTypes(tm, m, m.main(), callByName);
}

} // namespace

TEST_CASE("import: every reference model matches its .param text") {
  KC_SKIP_UNLESS_DIR(kc::test::modelsDir(), "KC_MODELS_DIR");
  auto files = kc::test::referenceModels();
  CHECK(!files.empty());
  for (const ModelFile &f : files) {
    CHECK_MESSAGE(!f.bin.empty(), f.param << " has no model.pnnx.bin");
    checkImport(f);
  }
  MESSAGE("imported " << files.size() << " reference models");
}

TEST_CASE("import: every corpus .param matches its text") {
  KC_SKIP_UNLESS_DIR(kc::test::corpusDir(), "KC_CORPUS_DIR");
  auto files = kc::test::corpusFiles();
  CHECK(!files.empty());
  size_t withBin = 0;
  for (const ModelFile &f : files) {
    withBin += !f.bin.empty();
    checkImport(f);
  }
  MESSAGE("imported " << files.size() << " corpus files, " << withBin << " with weights");
}

TEST_CASE("import: requireWeights fails for a corpus file without its .bin") {
  KC_SKIP_UNLESS_DIR(kc::test::corpusDir(), "KC_CORPUS_DIR");
  for (const ModelFile &f : kc::test::corpusFiles()) {
    if (!f.bin.empty())
      continue;
    INFO(f.param);
    ImportOptions opts;
    opts.requireWeights = true;
    auto mod = importPnnx(f.param, "", opts);
    REQUIRE_FALSE(!!mod);
    std::string msg = errorText(mod.takeError());
    CHECK_MESSAGE(msg.find("error:") != std::string::npos, msg);
    break; // one is enough: the rule does not depend on the model
  }
}
