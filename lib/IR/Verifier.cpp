//===- Verifier.cpp - IR invariants ---------------------------------------===//
#include "kc/IR/Verifier.h"
#include "kc/IR/AttrOperands.h"
#include "kc/IR/Diagnostic.h"
#include "kc/Support/Quote.h"
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"

#include "llvm/ADT/DenseSet.h"

namespace kc {

namespace {

/// Whether a value of kind `got` fits an attribute whose default has kind
/// `want`. PNNX writes `dim=1` and `dim=(1)` alike, and ints where floats are
/// meant, so scalars and lists of a kind are interchangeable.
bool kindFits(AttrValue::Kind want, AttrValue::Kind got) {
  using K = AttrValue::Kind;
  if (want == K::None || got == K::None || want == got)
    return true;
  auto numeric = [](K k) { return k == K::Int || k == K::Float || k == K::Bool; };
  auto numList = [](K k) { return k == K::IntList || k == K::FloatList; };
  if ((numeric(want) || numList(want)) && (numeric(got) || numList(got)))
    return true;
  if ((want == K::String || want == K::StringList) && (got == K::String || got == K::StringList))
    return true;
  return false;
}

class Verifier {
public:
  Verifier(const Module &m, const FunctionNode &fn) : m_(m), fn_(fn) {
    for (const Var &p : fn.params())
      params_.insert(p.get());
  }

  llvm::Error run() {
    llvm::Error err = llvm::Error::success();
    llvm::DenseSet<const ExprNode *> seen;
    std::vector<const ExprNode *> stack{fn_.body().get()};
    while (!stack.empty() && !err) {
      const ExprNode *e = stack.back();
      stack.pop_back();
      if (!e) {
        err = fail(nullptr, "a null operand");
        break;
      }
      if (!seen.insert(e).second)
        continue;
      err = check(e);
      if (auto *c = llvm::dyn_cast<CallNode>(e)) {
        for (auto &a : c->args())
          stack.push_back(a.get());
      } else if (auto *t = llvm::dyn_cast<TupleNode>(e)) {
        for (auto &a : t->fields())
          stack.push_back(a.get());
      } else if (auto *g = llvm::dyn_cast<TupleGetItemNode>(e)) {
        stack.push_back(g->tuple().get());
      }
    }
    return err;
  }

private:
  /// `file:line:col: error: @fn: msg` at `e` (at the function without one).
  llvm::Error fail(const ExprNode *e, const llvm::Twine &msg) const {
    SourceLoc loc = e && e->loc().valid() ? e->loc() : fn_.loc();
    return moduleError(m_, loc, "@" + clipInput(fn_.name()) + ": " + msg);
  }
  llvm::Error failAt(const CallNode *c, const llvm::Twine &msg) const {
    return fail(c, describeCall(*c) + ": " + msg);
  }

  llvm::Error check(const ExprNode *e) {
    if (auto *v = llvm::dyn_cast<VarNode>(e)) {
      if (!params_.count(v))
        return fail(v, "%" + clipInput(v->name()) + " is not a parameter of this function");
      return llvm::Error::success();
    }
    if (auto *g = llvm::dyn_cast<TupleGetItemNode>(e)) {
      const Type &whole = g->tuple()->type();
      if (auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(whole.get())) {
        if (g->index() >= tt->size())
          return fail(g, "tuple item ." + llvm::Twine(g->index()) + " of a " +
                             llvm::Twine(tt->size()) + "-tuple");
      } else if (whole) {
        return fail(g, "tuple item ." + llvm::Twine(g->index()) + " of a value of type " +
                           clipInput(typeToString(whole)) + ", which is not a tuple");
      }
      return llvm::Error::success();
    }
    if (llvm::isa<FunctionNode>(e) || llvm::isa<OpNode>(e) || llvm::isa<GlobalVarNode>(e))
      return fail(e, nodeKindName(e->kind()) + " used as a value");
    auto *c = llvm::dyn_cast<CallNode>(e);
    if (!c)
      return llvm::Error::success();
    if (const GlobalVarNode *g = c->global()) {
      const FunctionNode *f = m_.callee(*c);
      if (!f)
        return failAt(c, "calls @" + clipInput(g->name()) + ", which is not in the module");
      if (f->params().size() != c->numArgs())
        return failAt(c, "passes " + llvm::Twine(c->numArgs()) + " argument(s) to @" +
                             clipInput(f->name()) + ", which takes " +
                             llvm::Twine(f->params().size()));
      return llvm::Error::success();
    }
    const OpDef *op = c->opDef();
    if (!op)
      return failAt(c, "callee is neither an op nor a function");
    if (op->isOpaque())
      return llvm::Error::success();
    size_t data = 0;
    for (size_t i = 0; i < c->numArgs(); ++i) {
      const ArgKey &k = c->keys()[i];
      if (isAttrOperand(*c, i))
        continue;
      if (k.role != ArgRole::Weight) {
        ++data;
        continue;
      }
      if (!llvm::isa<ConstantNode>(c->arg(i).get()))
        return failAt(c, "weight " + quoteInput(k.name) + " is not a constant");
    }
    if (op->is(OpFlags::ExprOp) && op->arity() >= 0 && data != size_t(op->arity()))
      return failAt(c, "expected " + llvm::Twine(op->arity()) + " operand(s), got " +
                           llvm::Twine(data));
    if (!op->is(OpFlags::ExprOp) && !op->is(OpFlags::Variadic) && !op->inputs().empty() &&
        data > op->inputs().size())
      return failAt(c, "expected at most " + llvm::Twine(op->inputs().size()) +
                           " data input(s), got " + llvm::Twine(data));
    for (auto &[name, optional] : op->weights())
      if (!optional && !c->weight(name))
        return failAt(c, "missing weight " + quoteInput(name));
    for (auto &[key, value] : c->attrs().entries())
      if (const AttrSpec *spec = op->findAttr(key))
        if (!kindFits(spec->dflt.kind(), value.kind()))
          return failAt(c, "attribute " + quoteInput(key) + " should be " +
                               spec->dflt.kindName() + ", got " + value.kindName() + " " +
                               clipInput(attrToString(value)));
    return llvm::Error::success();
  }

  const Module &m_;
  const FunctionNode &fn_;
  llvm::DenseSet<const ExprNode *> params_;
};

} // namespace

llvm::Error verifyModule(const Module &m) {
  if (!m.main())
    return moduleError(m, {}, "the module has no @main");
  for (const Function &f : m.functions())
    if (llvm::Error e = Verifier(m, *f).run())
      return e;
  return llvm::Error::success();
}

} // namespace kc
