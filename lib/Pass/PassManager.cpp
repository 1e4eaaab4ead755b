//===- PassManager.cpp - Pipelines and instrumentation --------------------===//
#include "kc/Pass/PassManager.h"
#include "kc/IR/Printer.h"
#include "kc/IR/TypeInference.h"
#include "kc/IR/Verifier.h"
#include "kc/Support/Quote.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <chrono>

namespace kc {

static llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// `e` with `context` ("after pass 'cse'") put after its `file:line:col:
/// error:` prefix, so the place of the error still leads the message.
static llvm::Error withContext(llvm::Error e, const llvm::Twine &context) {
  std::string msg = llvm::toString(std::move(e));
  size_t at = msg.find(": error: ");
  if (at == std::string::npos)
    return error(context + ": " + msg);
  at += 9;
  return error(msg.substr(0, at) + context + ": " + msg.substr(at));
}

llvm::StringRef defaultPipeline() {
  return "infer-types,fold-shapes,fold-constants,fuse-layer-norm,simplify-expr,fuse-conv-bn,"
         "merge-layout,remove-identities,fold-pad,fuse-attention,cse,dce,merge-expressions,"
         "fold-constants,lower-rpn,fuse-ops";
}

/// Splits `text` at top-level commas (commas inside `{...}` belong to options).
static llvm::Expected<std::vector<std::string>> splitTopLevel(llvm::StringRef text) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ',';
    if (c == '{')
      ++depth;
    else if (c == '}' && --depth < 0)
      return error("pass pipeline: unbalanced '}' at column " + llvm::Twine(i + 1));
    else if (c == ',' && depth == 0) {
      parts.push_back(text.slice(start, i).trim().str());
      start = i + 1;
    }
  }
  if (depth != 0)
    return error("pass pipeline: missing '}' in " + quoteInput(text));
  return parts;
}

llvm::Error PassManager::addPipeline(llvm::StringRef pipeline) {
  auto parts = splitTopLevel(pipeline);
  if (!parts)
    return parts.takeError();
  for (llvm::StringRef part : *parts) {
    if (part.empty())
      return error("pass pipeline: empty pass name in " + quoteInput(pipeline));
    llvm::StringRef name = part, opts;
    size_t brace = part.find('{');
    if (brace != llvm::StringRef::npos) {
      if (!part.endswith("}"))
        return error("pass pipeline: text after '}' in " + quoteInput(part));
      name = part.take_front(brace).trim();
      opts = part.slice(brace + 1, part.size() - 1);
    }
    const PassRegistry::Entry *entry = PassRegistry::global().lookup(name);
    if (!entry)
      return error("pass pipeline: unknown pass " + quoteInput(name) + " (see --list-passes)");
    std::unique_ptr<Pass> pass = entry->factory();
    llvm::SmallVector<llvm::StringRef, 4> kvs;
    opts.split(kvs, ',', -1, /*KeepEmpty=*/false);
    // Options read `name{option=value,...}`: each given once, with a value.
    llvm::StringSet<> given;
    for (llvm::StringRef kv : kvs) {
      auto [key, value] = kv.split('=');
      key = key.trim();
      value = value.trim();
      if (!kv.contains('=') || value.empty())
        return error("pass pipeline: option " + quoteInput(key) + " of pass " + quoteInput(name) +
                     " needs a value (" + clipInput(key) + "=VALUE)");
      if (!given.insert(key).second)
        return error("pass pipeline: option " + quoteInput(key) + " of pass " + quoteInput(name) +
                     " is given twice");
      if (llvm::Error e = pass->setOption(key, value))
        return error("pass pipeline: " + llvm::toString(std::move(e)));
    }
    addPass(std::move(pass));
  }
  return llvm::Error::success();
}

llvm::Error PassManager::run(Module &m) {
  using Clock = std::chrono::steady_clock;
  llvm::raw_ostream &os = *instr_.out;
  std::vector<std::pair<std::string, double>> times;
  auto total0 = Clock::now();
  if (instr_.verifyEach)
    if (llvm::Error e = verifyModule(m))
      return withContext(std::move(e), "input IR is invalid");
  for (auto &pass : passes_) {
    std::string name = pass->name().str();
    if (instr_.printBeforeAll || instr_.printBefore.count(name)) {
      os << "// -----// IR Dump Before " << name << " //----- //\n";
      printModule(m, os);
    }
    auto t0 = Clock::now();
    if (llvm::Error e = pass->run(m))
      return withContext(std::move(e), "pass '" + name + "' failed");
    // Rewritten nodes carry no type until inferred again.
    if (llvm::Error e = inferTypes(m))
      return withContext(std::move(e), "after pass '" + name + "'");
    times.push_back({name, std::chrono::duration<double, std::milli>(Clock::now() - t0).count()});
    if (instr_.verifyEach)
      if (llvm::Error e = verifyModule(m))
        return withContext(std::move(e), "pass '" + name + "' produced invalid IR");
    if (instr_.printAfterAll || instr_.printAfter.count(name)) {
      os << "// -----// IR Dump After " << name << " //----- //\n";
      printModule(m, os);
    }
  }
  if (instr_.timing) {
    double total = std::chrono::duration<double, std::milli>(Clock::now() - total0).count();
    os << "===-------------------------------------------------------------------------===\n"
       << "                          ... Pass execution timing report ...\n"
       << "===-------------------------------------------------------------------------===\n";
    os << llvm::format("  Total Execution Time: %.3f ms\n\n", total);
    os << "   Wall Time (ms)   Share  Name\n";
    for (auto &[name, ms] : times)
      os << llvm::format("  %14.3f  %5.1f%%  %s\n", ms, total > 0 ? 100.0 * ms / total : 0.0,
                         name.c_str());
  }
  if (instr_.statistics) {
    os << "===-------------------------------------------------------------------------===\n"
       << "                         ... Pass statistics report ...\n"
       << "===-------------------------------------------------------------------------===\n";
    for (auto &pass : passes_) {
      os << pass->name() << "\n";
      for (Statistic *s : pass->statistics())
        os << llvm::format("  (S) %6llu %s - %s\n", (unsigned long long)s->value(),
                           s->name().c_str(), s->description().c_str());
    }
  }
  return llvm::Error::success();
}

} // namespace kc
