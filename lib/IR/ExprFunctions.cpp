//===- ExprFunctions.cpp - The table of expression functions --------------===//
#include "kc/IR/ExprFunctions.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>

namespace kc {

namespace {
namespace value {
// Each function's formula, in double.
#define KC_EXPR_FN(Id, Name, Arity, Flags, Doc, Value)                                             \
  double Id(double x, [[maybe_unused]] double y) { return double(Value); }
#include "kc/IR/ExprFunctions.def"
} // namespace value

const ExprFunction kFunctions[] = {
#define KC_EXPR_FN(Id, Name, Arity, Flags, Doc, Value) {Name, Arity, Flags, Doc, &value::Id},
#define KC_EXPR_ALIAS(Id, Name, Arity, Flags, Doc, Of) {Name, Arity, Flags, Doc, &value::Of},
#define KC_EXPR_OTHER(Id, Name, Arity, Flags, Doc) {Name, Arity, Flags, Doc, nullptr},
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
