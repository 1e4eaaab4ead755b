//===- UntypedCopy.h - Copies of graphs left to type inference --*- C++ -*-===//
//
// Shared by the module transformations that infer every type again from new
// parameter types (Specialize.cpp: other input shapes; WidenHalf.cpp: f16
// computed as f32).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Functor.h"
#include "kc/IR/Module.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>

namespace kc {

/// Copies graphs with every type left to inference: the dataflow nodes
/// (Call, Tuple, TupleGetItem) are made anew, iteratively, and each call of
/// a function gets a copy of the function with untyped parameters.
class UntypedCopy {
public:
  std::vector<Function> functions; ///< the copies, callees before callers

  /// What a copy changes besides types: a constant's replacement (null:
  /// shared as it is) and a call's attributes.
  struct Hooks {
    std::function<Expr(const ConstantNode &)> constant;
    std::function<Attrs(const CallNode &)> attrs;
  };

  explicit UntypedCopy(const Module &source, Hooks hooks = {})
      : source_(source), hooks_(std::move(hooks)) {
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

  /// A module of `source`'s @main with parameters of types `params` (its
  /// own names and places) and of copies of the functions it calls, every
  /// other type left to inference.
  ModulePtr module(const Module &source, llvm::ArrayRef<Type> params) {
    const FunctionNode &main = *source.main();
    llvm::DenseMap<const ExprNode *, Expr> map;
    std::vector<Var> vars;
    for (size_t i = 0; i < params.size(); ++i) {
      const Var &p = main.params()[i];
      Var v = var(p->name(), params[i]);
      v->setLoc(p->loc());
      map[p.get()] = v;
      vars.push_back(v);
    }
    Expr body = graph(main.body(), map);
    auto out = std::make_shared<Module>();
    out->setSourceName(source.sourceName());
    for (const Function &f : functions)
      out->add(f);
    Function copy =
        make<const FunctionNode>("main", vars, body, Type(), main.functionKind(), main.attrs());
    copy->setLoc(main.loc());
    out->add(copy);
    return out;
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
        make<const FunctionNode>(name, params, body, Type(), f.functionKind(), f.attrs());
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
      if (const FunctionNode *f = source_.callee(*c)) {
        Function copy = function(*f, freshName(f->name()));
        functions.push_back(copy);
        callee = globalVar(copy->name());
      }
      std::vector<Expr> args;
      for (const Expr &a : c->args())
        args.push_back(mapped(a));
      r = call(callee, args, hooks_.attrs ? hooks_.attrs(*c) : c->attrs(), c->keys(), c->name());
      // How many results a call has is not a type to infer again: rules of
      // ops with optional results (nn.LSTM's states) read it.
      if (auto *tu = llvm::dyn_cast_or_null<TupleTypeNode>(c->type().get()))
        r->setType(tupleType(std::vector<Type>(tu->size())));
    } else if (auto *t = llvm::dyn_cast<TupleNode>(e.get())) {
      std::vector<Expr> fields;
      for (const Expr &f : t->fields())
        fields.push_back(mapped(f));
      r = tuple(fields);
    } else if (auto *g = llvm::dyn_cast<TupleGetItemNode>(e.get())) {
      r = tupleGetItem(mapped(g->tuple()), g->index());
    } else if (auto *k = llvm::dyn_cast<ConstantNode>(e.get()); k && hooks_.constant) {
      Expr replaced = hooks_.constant(*k);
      return replaced ? replaced : e;
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

  const Module &source_;
  Hooks hooks_;
  llvm::StringSet<> names_, copied_;
};


} // namespace kc
