//===- kc-opt.cpp - Run passes over a model and print the IR --------------===//
//
// kc's counterpart of mlir-opt: reads a `.pnnx.param` model (its `.bin`
// beside it) or kc text, runs a pass pipeline and writes kc text, PNNX or
// a Graphviz picture.
//
//===----------------------------------------------------------------------===//
#include "../common/Diagnostics.h"
#include "../common/InputShape.h"
#include "../common/ToolVersion.h"
#include "kc/IR/GraphViz.h"
#include "kc/IR/Printer.h"
#include "kc/IR/Specialize.h"
#include "kc/IR/Summary.h"
#include "kc/IR/TypeInference.h"
#include "kc/IR/Verifier.h"
#include "kc/Import/Exporter.h"
#include "kc/Import/Importer.h"
#include "kc/Import/ModuleLoader.h"
#include "kc/Pass/PassManager.h"
#include "kc/Runtime/Interpreter.h"
#include "kc/Support/OutputFile.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Format.h"

using namespace kc;
namespace cl = llvm::cl;

static cl::OptionCategory kcCat("kc-opt options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .pnnx.param or .kc, - for stdin>"),
                                      cl::init("-"), cl::cat(kcCat));
static cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout; for --emit=pnnx "
                                                     "the .param, with the .bin beside it)"),
                                       cl::value_desc("file"), cl::init("-"), cl::cat(kcCat));
enum class Emit { Kc, Pnnx, Dot, Summary };
static cl::opt<Emit> emit("emit", cl::desc("What to write"), cl::init(Emit::Kc),
                          cl::values(clEnumValN(Emit::Kc, "kc", "kc textual IR (default)"),
                                     clEnumValN(Emit::Pnnx, "pnnx", ".pnnx.param + .pnnx.bin"),
                                     clEnumValN(Emit::Dot, "dot", "a Graphviz graph"),
                                     clEnumValN(Emit::Summary, "summary",
                                                "op counts, parameters, FLOPs, memory")),
                          cl::cat(kcCat));
static cl::opt<std::string> pipeline("pass-pipeline", cl::desc("Passes to run, e.g. \"fold-constants,cse\""),
                                     cl::value_desc("pipeline"), cl::cat(kcCat));
static cl::alias pipelineShort("p", cl::desc("Alias for --pass-pipeline"), cl::aliasopt(pipeline),
                               cl::cat(kcCat));
static cl::opt<bool> optimize("O", cl::desc("Run the default optimizing pipeline"), cl::cat(kcCat));
static cl::opt<bool> listPasses("list-passes", cl::desc("List the registered passes and exit"),
                                cl::cat(kcCat));
static cl::opt<bool> listPassesMd("list-passes-markdown",
                                  cl::desc("List the registered passes as a Markdown catalog"),
                                  cl::cat(kcCat));
static cl::list<std::string> plugins("load-pass-plugin", cl::desc("Load passes from a shared library"),
                                     cl::value_desc("path"), cl::cat(kcCat));
static cl::opt<bool> verifyEach("verify-each", cl::desc("Verify the IR after each pass"),
                                cl::init(true), cl::cat(kcCat));
static cl::opt<bool> printAfterAll("print-ir-after-all", cl::desc("Print the IR after each pass"),
                                   cl::cat(kcCat));
static cl::opt<bool> printBeforeAll("print-ir-before-all", cl::desc("Print the IR before each pass"),
                                    cl::cat(kcCat));
static cl::list<std::string> printBefore("print-ir-before", cl::desc("Print the IR before the named pass"),
                                         cl::value_desc("pass"), cl::CommaSeparated, cl::cat(kcCat));
static cl::list<std::string> printAfter("print-ir-after", cl::desc("Print the IR after the named pass"),
                                        cl::value_desc("pass"), cl::CommaSeparated, cl::cat(kcCat));
static cl::opt<bool> timing("pass-timing", cl::desc("Report the time of each pass"), cl::cat(kcCat));
static cl::alias timingAlias("timing", cl::desc("Alias for --pass-timing"), cl::aliasopt(timing),
                             cl::cat(kcCat));
static cl::opt<bool> statistics("pass-statistics", cl::desc("Report pass statistics"), cl::cat(kcCat));
static cl::opt<bool> splitInput("split-input-file",
                                cl::desc("Treat '// -----' lines as separators of independent inputs"),
                                cl::cat(kcCat));
static cl::opt<std::string> weights("weights", cl::desc("Weight archive (.pnnx.bin) to use"),
                                    cl::value_desc("file"), cl::cat(kcCat));
static cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Retype the model's inputs to these shapes before the passes, one per input, e.g. "
             "2x3x224x224 (as kc-run runs it)"),
    cl::value_desc("AxBx..."), cl::cat(kcCat));
static cl::opt<bool> summary("summary",
                             cl::desc("Print op counts, parameters, FLOPs and activation memory "
                                      "instead of the IR (--emit=summary)"),
                             cl::cat(kcCat));

static constexpr const char *kTool = "kc-opt";

/// The input as errors name it.
static std::string inputName() { return inputFile == "-" ? "<stdin>" : inputFile.getValue(); }

/// An error about the input (or about the file the message names itself).
static int fail(llvm::Error e) { return tools::reportError(kTool, inputName(), std::move(e)); }

/// The pass pipeline of the command line (-O, then -p).
static llvm::Error addPipeline(PassManager &pm) {
  if (optimize)
    if (auto e = pm.addPipeline(defaultPipeline()))
      return e;
  if (!pipeline.empty())
    if (auto e = pm.addPipeline(pipeline))
      return e;
  return llvm::Error::success();
}

/// The summary, and the activation memory the interpreter plans for it
/// (which needs the weights and a kernel for every op).
static void writeSummary(const Module &m, llvm::raw_ostream &os) {
  printSummary(summarizeModule(m), os);
  auto cm = rt::CompiledModel::compile(m);
  if (!cm) {
    os << "activation memory: not planned: " << llvm::toString(cm.takeError()) << "\n";
    return;
  }
  os << "activation memory: "
     << llvm::format("%.2f MiB", double((*cm)->arenaBytes()) / (1 << 20))
     << " planned by kc-run, with buffers reused ("
     << llvm::format("%.2f MiB", double((*cm)->unplannedBytes()) / (1 << 20))
     << " without reuse, after fusion); " << (*cm)->numSteps() << " steps\n";
}

static void listPassCatalog(bool markdown) {
  auto &os = llvm::outs();
  if (markdown)
    os << "# Pass catalog\n\nGenerated by `kc-opt --list-passes-markdown`; a test keeps it in "
          "step with the registry.\n\nThe default pipeline (`-O`): `"
       << defaultPipeline() << "`.\n";
  for (const PassRegistry::Entry *e : PassRegistry::global().all()) {
    auto pass = e->factory();
    if (markdown) {
      os << "\n## `" << e->name << "`\n\n" << e->description << ".\n";
      if (!pass->options().empty()) {
        os << "\n| option | type | default | meaning |\n|---|---|---|---|\n";
        for (PassOptionBase *o : pass->options())
          os << "| `" << o->name() << "` | " << o->typeName() << " | `" << o->valueText() << "` | "
             << o->description() << " |\n";
      }
      if (!pass->statistics().empty()) {
        os << "\nStatistics: ";
        bool first = true;
        for (Statistic *s : pass->statistics()) {
          os << (first ? "" : ", ") << "`" << s->name() << "` (" << s->description() << ")";
          first = false;
        }
        os << ".\n";
      }
      continue;
    }
    os << "  " << llvm::left_justify(e->name, 20) << " - " << e->description << "\n";
    for (PassOptionBase *o : pass->options())
      os << "      " << o->name() << "=<" << o->typeName() << "> (default " << o->valueText()
         << ") - " << o->description() << "\n";
  }
}

/// Runs the pipeline on one input (replaced by its specialization under
/// --input-shape) and writes the requested form to `os`.
/// `m` with its inputs retyped to the --input-shape shapes (the same
/// element types), every type inferred again; `m` itself without them.
static llvm::Expected<ModulePtr> withInputShapes(ModulePtr m) {
  if (inputShapes.empty())
    return m;
  Function main = m->main();
  if (!main || main->params().size() != inputShapes.size())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the model takes " + llvm::Twine(main ? main->params().size() : 0) + " input(s), " +
            llvm::Twine(inputShapes.size()) + " --input-shape given");
  std::vector<Type> types;
  for (size_t i = 0; i < inputShapes.size(); ++i) {
    auto shape = tools::parseInputShape(inputShapes[i]);
    if (!shape)
      return shape.takeError();
    auto *t = llvm::dyn_cast_or_null<TensorTypeNode>(main->params()[i]->type().get());
    if (!t)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "input " + llvm::Twine(i) + " is not a tensor");
    types.push_back(tensorType(t->dtype(), *shape));
  }
  return specializeInputs(*m, types);
}

static llvm::Error processOne(ModulePtr &m, llvm::raw_ostream &os) {
  if (auto e = inferTypes(*m))
    return e;
  if (auto e = verifyModule(*m))
    return e;
  auto specialized = withInputShapes(m);
  if (!specialized)
    return specialized.takeError();
  m = std::move(*specialized);
  PassManager pm;
  PassInstrumentation &in = pm.instrumentation();
  in.verifyEach = verifyEach;
  in.printAfterAll = printAfterAll;
  in.printBeforeAll = printBeforeAll;
  in.printBefore.insert(printBefore.begin(), printBefore.end());
  in.printAfter.insert(printAfter.begin(), printAfter.end());
  in.timing = timing;
  in.statistics = statistics;
  if (auto e = addPipeline(pm))
    return e;
  if (auto e = pm.run(*m))
    return e;
  switch (emit) {
  case Emit::Kc:
    printModule(*m, os);
    break;
  case Emit::Dot:
    writeGraphViz(*m, os);
    break;
  case Emit::Summary:
    writeSummary(*m, os);
    break;
  case Emit::Pnnx:
    break;
  }
  return llvm::Error::success();
}

int main(int argc, char **argv) {
  tools::checkStandardStreamsAtExit(kTool);
  tools::setVersionPrinter(kTool);
  cl::HideUnrelatedOptions(kcCat);
  tools::parseCommandLine(argc, argv,
                          "kc-opt: run kc passes over a PNNX model or kc IR\n\n"
                          "  kc-opt model.pnnx.param               print the typed IR\n"
                          "  kc-opt model.pnnx.param -O            optimize, then print\n"
                          "  kc-opt model.pnnx.param -O --summary  ops, parameters, FLOPs, memory\n"
                          "  kc-opt in.kc -p \"fold-constants,lower-rpn\"\n"
                          "  kc-opt model.pnnx.param -O --emit=pnnx -o out.pnnx.param\n");
  for (const std::string &p : plugins)
    if (auto e = loadPassPlugin(p))
      return tools::reportError(kTool, p, std::move(e));
  if (listPasses || listPassesMd) {
    listPassCatalog(listPassesMd);
    return 0;
  }
  if (summary)
    emit = Emit::Summary;
  // The pipeline is part of the command line: checked before any input is read.
  {
    PassManager probe;
    if (auto e = addPipeline(probe))
      return tools::reportError(kTool, "", std::move(e));
  }

  if (emit == Emit::Pnnx) {
    if (outputFile == "-")
      return tools::reportError(kTool, "", "--emit=pnnx needs -o FILE.pnnx.param");
    auto m = loadModule(inputFile, weights);
    if (!m)
      return fail(m.takeError());
    llvm::raw_null_ostream null;
    if (auto e = processOne(*m, null))
      return fail(std::move(e));
    auto r = exportPnnx(**m);
    if (!r)
      return fail(r.takeError());
    if (auto e = writePnnx(*r, outputFile))
      return fail(std::move(e));
    if (!r->bin)
      tools::reportWarning(kTool, inputName(),
                           "weight '" + r->missingWeight + "' has no data; wrote " + outputFile +
                               " without a .bin");
    return 0;
  }

  if (!splitInput) {
    auto m = loadModule(inputFile, weights);
    if (!m)
      return fail(m.takeError());
    // Processing happens with the output open, so a bad path fails first.
    if (auto e = writeOutputFile(outputFile, [&](llvm::raw_ostream &os) { return processOne(*m, os); }))
      return fail(std::move(e));
    return 0;
  }

  // --split-input-file: each chunk is its own input; errors are printed and
  // the next chunk runs (as in mlir-opt), the exit status reports any failure.
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/true);
  if (!buf)
    return fail(llvm::createStringError(buf.getError(), "cannot read: " + buf.getError().message()));
  llvm::SmallVector<llvm::StringRef, 8> chunks;
  (*buf)->getBuffer().split(chunks, "// -----");
  bool failed = false;
  auto writeAll = [&](llvm::raw_ostream &os) {
    unsigned lineOffset = 0;
    for (size_t i = 0; i < chunks.size(); ++i) {
      // Pad with newlines so diagnostics keep the line numbers of the whole file.
      std::string text;
      if (chunks[i].ltrim().startswith("7767517"))
        text = chunks[i].ltrim().str(); // PNNX requires its magic on the first line
      else
        text = std::string(lineOffset, '\n') + chunks[i].str();
      lineOffset += chunks[i].count('\n');
      if (i)
        os << "// -----\n";
      auto m = loadModuleFromText(text, inputFile == "-" ? "<stdin>" : inputFile.getValue());
      if (!m) {
        failed = true;
        fail(m.takeError());
        continue;
      }
      if (auto e = processOne(*m, os)) {
        failed = true;
        fail(std::move(e));
      }
    }
    return llvm::Error::success();
  };
  if (auto e = writeOutputFile(outputFile, writeAll))
    return fail(std::move(e));
  return failed ? 1 : 0;
}
