//===- Specialize.cpp - A module at other input shapes --------------------===//
#include "kc/IR/Specialize.h"
#include "kc/IR/AttrOperands.h"
#include "kc/IR/Diagnostic.h"
#include "kc/IR/Functor.h"
#include "kc/IR/TypeInference.h"
#include "kc/Support/Quote.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

namespace kc {
namespace {

llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// Copies graphs with every type left to inference: the dataflow nodes
/// (Call, Tuple, TupleGetItem) are made anew, iteratively, and each call of
/// a function gets a copy of the function with untyped parameters.
class UntypedCopy {
public:
  std::vector<Function> functions; ///< the copies, callees before callers

  explicit UntypedCopy(const Module &source) {
    for (const Function &f : source.functions())
      names_.insert(f->name());
  }

  /// `root` copied, with the nodes of `map` (parameters) already mapped.
  Expr graph(const Expr &root, llvm::DenseMap<const ExprNode *, Expr> &map) {
    ExpandDataflow(
        root, [&](const Expr &e) { return map.count(e.get()) != 0; },
        [&](const Expr &e) {
          if (!map.count(e.get()))
            map[e.get()] = node(e, map);
        });
    return map.lookup(root.get());
  }

  /// A copy of `f` named `name` with untyped parameters.
  Function function(const FunctionNode &f, const std::string &name) {
    llvm::DenseMap<const ExprNode *, Expr> map;
    std::vector<Var> params;
    for (const Var &p : f.params()) {
      Var v = var(p->name());
      v->setLoc(p->loc());
      map[p.get()] = v;
      params.push_back(v);
    }
    Expr body = graph(f.body(), map);
    Function copy =
        make<const FunctionNode>(name, params, body, Type(), f.isPrimitive(), f.attrs());
    copy->setLoc(f.loc());
    return copy;
  }

private:
  Expr node(const Expr &e, const llvm::DenseMap<const ExprNode *, Expr> &map) {
    auto mapped = [&](const Expr &x) {
      auto it = map.find(x.get());
      return it == map.end() ? x : it->second;
    };
    Expr r;
    if (auto *c = llvm::dyn_cast<CallNode>(e.get())) {
      Expr callee = c->callee();
      if (auto *f = llvm::dyn_cast<FunctionNode>(callee.get())) {
        Function copy = function(*f, freshName(f->name()));
        functions.push_back(copy);
        callee = copy;
      }
      std::vector<Expr> args;
      for (const Expr &a : c->args())
        args.push_back(mapped(a));
      r = call(callee, args, c->attrs(), c->keys(), c->name());
    } else if (auto *t = llvm::dyn_cast<TupleNode>(e.get())) {
      std::vector<Expr> fields;
      for (const Expr &f : t->fields())
        fields.push_back(mapped(f));
      r = tuple(fields);
    } else if (auto *g = llvm::dyn_cast<TupleGetItemNode>(e.get())) {
      r = tupleGetItem(mapped(g->tuple()), g->index());
    } else {
      return e; // constants, ops and free variables are shared
    }
    r->setLoc(e->loc());
    return r;
  }

  /// The first copy of a function keeps its name; later ones (a function
  /// called from several places) get a suffix no other function has.
  std::string freshName(const std::string &name) {
    if (copied_.insert(name).second)
      return name;
    for (unsigned k = 1;; ++k) {
      std::string n = name + "_" + std::to_string(k);
      if (!names_.count(n) && copied_.insert(n).second)
        return n;
    }
  }

  llvm::StringSet<> names_, copied_;
};

} // namespace

llvm::Expected<ModulePtr> specializeInputs(const Module &m, llvm::ArrayRef<Type> inputs) {
  Function main = m.main();
  if (!main)
    return error("the module has no @main");
  if (inputs.size() != main->params().size())
    return error("the model takes " + llvm::Twine(main->params().size()) + " input(s), got " +
                 llvm::Twine(inputs.size()));
  auto out = std::make_shared<Module>();
  out->setSourceName(m.sourceName());
  UntypedCopy copy(m);
  llvm::DenseMap<const ExprNode *, Expr> map;
  std::vector<Var> params;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Var &p = main->params()[i];
    auto *declared = llvm::dyn_cast_or_null<TensorTypeNode>(p->type().get());
    auto *given = llvm::dyn_cast_or_null<TensorTypeNode>(inputs[i].get());
    if (declared && (!given || given->dtype() != declared->dtype() ||
                     given->rank() != declared->rank()))
      return error("input " + llvm::Twine(i) + " (%" + clipInput(p->name()) + ") must be " +
                   dtypeName(declared->dtype()) + " of rank " + llvm::Twine(declared->rank()) +
                   " (the model was converted at " + typeToString(p->type()) + "), got " +
                   (inputs[i] ? typeToString(inputs[i]) : std::string("no type")));
    Var v = var(p->name(), inputs[i]);
    v->setLoc(p->loc());
    map[p.get()] = v;
    params.push_back(v);
  }
  Expr body = copy.graph(main->body(), map);
  for (const Function &f : copy.functions)
    out->add(f);
  Function newMain = make<const FunctionNode>("main", params, body, Type(), main->isPrimitive(),
                                              main->attrs());
  newMain->setLoc(main->loc());
  out->add(newMain);
  if (auto e = inferTypes(*out))
    return e;
  if (auto e = bindAttrOperands(*out))
    return e;
  return out;
}

} // namespace kc
