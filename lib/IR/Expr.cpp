//===- Expr.cpp - Expression nodes ----------------------------------------===//
#include "kc/IR/Expr.h"
#include "kc/IR/Op.h"

namespace kc {

const OpDef *CallNode::opDef() const {
  if (auto *op = llvm::dyn_cast<OpNode>(callee_.get()))
    return &op->def();
  return nullptr;
}

llvm::StringRef CallNode::calleeName() const {
  if (auto *op = llvm::dyn_cast<OpNode>(callee_.get()))
    return op->name();
  if (auto *g = llvm::dyn_cast<GlobalVarNode>(callee_.get()))
    return g->name();
  return "";
}

const GlobalVarNode *CallNode::global() const {
  return llvm::dyn_cast<GlobalVarNode>(callee_.get());
}

size_t CallNode::dataArgIndex(size_t i) const {
  for (size_t k = 0; k < args_.size(); ++k) {
    if (keys_[k].role == ArgRole::Weight)
      continue;
    if (i-- == 0)
      return k;
  }
  return args_.size();
}

const ExprNode *CallNode::dataArg(size_t i) const {
  size_t k = dataArgIndex(i);
  return k < args_.size() ? args_[k].get() : nullptr;
}

size_t CallNode::numDataArgs() const {
  size_t n = 0;
  for (const ArgKey &k : keys_)
    n += k.role != ArgRole::Weight;
  return n;
}

std::vector<const ExprNode *> CallNode::dataArgs() const {
  std::vector<const ExprNode *> r;
  for (size_t k = 0; k < args_.size(); ++k)
    if (keys_[k].role != ArgRole::Weight)
      r.push_back(args_[k].get());
  return r;
}

const ExprNode *CallNode::argByName(llvm::StringRef key) const {
  for (size_t i = 0; i < args_.size(); ++i)
    if (keys_[i].role != ArgRole::Positional && keys_[i].name == key)
      return args_[i].get();
  return nullptr;
}

const ConstantNode *CallNode::weight(llvm::StringRef key) const {
  for (size_t i = 0; i < args_.size(); ++i)
    if (keys_[i].role == ArgRole::Weight && keys_[i].name == key)
      return llvm::dyn_cast<ConstantNode>(args_[i].get());
  return nullptr;
}

llvm::StringRef OpNode::name() const { return def_->name(); }

Var var(std::string name, Type t) { return make<const VarNode>(std::move(name), std::move(t)); }

Constant scalarConstant(AttrValue v, Type t) {
  return make<const ConstantNode>(std::move(v), std::move(t));
}

Constant floatConstant(double v, DType dt) {
  return scalarConstant(AttrValue::real(v), tensorType(dt, {}));
}

Constant intConstant(int64_t v, DType dt) {
  return scalarConstant(AttrValue::integer(v), tensorType(dt, {}));
}

Constant tensorConstant(std::string name, Type t, TensorDataPtr data) {
  return make<const ConstantNode>(std::move(name), std::move(t), std::move(data));
}

Call call(llvm::StringRef opName, llvm::ArrayRef<Expr> args, Attrs attrs,
          llvm::ArrayRef<ArgKey> keys, std::string name) {
  const OpDef *def = OpRegistry::global().getOrOpaque(opName);
  return call(Expr(def->node()), args, std::move(attrs), keys, std::move(name));
}

Call call(Expr callee, llvm::ArrayRef<Expr> args, Attrs attrs, llvm::ArrayRef<ArgKey> keys,
          std::string name) {
  return make<const CallNode>(std::move(callee), args, keys, std::move(attrs), std::move(name));
}

Call call(const Function &f, llvm::ArrayRef<Expr> args, Attrs attrs, llvm::ArrayRef<ArgKey> keys,
          std::string name) {
  return call(Expr(globalVar(f->name())), args, std::move(attrs), keys, std::move(name));
}

Tuple tuple(llvm::ArrayRef<Expr> fields) { return make<const TupleNode>(fields); }

GlobalVar globalVar(std::string name) { return make<const GlobalVarNode>(std::move(name)); }

TupleGetItem tupleGetItem(Expr t, unsigned index) {
  return make<const TupleGetItemNode>(std::move(t), index);
}

static bool samePointers(llvm::ArrayRef<Expr> a, llvm::ArrayRef<Expr> b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].get() != b[i].get())
      return false;
  return true;
}

Call withArgs(const Call &c, llvm::ArrayRef<Expr> args) {
  if (samePointers(c->args(), args))
    return c;
  Call n = make<const CallNode>(c->callee(), args, c->keys(), c->attrs(), c->name());
  n->setLoc(c->loc());
  return n;
}

Tuple withFields(const Tuple &t, llvm::ArrayRef<Expr> fields) {
  if (samePointers(t->fields(), fields))
    return t;
  Tuple n = tuple(fields);
  n->setLoc(t->loc());
  return n;
}

TupleGetItem withTuple(const TupleGetItem &g, Expr t) {
  if (g->tuple().get() == t.get())
    return g;
  TupleGetItem n = tupleGetItem(std::move(t), g->index());
  n->setLoc(g->loc());
  return n;
}

Function withBody(const Function &f, llvm::ArrayRef<Var> params, Expr body) {
  bool same = f->body().get() == body.get() && params.size() == f->params().size();
  for (size_t i = 0; same && i < params.size(); ++i)
    same = params[i].get() == f->params()[i].get();
  if (same)
    return f;
  Function n = make<const FunctionNode>(f->name(), params, std::move(body), f->retType(),
                                        f->functionKind(), f->attrs());
  n->setLoc(f->loc());
  return n;
}

} // namespace kc
