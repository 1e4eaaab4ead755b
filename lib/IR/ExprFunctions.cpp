//===- ExprFunctions.cpp - The table of expression functions --------------===//
#include "kc/IR/ExprFunctions.h"

#include "llvm/ADT/StringMap.h"

namespace kc {

namespace {
const ExprFunction kFunctions[] = {
#define KC_EXPR_FN(Id, Name, Arity, Flags, Doc, Value) {Name, Arity, Flags, Doc, true},
#define KC_EXPR_ALIAS(Id, Name, Arity, Flags, Doc, Of) {Name, Arity, Flags, Doc, true},
#define KC_EXPR_OTHER(Id, Name, Arity, Flags, Doc) {Name, Arity, Flags, Doc, false},
#include "kc/IR/ExprFunctions.def"
};
} // namespace

const ExprFunction *findExprFunction(llvm::StringRef name) {
  static const llvm::StringMap<const ExprFunction *> byName = [] {
    llvm::StringMap<const ExprFunction *> m;
    for (const ExprFunction &f : kFunctions)
      m[f.name] = &f;
    return m;
  }();
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : it->second;
}

} // namespace kc
