//===- Specialize.cpp - A module at other input shapes --------------------===//
#include "kc/IR/Specialize.h"
#include "UntypedCopy.h"
#include "kc/IR/AttrOperands.h"
#include "kc/IR/TypeInference.h"
#include "kc/Support/Quote.h"

namespace kc {
namespace {

llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

} // namespace

llvm::Expected<ModulePtr> specializeInputs(const Module &m, llvm::ArrayRef<Type> inputs) {
  Function main = m.main();
  if (!main)
    return error("the module has no @main");
  if (inputs.size() != main->params().size())
    return error("the model takes " + llvm::Twine(main->params().size()) + " input(s), got " +
                 llvm::Twine(inputs.size()));
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
  }
  ModulePtr out = UntypedCopy(m).module(m, inputs);
  if (auto e = inferTypes(*out))
    return e;
  if (auto e = bindAttrOperands(*out))
    return e;
  return out;
}

} // namespace kc
