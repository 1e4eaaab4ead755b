//===- kc/IR/Rpn.h - Reverse-Polish expression programs ---------*- C++ -*-===//
///
/// \file
/// A primitive expression function as a flat postfix program: push an
/// argument, push a literal, or apply an op to the top of the stack. The
/// `lower-rpn` pass stores it in the IR as the function body
///
///     %2 = rpn(%0, %1) {program=["%0", "%1", "add", "2.5", "mul"]} : f32[...]
///
/// and the interpreter runs it on a stack machine, block by block. Both go
/// through this one representation.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Expr.h"
#include "kc/IR/Op.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kc {

struct RpnInstr {
  enum class Kind : uint8_t { Arg, Literal, Apply };
  explicit RpnInstr(Kind k) : kind(k) {}
  Kind kind;
  unsigned arg = 0;          ///< Arg: parameter index
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

  /// Text tokens: `%i` for arguments, `2.5:f32` for literals, op names
  /// (with `/n` appended when the op takes a variable number of operands).
  std::vector<std::string> toTokens() const;
};

/// The op name of the lowered body.
constexpr const char *kRpnOpName = "rpn";

/// The most instructions lowerToRpn emits for a function of n nodes:
/// kRpnLengthPerNode * n + kRpnLengthSlack. Beyond, sharing in the DAG
/// (repeated at each use in the program) would make it grow faster than
/// the function.
constexpr uint64_t kRpnLengthPerNode = 16, kRpnLengthSlack = 65536;

/// Lowers a primitive function to a program: from its expression AST, or
/// reads it back from an already lowered body (an `rpn` call). A program
/// longer than the bound above is refused, naming the function.
llvm::Expected<RpnProgram> lowerToRpn(const FunctionNode &fn);
/// Parses the `program` tokens of an `rpn` call.
llvm::Expected<RpnProgram> parseRpnTokens(llvm::ArrayRef<std::string> tokens, unsigned numParams);
/// True when `fn`'s body is already an `rpn` call.
bool isLoweredToRpn(const FunctionNode &fn);

/// How many instructions lowerToRpn emits for `body`: the size of the
/// expression as a tree, where a subexpression is counted at each of its
/// uses. Counted on the DAG in time linear in its size, saturating at
/// `cap` (a shared chain's tree can be exponential in the DAG).
uint64_t rpnLength(const Expr &body, uint64_t cap);

/// If `e` is a list expression of operands and Nones (`[@0]`, `[None,@1]`,
/// as pnnx writes Tensor.index's indices), a call
/// of a primitive function whose body is `list` or its lowered `rpn`
/// program: for each item, the argument of the call it names, or -1 for a
/// None. The interpreter passes such a list on as its tensors, in item
/// order, Nones left out; it never runs as an expression.
std::optional<std::vector<int>> listExpressionItems(const ExprNode &e);

} // namespace kc
