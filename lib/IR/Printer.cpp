//===- Printer.cpp - kc's textual IR --------------------------------------===//
#include "kc/IR/Printer.h"
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace kc {

static bool isBareName(llvm::StringRef s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (!(llvm::isAlnum(c) || c == '_' || c == '.'))
      return false;
  return true;
}

std::string printableName(llvm::StringRef name) {
  return isBareName(name) ? name.str() : quoteString(name);
}

std::string printLiteral(const ConstantNode &c) {
  const AttrValue &v = c.scalar();
  if (v.isNone())
    return "none";
  if (v.isString())
    return quoteString(v.getString());
  auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(c.type().get());
  return attrToString(v) + ":" + (tt ? dtypeName(tt->dtype()).str() : "null");
}

namespace {

/// Visits the nodes of one function body (not entering callee functions)
/// children first, each once, with an explicit stack.
template <typename F> void forEachNodeInPostOrder(const Expr &root, F &&f) {
  llvm::DenseSet<const ExprNode *> done;
  std::vector<std::pair<Expr, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [e, expanded] = stack.back();
    stack.pop_back();
    if (!e || done.count(e.get()))
      continue;
    if (expanded) {
      done.insert(e.get());
      f(e);
      continue;
    }
    stack.push_back({e, true});
    if (auto *c = llvm::dyn_cast<CallNode>(e.get())) {
      for (size_t i = c->numArgs(); i-- > 0;)
        stack.push_back({c->arg(i), false});
    } else if (auto *t = llvm::dyn_cast<TupleNode>(e.get())) {
      for (size_t i = t->fields().size(); i-- > 0;)
        stack.push_back({t->fields()[i], false});
    } else if (auto *g = llvm::dyn_cast<TupleGetItemNode>(e.get())) {
      stack.push_back({g->tuple(), false});
    }
  }
}

/// The marker after a function's result type: ` primitive` or ` fused`.
const char *functionKindText(FunctionKind kind) {
  switch (kind) {
  case FunctionKind::Graph:
    return "";
  case FunctionKind::Expression:
    return " primitive";
  case FunctionKind::Fused:
    return " fused";
  }
  return "";
}

/// Prints one function. The functor gives each node its operand text
/// (`%3`, `2.5:f32`) and emits its defining line; nodes are visited in post
/// order, iteratively, so operands are always named first.
class FunctionPrinter final : public ExprFunctor<std::string(const Expr &)> {
public:
  FunctionPrinter(const FunctionNode &fn, llvm::raw_ostream &os) : fn_(fn), os_(os) {}

  void print() {
    for (const Var &p : fn_.params()) {
      usedNames_.insert(p->name());
      names_[p.get()] = "%" + printableName(p->name());
    }
    os_ << "fn @" << printableName(fn_.name()) << "(";
    for (size_t i = 0; i < fn_.params().size(); ++i) {
      const Var &p = fn_.params()[i];
      os_ << (i ? ", " : "") << names_[p.get()] << ": " << typeToString(p->type());
    }
    Type ret = fn_.retType() ? fn_.retType() : fn_.body()->type();
    os_ << ") -> " << typeToString(ret) << functionKindText(fn_.functionKind()) << " {\n";
    forEachNodeInPostOrder(fn_.body(), [&](const Expr &e) { names_[e.get()] = VisitExpr(e); });
    // A tensor constant returned as it is gets its `const` line here: named
    // before the return line is begun.
    std::string result = operand(fn_.body());
    os_ << "  return " << result << "\n}\n";
  }

  std::string VisitExpr_(const VarNode *v) override { return "%" + printableName(v->name()); }

  std::string VisitExpr_(const ConstantNode *c) override {
    if (c->isScalar())
      return printLiteral(*c);
    // Tensor constants are named where they are used (see operand()).
    return "";
  }

  std::string VisitExpr_(const OpNode *op) override { return op->name().str(); }
  std::string VisitExpr_(const FunctionNode *f) override { return "@" + printableName(f->name()); }
  std::string VisitExpr_(const GlobalVarNode *g) override { return "@" + printableName(g->name()); }

  std::string VisitExpr_(const CallNode *c) override {
    std::string line = calleeText(c) + "(";
    for (size_t i = 0; i < c->numArgs(); ++i) {
      if (i)
        line += ", ";
      const ArgKey &k = c->keys()[i];
      if (k.role != ArgRole::Positional)
        line += printableName(k.name) + "=";
      auto *w = llvm::dyn_cast<ConstantNode>(c->arg(i).get());
      if (k.role == ArgRole::Weight && w && !w->isScalar())
        line += "@" + printableName(w->name()) + ": " + typeToString(w->type());
      else
        line += operand(c->arg(i));
    }
    line += ")";
    if (!c->attrs().empty()) {
      line += " {";
      bool first = true;
      for (auto &[key, value] : c->attrs().entries()) {
        line += (first ? "" : ", ") + printableName(key) + "=" + attrToString(value);
        first = false;
      }
      line += "}";
    }
    line += " : " + typeToString(c->type());
    if (!c->name().empty())
      line += " name(" + quoteString(c->name()) + ")";
    return define(line);
  }

  std::string VisitExpr_(const TupleNode *t) override {
    std::string line = "(";
    for (size_t i = 0; i < t->fields().size(); ++i)
      line += (i ? ", " : "") + operand(t->fields()[i]);
    return define(line + ") : " + typeToString(t->type()));
  }

  std::string VisitExpr_(const TupleGetItemNode *g) override {
    return define(operand(g->tuple()) + "." + std::to_string(g->index()) + " : " +
                  typeToString(g->type()));
  }

private:
  std::string calleeText(const CallNode *c) {
    if (const GlobalVarNode *g = c->global())
      return "@" + printableName(g->name());
    if (auto *op = llvm::dyn_cast<OpNode>(c->callee().get()))
      return printableName(op->name());
    return operand(c->callee());
  }

  /// The text that refers to `e` as an operand.
  std::string operand(const Expr &e) {
    auto it = names_.find(e.get());
    if (it != names_.end() && !it->second.empty())
      return it->second;
    if (auto *c = llvm::dyn_cast<ConstantNode>(e.get())) {
      if (c->isScalar())
        return printLiteral(*c);
      std::string n = define("const @" + printableName(c->name()) + " : " +
                             typeToString(c->type()));
      names_[c] = n;
      return n;
    }
    return "<?>";
  }

  std::string define(const std::string &rhs) {
    std::string n;
    do
      n = std::to_string(next_++);
    while (usedNames_.count(n));
    os_ << "  %" << n << " = " << rhs << "\n";
    return "%" + n;
  }

  const FunctionNode &fn_;
  llvm::raw_ostream &os_;
  llvm::DenseMap<const ExprNode *, std::string> names_;
  llvm::StringSet<> usedNames_;
  unsigned next_ = 0;
};

} // namespace

void printFunction(const Function &f, llvm::raw_ostream &os) { FunctionPrinter(*f, os).print(); }

void printModule(const Module &m, llvm::raw_ostream &os) {
  bool first = true;
  Function main;
  for (const Function &f : m.functions()) {
    if (f->name() == "main") {
      main = f;
      continue;
    }
    os << (first ? "" : "\n");
    printFunction(f, os);
    first = false;
  }
  if (main) {
    os << (first ? "" : "\n");
    printFunction(main, os);
  }
}

std::string printModule(const Module &m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  printModule(m, os);
  return os.str();
}

} // namespace kc
