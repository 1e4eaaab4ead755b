//===- TypeInference.cpp - Type inference ---------------------------------===//
#include "kc/IR/TypeInference.h"
#include "kc/IR/AttrOperands.h"
#include "kc/IR/Diagnostic.h"
#include "kc/Support/Quote.h"
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace kc {

std::optional<Type> unifyTypes(const Type &declared, const Type &inferred) {
  if (!declared)
    return inferred;
  if (!inferred)
    return declared;
  if (declared->kind() != inferred->kind())
    return std::nullopt;
  if (auto *d = llvm::dyn_cast<TensorTypeNode>(declared.get())) {
    auto *i = llvm::cast<TensorTypeNode>(inferred.get());
    if (d->rank() != i->rank())
      return std::nullopt;
    DType dt = d->dtype() == DType::Unknown ? i->dtype() : d->dtype();
    if (i->dtype() != DType::Unknown && i->dtype() != dt)
      return std::nullopt;
    std::vector<int64_t> dims;
    for (size_t k = 0; k < d->rank(); ++k) {
      int64_t a = d->dims()[k], b = i->dims()[k];
      if (a >= 0 && b >= 0 && a != b)
        return std::nullopt;
      dims.push_back(a >= 0 ? a : b);
    }
    if (dt == d->dtype() && llvm::ArrayRef<int64_t>(dims) == d->dims())
      return declared;
    return tensorType(dt, dims);
  }
  auto *d = llvm::cast<TupleTypeNode>(declared.get());
  auto *i = llvm::cast<TupleTypeNode>(inferred.get());
  if (d->size() != i->size())
    return std::nullopt;
  std::vector<Type> fields;
  for (size_t k = 0; k < d->size(); ++k) {
    auto u = unifyTypes(d->fields()[k], i->fields()[k]);
    if (!u)
      return std::nullopt;
    fields.push_back(*u);
  }
  return tupleType(fields);
}

llvm::Expected<Type> inferCallType(const CallNode &call, const Module *m) {
  const OpDef *op = call.opDef();
  if (!op || (!op->getTypeRule() && !op->getModuleTypeRule()))
    return Type();
  // Attributes given as operands are known once the shapes they read are;
  // until then the result's type is too.
  if (hasAttrOperands(call)) {
    Call bound = m ? bindAttrOperands(call, *m) : Call();
    return bound ? inferCallType(*bound, m) : Type();
  }
  // The rule reads its integer attributes without an error path; a float
  // that is no integer among them refuses the call here.
  IntAttrCheck check;
  if (op->getModuleTypeRule() && !m)
    return Type();
  auto t = op->getModuleTypeRule() ? op->getModuleTypeRule()(call, *m) : op->getTypeRule()(call);
  std::string bad = check.failure(call.attrs());
  if (bad.empty())
    return t;
  llvm::consumeError(t.takeError());
  return llvm::createStringError(llvm::inconvertibleErrorCode(), describeCall(call) + ": " + bad);
}

namespace {

/// A type as diagnostics show it, bounded (a tuple type can be huge).
std::string shown(const Type &t) { return clipInput(typeToString(t)); }

/// How many calls of each function the module holds, by name.
using CallSites = llvm::StringMap<unsigned>;

CallSites countCallSites(const Module &m) {
  CallSites sites;
  llvm::DenseSet<const ExprNode *> seen;
  for (const Function &f : m.functions())
    ExpandDataflow(
        f->body(), [&](const Expr &e) { return seen.count(e.get()) != 0; },
        [&](const Expr &e) {
          if (!seen.insert(e.get()).second)
            return;
          if (auto *c = llvm::dyn_cast<CallNode>(e.get()))
            if (const GlobalVarNode *g = c->global())
              ++sites[g->name()];
        });
  return sites;
}

/// A function's body must have the type the function declares it returns;
/// the declared type becomes the more precise of the two.
llvm::Error checkResult(const Module &m, const FunctionNode &f) {
  if (!f.retType() || !f.body()->type())
    return llvm::Error::success();
  auto u = unifyTypes(f.retType(), f.body()->type());
  if (!u)
    return moduleError(m, f.loc(),
                       "@" + clipInput(f.name()) + ": body has type " + shown(f.body()->type()) +
                           " but the function returns " + shown(f.retType()));
  if (!typeEqual(*u, f.retType()))
    f.setRetType(*u);
  return llvm::Error::success();
}

class Inferrer {
public:
  Inferrer(const Module &m, llvm::StringRef fn, const CallSites &sites)
      : m_(m), fn_(fn), sites_(sites) {}

  llvm::Error visit(const Expr &root) {
    llvm::Error err = llvm::Error::success();
    PostOrderVisit(root, [&](const Expr &e) {
      if (err)
        return;
      err = visitNode(e.get());
    });
    return err;
  }

private:
  llvm::Error visitNode(const ExprNode *e) {
    Type inferred;
    if (auto *c = llvm::dyn_cast<CallNode>(e)) {
      // The function a call names, looked up once (null for an op call,
      // or a missing function, which the verifier reports).
      const FunctionNode *callee = m_.callee(*c);
      if (auto e = refineCallee(*c, callee))
        return e;
      auto t = callType(*c, callee);
      if (!t) {
        // Type rules name the op themselves; error() names it once more
        // with its place, so the rule's own prefix is dropped.
        std::string msg = llvm::toString(t.takeError());
        llvm::StringRef rest(msg);
        if (rest.consume_front(describeCall(*c) + ": "))
          msg = rest.str();
        return error(c, msg);
      }
      if (auto e = checkArguments(*c, callee))
        return e;
      inferred = *t;
    } else if (auto *t = llvm::dyn_cast<TupleNode>(e)) {
      std::vector<Type> fields;
      for (const Expr &f : t->fields())
        fields.push_back(f->type());
      inferred = tupleType(fields);
    } else if (auto *g = llvm::dyn_cast<TupleGetItemNode>(e)) {
      const Type &whole = g->tuple()->type();
      if (auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(whole.get())) {
        if (g->index() >= tt->size())
          return error(g, "tuple index " + llvm::Twine(g->index()) + " out of range for " +
                              shown(whole));
        inferred = tt->fields()[g->index()];
      } else if (whole) {
        // Only a value of unknown type (`?`) may yet turn out to be a tuple.
        return error(g, "reads field " + llvm::Twine(g->index()) + " of a value of type " +
                            shown(whole) + ", which is not a tuple");
      }
    } else {
      return llvm::Error::success(); // Vars and Constants carry their types
    }
    auto u = unifyTypes(e->type(), inferred);
    if (!u)
      return error(e, "inferred " + shown(inferred) + " but the model declares " +
                          shown(e->type()));
    e->setType(*u);
    return llvm::Error::success();
  }

  /// A function call has the type of the callee's body; an op call the
  /// type its rule gives.
  llvm::Expected<Type> callType(const CallNode &c, const FunctionNode *f) const {
    if (!c.global())
      return inferCallType(c, &m_);
    if (!f)
      return Type(); // the verifier reports the missing function
    return f->body() ? f->body()->type() : f->retType();
  }

  /// The arguments of a call of a function must agree with the types its
  /// parameters declare: the producer's and the consumer's declarations of
  /// one value may not contradict each other.
  llvm::Error checkArguments(const CallNode &c, const FunctionNode *f) const {
    if (!f || f->params().size() != c.numArgs())
      return llvm::Error::success(); // the verifier reports a wrong count
    for (size_t i = 0; i < c.numArgs(); ++i) {
      const Var &p = f->params()[i];
      if (!unifyTypes(p->type(), c.arg(i)->type()))
        return error(&c, "argument " + llvm::Twine(i) + " is " + shown(c.arg(i)->type()) +
                             ", but @" + clipInput(f->name()) + " declares its parameter %" +
                             clipInput(p->name()) + " as " + shown(p->type()) +
                             (p->loc().valid() ? " on line " + std::to_string(p->loc().line)
                                               : std::string()));
    }
    return llvm::Error::success();
  }

  /// A function called from one place only takes the types of its
  /// arguments where its parameters leave them open (`?`, a `?` dim, the
  /// `null` element type), and its body is inferred again with them: the
  /// inputs of a pnnx.Expression whose producers are not annotated (a chain
  /// of expressions) are known only once those producers are typed. A
  /// function called from several places keeps the types it declares.
  llvm::Error refineCallee(const CallNode &c, const FunctionNode *f) const {
    if (!f || f->params().size() != c.numArgs() || sites_.lookup(f->name()) != 1)
      return llvm::Error::success();
    bool refined = false;
    for (size_t i = 0; i < c.numArgs(); ++i) {
      const Var &p = f->params()[i];
      auto u = unifyTypes(p->type(), c.arg(i)->type());
      if (u && !typeEqual(*u, p->type())) {
        p->setType(*u); // a contradiction is left for checkArguments
        refined = true;
      }
    }
    if (!refined)
      return llvm::Error::success();
    Inferrer body(m_, f->name(), sites_);
    if (auto e = body.visit(f->body()))
      return e;
    return checkResult(m_, *f);
  }

  llvm::Error error(const ExprNode *e, const llvm::Twine &msg) const {
    return moduleError(m_, e->loc(), "@" + clipInput(fn_) + ": " + describeNode(*e) + ": " + msg);
  }

  const Module &m_;
  std::string fn_;
  const CallSites &sites_;
};

} // namespace

llvm::Error inferTypes(Module &m) {
  CallSites sites = countCallSites(m);
  // Expression functions first: calls in main take their result types.
  for (const Function &f : m.functions()) {
    if (f->name() == "main")
      continue;
    Inferrer inf(m, f->name(), sites);
    if (llvm::Error e = inf.visit(f->body()))
      return e;
    if (llvm::Error e = checkResult(m, *f))
      return e;
  }
  // main's result type is checked like any other function's: a model
  // declaring outputs its graph does not compute is refused.
  if (Function main = m.main()) {
    Inferrer inf(m, "main", sites);
    if (llvm::Error e = inf.visit(main->body()))
      return e;
    return checkResult(m, *main);
  }
  return llvm::Error::success();
}

} // namespace kc
