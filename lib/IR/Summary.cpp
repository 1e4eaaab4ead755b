//===- Summary.cpp - What a model holds and computes ----------------------===//
#include "kc/IR/Summary.h"
#include "kc/IR/Functor.h"
#include "kc/IR/OpCost.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace kc {

static uint64_t tensorBytes(const Type &t) {
  if (auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(t.get())) {
    auto n = tt->numElements();
    return n ? uint64_t(*n) * dtypeSize(tt->dtype()) : 0;
  }
  uint64_t sum = 0;
  if (auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(t.get()))
    for (const Type &f : tt->fields())
      sum += tensorBytes(f);
  return sum;
}

ModuleSummary summarizeModule(const Module &m) {
  ModuleSummary s;
  Function main = m.main();
  if (!main)
    return s;
  llvm::StringMap<OpTypeSummary> byOp;
  // Only main's own dataflow: expression bodies are counted through their
  // calls; a fused group is one call, named by its ops (`nn.Conv2d+nn.ReLU`,
  // as profiles name its step), whose weights count as main's.
  llvm::DenseSet<const ExprNode *> seen;
  auto countWeight = [&](const ExprNode *e) {
    auto *k = llvm::dyn_cast<ConstantNode>(e);
    if (!k || !seen.insert(e).second)
      return;
    if (auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(k->type().get()); tt && !k->isScalar())
      if (auto n = tt->numElements()) {
        s.parameters += *n;
        s.parameterBytes += uint64_t(*n) * dtypeSize(tt->dtype());
      }
  };
  auto visited = [&](const Expr &e) { return seen.count(e.get()) != 0; };
  ExpandDataflow(main->body(), visited, [&](const Expr &e) {
    if (llvm::isa<ConstantNode>(e.get()))
      return countWeight(e.get());
    if (!seen.insert(e.get()).second)
      return;
    auto *c = llvm::dyn_cast<CallNode>(e.get());
    if (!c)
      return;
    std::string name = c->calleeName().str();
    if (const FunctionNode *fn = m.callee(*c)) {
      name = fn->isFused() ? "" : "(expression)";
      if (fn->isFused())
        DataflowVisit(fn->body(), [&](const Expr &b) {
          countWeight(b.get());
          if (auto *bc = llvm::dyn_cast<CallNode>(b.get()))
            name += (name.empty() ? "" : "+") + bc->calleeName().str();
        });
    }
    OpTypeSummary &o = byOp[name];
    o.op = name;
    ++o.calls;
    ++s.calls;
    if (auto f = flopCount(*c, m)) {
      o.flops += *f;
      s.flops += *f;
    } else {
      ++o.unknownFlops;
      ++s.unknownFlops;
    }
    s.intermediateBytes += tensorBytes(c->type());
  });
  for (auto &entry : byOp)
    s.ops.push_back(entry.second);
  std::sort(s.ops.begin(), s.ops.end(), [](const OpTypeSummary &a, const OpTypeSummary &b) {
    if (a.flops != b.flops)
      return a.flops > b.flops;
    if (a.calls != b.calls)
      return a.calls > b.calls;
    return a.op < b.op;
  });
  return s;
}

/// `1234567890 (1.235 G)`; small counts alone.
static std::string flopText(double v) {
  std::string exact = llvm::formatv("{0:F0}", v).str();
  const char *prefixes[] = {"", "K", "M", "G", "T", "P"};
  int p = 0;
  while (std::abs(v) >= 1000 && p < 5)
    v /= 1000, ++p;
  return p ? llvm::formatv("{0} ({1:F3} {2})", exact, v, prefixes[p]).str() : exact;
}

static std::string mib(uint64_t bytes) {
  return llvm::formatv("{0:F2} MiB", double(bytes) / (1 << 20)).str();
}

void printSummary(const ModuleSummary &s, llvm::raw_ostream &os) {
  size_t width = 2;
  for (const OpTypeSummary &o : s.ops)
    width = std::max(width, o.op.size());
  os << "ops: " << s.calls << " calls of " << s.ops.size() << " op types\n";
  for (const OpTypeSummary &o : s.ops) {
    os << "  " << llvm::left_justify(o.op, width) << llvm::format(" %6lld", (long long)o.calls)
       << "  " << flopText(o.flops) << " FLOP";
    if (o.unknownFlops)
      os << " (" << o.unknownFlops << " calls unknown)";
    os << "\n";
  }
  os << "parameters: " << s.parameters << " (" << mib(s.parameterBytes) << ")\n";
  os << "FLOPs per run: " << flopText(s.flops);
  if (s.unknownFlops)
    os << " (" << s.unknownFlops << " calls unknown)";
  os << "\n";
  os << "intermediates: " << mib(s.intermediateBytes) << " (every result in its own buffer)\n";
}

} // namespace kc
