//===- TypeInference.cpp - Type inference ---------------------------------===//
#include "kc/IR/TypeInference.h"
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"

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

llvm::Expected<Type> inferCallType(const CallNode &call) {
  if (auto *f = llvm::dyn_cast<FunctionNode>(call.callee().get()))
    return f->body() ? f->body()->type() : f->retType();
  const OpDef *op = call.opDef();
  if (!op || !op->getTypeRule())
    return Type();
  return op->getTypeRule()(call);
}

namespace {

class Inferrer {
public:
  explicit Inferrer(llvm::StringRef fn) : fn_(fn) {}

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
      auto t = inferCallType(*c);
      if (!t) {
        // Type rules name the op themselves; error() names it once more
        // with its line, so the rule's own prefix is dropped.
        std::string msg = llvm::toString(t.takeError());
        std::string who = c->calleeName().str();
        if (!c->name().empty())
          who += " '" + c->name() + "'";
        llvm::StringRef rest(msg);
        if (rest.consume_front(who + ": "))
          msg = rest.str();
        return error(c, msg);
      }
      inferred = *t;
    } else if (auto *t = llvm::dyn_cast<TupleNode>(e)) {
      std::vector<Type> fields;
      for (const Expr &f : t->fields())
        fields.push_back(f->type());
      inferred = tupleType(fields);
    } else if (auto *g = llvm::dyn_cast<TupleGetItemNode>(e)) {
      if (auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(g->tuple()->type().get())) {
        if (g->index() >= tt->size())
          return error(g, "tuple index " + llvm::Twine(g->index()) + " out of range for " +
                              typeToString(g->tuple()->type()));
        inferred = tt->fields()[g->index()];
      }
    } else {
      return llvm::Error::success(); // Vars and Constants carry their types
    }
    auto u = unifyTypes(e->type(), inferred);
    if (!u)
      return error(e, "inferred " + typeToString(inferred) + " but the model declares " +
                          typeToString(e->type()));
    e->setType(*u);
    return llvm::Error::success();
  }

  llvm::Error error(const ExprNode *e, const llvm::Twine &msg) const {
    std::string who;
    if (auto *c = llvm::dyn_cast<CallNode>(e)) {
      who = c->calleeName().str();
      if (!c->name().empty())
        who += " '" + c->name() + "'";
    } else {
      who = nodeKindName(e->kind()).str();
    }
    if (e->loc().valid())
      who += " (line " + std::to_string(e->loc().line) + ")";
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "@" + fn_ + ": " + who + ": " + msg);
  }

  std::string fn_;
};

} // namespace

llvm::Error inferTypes(Module &m) {
  // Expression functions first: calls in main take their result types.
  for (const Function &f : m.functions()) {
    if (f->name() == "main")
      continue;
    Inferrer inf(f->name());
    if (llvm::Error e = inf.visit(f->body()))
      return e;
    if (f->retType() && f->body()->type() && !unifyTypes(f->retType(), f->body()->type()))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "@" + f->name() + ": body has type " +
                                         typeToString(f->body()->type()) +
                                         " but the function returns " +
                                         typeToString(f->retType()));
  }
  if (Function main = m.main()) {
    Inferrer inf("main");
    return inf.visit(main->body());
  }
  return llvm::Error::success();
}

} // namespace kc
