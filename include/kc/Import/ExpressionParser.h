//===- kc/Import/ExpressionParser.h - pnnx.Expression to IR -----*- C++ -*-===//
///
/// \file
/// Parses the `expr=` text of a `pnnx.Expression` (prefix form such as
/// `add(mul(@0,2.5),@1)`, lists `[1,-1,size(@0,3)]`) by recursive descent into
/// a primitive Function whose body is a tree of Calls on expression ops over
/// the function's parameters (`@i`) and scalar Constants.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Expr.h"

#include "llvm/Support/Error.h"

namespace kc {

struct ExpressionLimits {
  unsigned maxDepth = 256;
};

/// The arity of a pnnx expression function (`add`: 2, `neg`: 1, `size`: 1 or
/// 2 → returns -1), or 0 when the name is not an expression function.
int expressionArity(llvm::StringRef name);

/// Parses `text` into the body of a function with `params` (one per op input,
/// `@i` is params[i]). Errors name the column inside the expression.
llvm::Expected<Expr> parseExpression(llvm::StringRef text, llvm::ArrayRef<Var> params,
                                     const ExpressionLimits &limits = {});

} // namespace kc
