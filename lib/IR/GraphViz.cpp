//===- GraphViz.cpp - Graphviz export -------------------------------------===//
#include "kc/IR/GraphViz.h"
#include "kc/IR/Functor.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace kc {

static std::string escape(llvm::StringRef s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\' || c == '{' || c == '}' || c == '<' || c == '>' || c == '|')
      r += '\\';
    r += c;
  }
  return r;
}

void writeGraphViz(const Module &m, llvm::raw_ostream &os) {
  os << "digraph \"" << escape(m.sourceName().empty() ? "main" : m.sourceName()) << "\" {\n"
     << "  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n";
  Function main = m.main();
  if (!main) {
    os << "}\n";
    return;
  }
  llvm::DenseMap<const ExprNode *, unsigned> ids;
  auto id = [&](const ExprNode *e) {
    auto it = ids.find(e);
    if (it != ids.end())
      return it->second;
    unsigned n = ids.size();
    ids[e] = n;
    return n;
  };
  for (const Var &p : main->params())
    os << "  n" << id(p.get()) << " [shape=ellipse, label=\"input %" << escape(p->name())
       << "\\n" << escape(typeToString(p->type())) << "\"];\n";

  // Tensor constants used as operands (not weights) appear as notes on first use.
  auto edgeFrom = [&](const ExprNode *to, const Expr &s) {
    auto *k = llvm::dyn_cast<ConstantNode>(s.get());
    if (k && k->isScalar())
      return;
    if (k && !ids.count(k))
      os << "  n" << id(k) << " [shape=note, label=\"" << escape(k->name()) << "\\n"
         << escape(typeToString(k->type())) << "\"];\n";
    if (ids.count(s.get()))
      os << "  n" << ids[s.get()] << " -> n" << id(to) << ";\n";
  };
  // Dataflow of main only: expression functions are drawn as one box each.
  llvm::DenseSet<const ExprNode *> seen;
  auto visited = [&](const Expr &e) { return seen.count(e.get()) != 0; };
  ExpandDataflow(main->body(), visited, [&](const Expr &e) {
    if (!seen.insert(e.get()).second)
      return;
    if (auto *c = llvm::dyn_cast<CallNode>(e.get())) {
      std::string label = (c->global() ? "@" : "") + escape(c->calleeName());
      if (!c->name().empty())
        label += "\\n" + escape(c->name());
      label += "\\n" + escape(typeToString(c->type()));
      for (size_t i = 0; i < c->numArgs(); ++i)
        if (c->keys()[i].role == ArgRole::Weight)
          label += "\\n" + escape(c->keys()[i].name) + ": " +
                   escape(typeToString(c->arg(i)->type()));
      os << "  n" << id(c) << " [shape=box, label=\"" << label << "\"];\n";
      for (size_t i = 0; i < c->numArgs(); ++i)
        if (c->keys()[i].role != ArgRole::Weight)
          edgeFrom(c, c->arg(i));
    } else if (auto *t = llvm::dyn_cast<TupleNode>(e.get())) {
      os << "  n" << id(t) << " [shape=point];\n";
      for (const Expr &f : t->fields())
        edgeFrom(t, f);
    } else if (auto *g = llvm::dyn_cast<TupleGetItemNode>(e.get())) {
      os << "  n" << id(g) << " [shape=plaintext, label=\"." << g->index() << "\"];\n";
      edgeFrom(g, g->tuple());
    }
  });
  unsigned out = ids.size();
  os << "  n" << out << " [shape=ellipse, label=\"output\\n"
     << escape(typeToString(main->body()->type())) << "\"];\n";
  if (ids.count(main->body().get()))
    os << "  n" << ids[main->body().get()] << " -> n" << out << ";\n";
  os << "}\n";
}

} // namespace kc
