//===- kc/IR/TypeInference.h - Type inference -------------------*- C++ -*-===//
///
/// \file
/// Computes the type of every node from its operands with the ops' type
/// rules, iteratively in post order. Where the model declared a type (PNNX
/// `#` annotations, set by the importer), the inferred type must agree: a
/// different dtype, rank or static dim is an error naming the op; a `?` on
/// either side is compatible and the more precise type is kept.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"

#include "llvm/Support/Error.h"

namespace kc {

llvm::Error inferTypes(Module &m);

/// The type of one op call from its operands' types (null when unknown, and
/// for a function call: inferTypes reads those from the module). `m` holds
/// the functions that compute attribute operands (without it, those
/// attributes, and so the type, are unknown).
llvm::Expected<Type> inferCallType(const CallNode &call, const Module *m = nullptr);

/// Combines a declared and an inferred type: the more precise of the two, or
/// nullopt when they disagree.
std::optional<Type> unifyTypes(const Type &declared, const Type &inferred);

} // namespace kc
