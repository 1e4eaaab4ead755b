//===- kc/IR/Rpn.h - Reverse-Polish expression programs ---------*- C++ -*-===//
///
/// \file
/// A primitive expression function as a flat postfix program: push an
/// argument, push a literal, apply an op to the top of the stack, keep the
/// top in a numbered slot, or push a slot again. The `lower-rpn` pass
/// stores it in the IR as the function body
///
///     %2 = rpn(%0, %1) {program=["%0", "%1", "add", "2.5", "mul"]} : f32[...]
///
/// and the interpreter runs it on a stack machine, block by block. Both go
/// through this one representation. A value the expression uses more than
/// once is computed once: `=$0` after it keeps it in slot 0, and `$0`
/// pushes it again at each later use, so a program is as long as its
/// expression DAG, not as the tree that DAG unfolds into:
///
///     mul(t, t) with t = add(%0, %1)   ==>   ["%0","%1","add","=$0","$0","mul"]
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Expr.h"
#include "kc/IR/Module.h"
#include "kc/IR/Op.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kc {

struct RpnInstr {
  /// Save copies the top of the stack into slot `arg` (leaving it there);
  /// Load pushes slot `arg`.
  enum class Kind : uint8_t { Arg, Literal, Apply, Save, Load };
  explicit RpnInstr(Kind k) : kind(k) {}
  Kind kind;
  unsigned arg = 0;          ///< Arg: parameter index; Save, Load: slot
  AttrValue literal;         ///< Literal: the value
  DType literalType = DType::F32;
  const OpDef *op = nullptr; ///< Apply: the operation (its arity pops)
  unsigned numOperands = 0;  ///< Apply: how many values it pops
};

struct RpnProgram {
  std::vector<RpnInstr> code;
  unsigned numParams = 0;
  /// Largest stack depth reached while running the program.
  unsigned maxDepth = 0;
  /// Slots the program saves values in (numbered from 0 in saving order).
  unsigned numSlots = 0;

  /// Text tokens: `%i` for arguments, `2.5:f32` for literals, op names
  /// (with `/n` appended when the op takes a variable number of operands),
  /// `=$i` to save the top in slot i, `$i` to push slot i.
  std::vector<std::string> toTokens() const;

  /// When the program is one binary op of two distinct parameters
  /// (`%a %b op`): that op's instruction; else null.
  const RpnInstr *binaryOfParams() const;
};

/// Runs `in` on a replay of a program over values of another kind (types,
/// texts, constants) if it is a Save or a Load; says whether it was.
template <class T>
bool replaySlot(const RpnInstr &in, std::vector<T> &stack, std::vector<T> &slots) {
  if (in.kind == RpnInstr::Kind::Save)
    slots.push_back(stack.back());
  else if (in.kind == RpnInstr::Kind::Load)
    stack.push_back(slots[in.arg]);
  else
    return false;
  return true;
}

/// The op name of the lowered body.
constexpr const char *kRpnOpName = "rpn";

/// Lowers a primitive function to a program: from its expression AST, or
/// reads it back from an already lowered body (an `rpn` call). Each call
/// node of the AST is computed once; one with several uses is saved in a
/// slot after it and loaded at its other uses.
llvm::Expected<RpnProgram> lowerToRpn(const FunctionNode &fn);
/// Parses the `program` tokens of an `rpn` call.
llvm::Expected<RpnProgram> parseRpnTokens(llvm::ArrayRef<std::string> tokens, unsigned numParams);
/// True when `fn`'s body is already an `rpn` call.
bool isLoweredToRpn(const FunctionNode &fn);

/// How often each node of `body` is an operand of a call in it.
llvm::DenseMap<const ExprNode *, unsigned> operandUses(const Expr &body);

/// How many instructions lowerToRpn emits for `body`, given its
/// operandUses: one per call node, one per use of a parameter or literal,
/// and a save and a load per further use of a call used more than once.
/// Linear in the DAG's size; saturates at `cap`.
uint64_t rpnLength(const Expr &body, const llvm::DenseMap<const ExprNode *, unsigned> &uses,
                   uint64_t cap);

/// A program computing x * s per channel: x of the result's (4-d) shape,
/// s of shape [N or 1, C, 1, 1] (the gate of a squeeze-and-excitation
/// block), as fuse-ops groups it and the interpreter reads it.
struct ChannelScaleOperands {
  unsigned x, s; ///< parameter indices
  bool perImage; ///< s has one row of C values per image (N > 1)
};
/// Whether `p` is `%a %b mul` of two distinct parameters, one of them x
/// and the other s, given their shapes and the result's.
std::optional<ChannelScaleOperands>
matchChannelScale(const RpnProgram &p, llvm::ArrayRef<std::vector<int64_t>> argShapes,
                  llvm::ArrayRef<int64_t> result);

/// If `e` is a list expression of operands and Nones (`[@0]`, `[None,@1]`,
/// as pnnx writes Tensor.index's indices), a call
/// of a primitive function whose body is `list` or its lowered `rpn`
/// program: for each item, the argument of the call it names, or -1 for a
/// None. The interpreter passes such a list on as its tensors, in item
/// order, Nones left out; it never runs as an expression.
std::optional<std::vector<int>> listExpressionItems(const ExprNode &e, const Module &m);

} // namespace kc
