//===- kc/IR/AttrOperands.h - Attributes given as operands ------*- C++ -*-===//
///
/// \file
/// Where an attribute depends on the input's shape, pnnx writes it as an
/// operand keyed by the attribute's name: `Tensor.reshape ... $input=2
/// $shape=3`, with operand 3 made by a `pnnx.Expression` such as
/// `[size(@0,0),size(@0,1),3,4,16]`. Once the shapes it reads are known
/// (when a plan is made for actual input shapes), such an operand has one
/// value and becomes an ordinary attribute: type rules and kernels only ever
/// see attributes.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"

#include "llvm/Support/Error.h"

#include <optional>

namespace kc {

/// True if operand `i` of `c` gives one of the op's attributes: it is keyed
/// by the name of an attribute the op declares, not by one of its inputs.
bool isAttrOperand(const CallNode &c, size_t i);
bool hasAttrOperands(const CallNode &c);

/// The value of `e` when the types and literals it reads determine it: a
/// scalar literal, a small integer constant tensor, or a call of an
/// expression function over `size(@i[, d])` of static operands, literals and
/// scalar arithmetic (Python semantics). Nullopt otherwise. `m` holds the
/// functions calls name.
std::optional<AttrValue> staticValue(const Expr &e, const Module &m);

/// `c` with every attribute operand turned into the attribute it gives;
/// null when some operand's value is not known yet (see staticValue).
Call bindAttrOperands(const CallNode &c, const Module &m);

/// True if some call of `m` has an attribute operand.
bool hasAttrOperands(const Module &m);

/// Rewrites every function of `m` (types inferred) so that calls whose
/// attribute operands are known take them as attributes, and infers the
/// types again. An operand still unknown after that (it depends on tensor
/// values, not shapes) is an error naming the op, its line and the attribute.
llvm::Error bindAttrOperands(Module &m);

} // namespace kc
