//===- WidenHalf.cpp - f16 models computed in f32 -------------------------===//
#include "kc/IR/WidenHalf.h"
#include "UntypedCopy.h"
#include "kc/IR/TypeInference.h"
#include "kc/Support/DType.h"
#include "kc/Support/Half.h"

#include "llvm/ADT/DenseSet.h"

namespace kc {
namespace {

bool isHalf(const Type &t) {
  if (auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(t.get()))
    return tt->dtype() == DType::F16;
  if (auto *tu = llvm::dyn_cast_or_null<TupleTypeNode>(t.get()))
    return llvm::any_of(tu->fields(), [](const Type &f) { return isHalf(f); });
  return false;
}

bool namesHalf(const AttrValue &v) {
  return v.isString() && parseTorchDType(v.getString()) == DType::F16;
}

} // namespace

bool mentionsHalf(const Module &m) {
  bool found = false;
  for (const Function &f : m.functions()) {
    for (const Var &p : f->params())
      found = found || isHalf(p->type());
    PostOrderVisit(f->body(), [&](const Expr &e) {
      if (found)
        return;
      found = isHalf(e->type());
      if (auto *c = llvm::dyn_cast<CallNode>(e.get()))
        if (const AttrValue *d = c->attrs().find("dtype"))
          found = found || namesHalf(*d);
    });
  }
  return found;
}

llvm::Expected<ModulePtr> widenHalf(const Module &m) {
  Function main = m.main();
  if (!main)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "the module has no @main");
  // Constants read as data (not as an op's weight) are converted here, once.
  llvm::DenseSet<const ExprNode *> weights;
  for (const Function &f : m.functions())
    PostOrderVisit(f->body(), [&](const Expr &e) {
      if (auto *c = llvm::dyn_cast<CallNode>(e.get()))
        for (size_t i = 0; i < c->numArgs(); ++i)
          if (c->keys()[i].role == ArgRole::Weight)
            weights.insert(c->arg(i).get());
    });
  UntypedCopy::Hooks hooks;
  hooks.constant = [&](const ConstantNode &k) -> Expr {
    auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(k.type().get());
    if (!tt || tt->dtype() != DType::F16 || weights.count(&k))
      return nullptr;
    Type wide = tensorType(DType::F32, tt->dims());
    Constant c;
    if (k.isScalar()) {
      c = scalarConstant(k.scalar(), wide);
    } else {
      TensorDataPtr data;
      if (k.hasData()) {
        llvm::ArrayRef<uint8_t> half = k.data()->bytes();
        std::vector<float> f(half.size() / 2);
        halfToFloat(half.data(), f.data(), f.size());
        auto *b = reinterpret_cast<const uint8_t *>(f.data());
        data = TensorData::owned(std::vector<uint8_t>(b, b + f.size() * sizeof(float)));
      }
      c = tensorConstant(k.name(), wide, std::move(data));
    }
    c->setLoc(k.loc());
    return c;
  };
  hooks.attrs = [](const CallNode &c) {
    Attrs attrs = c.attrs();
    if (const AttrValue *d = attrs.find("dtype"); d && namesHalf(*d))
      attrs.set("dtype", AttrValue::string("torch.float"));
    return attrs;
  };
  std::vector<Type> params;
  for (const Var &p : main->params()) {
    Type t = p->type();
    if (auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(t.get());
        tt && tt->dtype() == DType::F16)
      t = tensorType(DType::F32, tt->dims());
    params.push_back(t);
  }
  ModulePtr out = UntypedCopy(m, hooks).module(m, params);
  if (auto e = inferTypes(*out))
    return e;
  return out;
}

} // namespace kc
