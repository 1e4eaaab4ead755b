//===- FoldConstants.cpp - Evaluate what is known at compile time ---------===//
//
// Two levels:
//  - inside expression functions, an op whose operands are all literals
//    becomes a literal (Python semantics, see ScalarEval), and `size(@i, d)`
//    of a parameter with a static shape becomes the extent;
//  - in `main`, a call whose data operands are all constants (a
//    `pnnx.Attribute` → reshape → add chain) is run once through the
//    interpreter's own kernels and replaced by the resulting tensor.
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Functor.h"
#include "kc/IR/Op.h"
#include "kc/IR/ScalarEval.h"
#include "kc/IR/TypeInference.h"
#include "kc/Pass/Pass.h"
#include "kc/Pass/PassUtils.h"
#include "kc/Runtime/Interpreter.h"

#include "llvm/ADT/StringSet.h"

#include <cstring>

using namespace kc;

namespace {

const ConstantNode *literal(const Expr &e) {
  auto *k = llvm::dyn_cast<ConstantNode>(e.get());
  return k && k->isScalar() ? k : nullptr;
}

Type literalType(const AttrValue &v) {
  if (v.isInt())
    return tensorType(DType::I64, {});
  if (v.isBool())
    return tensorType(DType::Bool, {});
  return tensorType(DType::F32, {});
}

/// Folds literal subexpressions of one expression function.
class LiteralFolder final : public MixedModeMutator {
public:
  using MixedModeMutator::Rewrite_;
  uint64_t folded = 0;

  Expr Rewrite_(const CallNode *pre, const Expr &post) override {
    auto *c = llvm::cast<CallNode>(post.get());
    const OpDef *op = c->opDef();
    if (!op || !op->is(OpFlags::ExprOp))
      return post;
    if (op->name() == "size")
      return foldSize(*c, post);
    std::vector<AttrValue> args;
    for (const Expr &a : c->args()) {
      const ConstantNode *k = literal(a);
      if (!k)
        return post;
      args.push_back(k->scalar());
    }
    std::optional<AttrValue> v = evalScalarOp(op->name(), args);
    if (!v)
      return post;
    ++folded;
    Constant k = scalarConstant(*v, literalType(*v));
    k->setLoc(pre->loc());
    return k;
  }

private:
  Expr foldSize(const CallNode &c, const Expr &post) {
    auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(c.arg(0)->type().get());
    if (!tt || !tt->isStatic())
      return post;
    // size(x) is the whole shape (a list), not foldable to one literal.
    if (c.numArgs() != 2)
      return post;
    int64_t v = -1;
    {
      const ConstantNode *d = literal(c.arg(1));
      if (!d || !d->scalar().isInt())
        return post;
      int64_t axis = d->scalar().getInt();
      if (axis < 0)
        axis += int64_t(tt->rank());
      if (axis < 0 || axis >= int64_t(tt->rank()))
        return post;
      v = tt->dims()[axis];
    }
    ++folded;
    return intConstant(v);
  }
};

class FoldConstants final : public ExpressionPass {
public:
  llvm::StringRef name() const override { return "fold-constants"; }
  llvm::StringRef description() const override {
    return "Fold literal subexpressions of expressions and graph ops whose inputs are all "
           "constants";
  }

  llvm::Error run(Module &m) override {
    if (auto e = ExpressionPass::run(m))
      return e;
    if (!*graph)
      return llvm::Error::success();

    // Graph level: calls are visited in post order, so a chain folds from
    // its start; each evaluation sees constants produced just before.
    llvm::StringSet<> names;
    for (const Function &f : m.functions())
      PostOrderVisit(f->body(), [&](const Expr &e) {
        if (auto *k = llvm::dyn_cast<ConstantNode>(e.get()))
          names.insert(k->name());
      });
    llvm::Error err = llvm::Error::success();
    rewriteMain(m, [&](const Expr &body) {
      GraphFolder gf(*this, m, names, err);
      return gf.Mutate(body);
    });
    return err;
  }

protected:
  /// Literal subexpressions of one expression function.
  llvm::Expected<Expr> runOnFunction(const FunctionNode &f) override {
    LiteralFolder lf;
    Expr body = lf.Mutate(f.body());
    numLiterals += lf.folded;
    return body;
  }

private:
  class GraphFolder final : public MixedModeMutator {
  public:
    using MixedModeMutator::Rewrite_;
    GraphFolder(FoldConstants &p, const Module &m, llvm::StringSet<> &names, llvm::Error &err)
        : p_(p), m_(m), names_(names), err_(err) {}

    Expr Rewrite_(const CallNode *pre, const Expr &post) override {
      auto *c = llvm::cast<CallNode>(post.get());
      if (err_)
        return post;
      size_t dataArgs = 0;
      for (size_t i = 0; i < c->numArgs(); ++i) {
        auto *k = llvm::dyn_cast<ConstantNode>(c->arg(i).get());
        if (!k || (!k->isScalar() && !k->hasData()))
          return post;
        if (c->keys()[i].role != ArgRole::Weight)
          ++dataArgs;
      }
      auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(pre->type().get());
      if (!dataArgs || !tt || !tt->isStatic())
        return post;
      uint64_t bytes = uint64_t(tt->numElements().value_or(0)) * dtypeSize(tt->dtype());
      if (bytes >> 20 >= *p_.maxMb && bytes > (*p_.maxMb << 20)) // no overflow for any max-mb
        return post;
      auto folded = evaluate(*c, pre->type());
      if (!folded) {
        // Not evaluable here (no kernel, unsupported case): leave it.
        llvm::consumeError(folded.takeError());
        return post;
      }
      ++p_.numGraph;
      return *folded;
    }

  private:
    llvm::Expected<Expr> evaluate(const CallNode &c, const Type &type) {
      Module one;
      if (const FunctionNode *fn = m_.callee(c)) {
        // Type inference gives a function called once the types of its
        // arguments (inferTypes); here it is called once, but it is shared
        // with the module: one whose parameters stay more general (called
        // from several places) is not folded, so as not to narrow them.
        for (size_t i = 0; i < fn->params().size() && i < c.numArgs(); ++i) {
          const Type &p = fn->params()[i]->type();
          auto u = unifyTypes(p, c.arg(i)->type());
          if (!u || !typeEqual(*u, p))
            return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                           "a generic function is not folded");
        }
        // A fused group brings the expression functions it calls.
        PostOrderVisit(fn->body(), [&](const Expr &e) {
          if (auto *inner = llvm::dyn_cast<CallNode>(e.get()))
            if (const FunctionNode *g = m_.callee(*inner))
              one.add(Function(g));
        });
        one.add(Function(fn));
      }
      Call copy = make<const CallNode>(c.callee(), c.args(), c.keys(), c.attrs(), c.name());
      one.add(make<const FunctionNode>("main", llvm::ArrayRef<Var>{}, copy, type, false));
      if (auto e = inferTypes(one))
        return e;
      auto cm = rt::CompiledModel::compile(one, {});
      if (!cm)
        return cm.takeError();
      auto outs = (*cm)->run({});
      if (!outs)
        return outs.takeError();
      const rt::Tensor &t = (*outs)[0];
      std::vector<uint8_t> bytes(static_cast<const uint8_t *>(t.raw()),
                                 static_cast<const uint8_t *>(t.raw()) + t.nbytes());
      std::string base = c.name().empty() ? "folded" : c.name();
      std::string name = base + ".data";
      for (unsigned i = 0; names_.count(name); ++i)
        name = base + "_" + std::to_string(i) + ".data";
      names_.insert(name);
      Constant k = tensorConstant(name, type, TensorData::owned(std::move(bytes)));
      k->setLoc(c.loc());
      return Expr(k);
    }

    FoldConstants &p_;
    const Module &m_;
    llvm::StringSet<> &names_;
    llvm::Error &err_;
  };

  Option<bool> graph{this, "graph", "Also fold graph ops whose inputs are all constants", true};
  Option<uint64_t> maxMb{this, "max-mb", "Largest folded tensor, in MiB", 64};
  Statistic numLiterals{this, "num-literals", "Expression subtrees folded to literals"};
  Statistic numGraph{this, "num-graph", "Graph ops folded to constants"};
};

} // namespace

KC_REGISTER_PASS(FoldConstants);
