//===- TypeRuleUtils.cpp - Helpers for op type rules ----------------------===//
#include "TypeRuleUtils.h"

#include "kc/IR/Diagnostic.h"
#include "kc/Support/FloatToInt.h"
#include "kc/Support/Quote.h"

namespace kc::typerules {

const TensorTypeNode *dataType(const CallNode &c, size_t i) {
  const ExprNode *a = c.dataArg(i);
  return a ? llvm::dyn_cast_or_null<TensorTypeNode>(a->type().get()) : nullptr;
}

llvm::Error fail(const CallNode &c, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), describeCall(c) + ": " + msg);
}

std::string shown(const Type &t) { return clipInput(typeToString(t)); }

int64_t normDim(int64_t d, int64_t rank) {
  if (d < 0)
    d += rank;
  return d >= 0 && d < rank ? d : -1;
}

std::optional<std::vector<int64_t>> broadcast(llvm::ArrayRef<int64_t> a,
                                              llvm::ArrayRef<int64_t> b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t k = 0; k < r; ++k) {
    int64_t x = k < a.size() ? a[a.size() - 1 - k] : 1;
    int64_t y = k < b.size() ? b[b.size() - 1 - k] : 1;
    int64_t &o = out[r - 1 - k];
    if (x == y)
      o = x;
    else if (x == 1)
      o = y;
    else if (y == 1)
      o = x;
    else if (x < 0 || y < 0)
      o = x < 0 ? y : x; // a dynamic dim must match the static one at run time
    else
      return std::nullopt;
  }
  return out;
}

std::vector<int64_t> intsN(const CallNode &c, llvm::StringRef key, size_t n,
                           std::vector<int64_t> dflt) {
  std::vector<int64_t> v = c.attrs().getInts(key, dflt);
  if (v.size() == 1 && n > 1)
    v.assign(n, v[0]);
  if (v.size() != n)
    return dflt;
  return v;
}

llvm::Error checkScalarFits(const CallNode &c, llvm::StringRef key, DType dtype) {
  const AttrValue *v = c.attrs().find(key);
  if (!v || !v->isNumber() || (v->isInt() && dtype == DType::I64) ||
      scalarFits(v->getNumber(), dtype))
    return llvm::Error::success();
  return fail(c, "attribute " + quoteInput(key) + " = " + attrToString(*v) +
                     " cannot be converted to " + dtypeName(dtype) + " without overflow");
}

llvm::Expected<Type> sameAsInput(const CallNode &c) {
  const ExprNode *a = c.dataArg(0);
  return a ? a->type() : Type();
}

} // namespace kc::typerules
