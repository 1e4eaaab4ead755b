//===- kc/IR/Op.h - Operator definitions and the op registry ----*- C++ -*-===//
///
/// \file
/// Every operator kc knows is registered once, from its own file, with its
/// name, aliases (`nn.ReLU` = `F.relu`), data inputs, weight attributes,
/// attribute schema with defaults, and a type rule. PNNX's open-ended op names
/// are resolved against this registry at import; a name it does not know
/// becomes an *opaque* OpDef, which prints and round-trips but cannot run.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Attr.h"
#include "kc/IR/Expr.h"
#include "kc/IR/Type.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kc {

/// Computes the result type of a call from its (already typed) arguments.
/// Returns a null Type when it cannot tell (e.g. an argument type is unknown).
using TypeRule = llvm::Expected<Type> (*)(const CallNode &call);
class Module;
/// A rule that also reads a function of the module a call's operand calls
/// (Tensor.index's list of index tensors is a pnnx.Expression).
using ModuleTypeRule = llvm::Expected<Type> (*)(const CallNode &call, const Module &m);

/// An attribute of the op's schema: its name and default. The default's kind
/// is the expected kind; None means "any kind".
struct AttrSpec {
  std::string name;
  AttrValue dflt;
  bool required = false;
};

enum class OpFlags : uint32_t {
  None = 0,
  Elementwise = 1u << 0, ///< result[i] depends on operand[i] only (after broadcast)
  ExprOp = 1u << 1,      ///< may appear in a primitive expression body
  Pure = 1u << 2,        ///< no side effects: CSE/DCE/folding may apply
  Opaque = 1u << 3,      ///< unknown to kc: no type rule, no kernel
  Commutative = 1u << 4,
  Variadic = 1u << 5, ///< any number of positional data inputs
  NoOp = 1u << 6,     ///< returns its first input unchanged (dce removes it)
  /// Inference batch normalization: dim 1 scaled and shifted per channel by
  /// running_mean, running_var, weight and bias (fuse-conv-bn folds it into
  /// a producer with a channel axis).
  BatchNorm = 1u << 7,
  /// Takes the activation after it into its epilogue (convolutions,
  /// nn.Linear, batch normalization): fuse-ops groups the two into one
  /// fused function.
  FusesActivation = 1u << 8,
  /// The result is the input's elements in order, in another shape
  /// (Tensor.reshape, torch.flatten, torch.squeeze, torch.unsqueeze): a
  /// reshape of its result is a reshape of its input.
  Reshape = 1u << 9,
  /// A result of the input's type is the input itself (the reshapes,
  /// Tensor.slice, Tensor.expand).
  SameTypeIsInput = 1u << 10,
  /// Pads its input as kc/IR/Padding.h reads the call (F.pad, the padding
  /// modules): padding nothing, it returns the input.
  Pad = 1u << 11,
};
inline OpFlags operator|(OpFlags a, OpFlags b) { return OpFlags(uint32_t(a) | uint32_t(b)); }

/// The activations a producer (a convolution, a linear layer) can apply in
/// its epilogue: an op's trait, set where it is registered.
enum class ActivationKind : uint8_t {
  None,
  Relu,
  Relu6,
  Silu,
  Sigmoid,
  Hardswish,
  LeakyRelu,
  Gelu
};
inline bool any(OpFlags a, OpFlags b) { return (uint32_t(a) & uint32_t(b)) != 0; }

/// What slides a window over an op's spatial dims; the defaults and the
/// output-size rule differ (kc/IR/WindowAttrs.h reads the attributes).
enum class WindowOp : uint8_t { Conv, ConvTranspose, Pool };
/// How a pool reduces its window (None for convolutions).
enum class PoolKind : uint8_t { None, Max, Average };
/// A window op's kind and number of spatial dims, an op's trait.
struct WindowSpec {
  WindowOp op;
  int rank;
  PoolKind pool = PoolKind::None;
};

class OpDef {
public:
  explicit OpDef(std::string name) : name_(std::move(name)) {}

  // Builder interface used by registrations.
  OpDef &describe(std::string text);
  OpDef &alias(std::string name);
  OpDef &input(std::string name);
  OpDef &weight(std::string name, bool optional = false);
  OpDef &attr(std::string name, AttrValue dflt, bool required = false);
  OpDef &outputs(int n);
  OpDef &flags(OpFlags f);
  OpDef &typeRule(TypeRule rule);
  OpDef &typeRule(ModuleTypeRule rule);
  /// Number of operands of an expression op (`add`: 2); -1 for "1 or more".
  OpDef &arity(int n);
  OpDef &activation(ActivationKind k);
  /// The dim of the op's output that holds one channel per row of its
  /// `weight` (plus `bias`): a per-channel scale and shift after the op
  /// folds into them. Convolutions: 1; linear layers: -1 (the last).
  OpDef &channelAxis(int axis);
  /// The op slides a window over its last `rank` dims.
  OpDef &window(WindowOp op, int rank, PoolKind pool = PoolKind::None);

  const std::string &name() const { return name_; }
  llvm::ArrayRef<std::string> aliases() const { return aliases_; }
  const std::string &summary() const { return summary_; }
  llvm::ArrayRef<std::string> inputs() const { return inputs_; }
  llvm::ArrayRef<std::pair<std::string, bool>> weights() const { return weights_; }
  llvm::ArrayRef<AttrSpec> attrSpecs() const { return attrs_; }
  const AttrSpec *findAttr(llvm::StringRef name) const;
  /// Number of results, or -1 when it depends on the call (split, unbind).
  int numOutputs() const { return numOutputs_; }
  int arity() const { return arity_; }
  OpFlags getFlags() const { return flags_; }
  bool is(OpFlags f) const { return any(flags_, f); }
  bool isOpaque() const { return is(OpFlags::Opaque); }
  /// Which fusable activation the op computes (None for other ops).
  ActivationKind activation() const { return activation_; }
  /// The channel axis (see channelAxis(int)), or 0 when it has none.
  int channelAxis() const { return channelAxis_; }
  /// The window the op slides, if it is a convolution or pool.
  const std::optional<WindowSpec> &window() const { return window_; }
  TypeRule getTypeRule() const { return typeRule_; }
  ModuleTypeRule getModuleTypeRule() const { return moduleTypeRule_; }

  /// The shared Op node referring to this definition.
  const Op &node() const;

private:
  std::string name_;
  std::string summary_;
  std::vector<std::string> aliases_;
  std::vector<std::string> inputs_;
  std::vector<std::pair<std::string, bool>> weights_;
  std::vector<AttrSpec> attrs_;
  int numOutputs_ = 1;
  int arity_ = -1;
  OpFlags flags_ = OpFlags::None;
  ActivationKind activation_ = ActivationKind::None;
  int channelAxis_ = 0;
  std::optional<WindowSpec> window_;
  TypeRule typeRule_ = nullptr;
  ModuleTypeRule moduleTypeRule_ = nullptr;
  mutable Op node_;
};

class OpRegistry {
public:
  static OpRegistry &global();

  /// Registers a new op; registering a name twice is a programming error.
  OpDef &add(llvm::StringRef name);
  /// Looks up a name or alias; null when unknown.
  const OpDef *lookup(llvm::StringRef name) const;
  /// The registered op, or a (cached) opaque definition for an unknown name.
  const OpDef *getOrOpaque(llvm::StringRef name);
  /// Every non-opaque op, sorted by name.
  std::vector<const OpDef *> all() const;

private:
  friend class OpDef;
  void addAlias(llvm::StringRef name, OpDef *def);
  std::vector<std::unique_ptr<OpDef>> defs_;
  llvm::StringMap<OpDef *> byName_;
};

/// Registers an op at static-initialization time from the op's own file:
///   KC_REGISTER_OP(relu, "nn.ReLU").alias("F.relu").input("input")...;
#define KC_REGISTER_OP(ID, NAME)                                                                   \
  static ::kc::OpDef &kcOpRegistration_##ID [[maybe_unused]] = ::kc::OpRegistry::global().add(NAME)

/// The op called by `c`, or null if `c` is not a call of a registered op.
const OpDef *calleeOp(const ExprNode *e);
/// True if `e` is a call of the op named `name` (or one of its aliases).
bool isCallTo(const ExprNode *e, llvm::StringRef name);

} // namespace kc
