//===- kc/IR/Expr.h - Expression nodes --------------------------*- C++ -*-===//
///
/// \file
/// The expression nodes of kc's IR, in the style of TVM Relay. One set of
/// nodes describes both the model graph and the ASTs of `pnnx.Expression`:
///
///  - Var:          a function parameter (model input, or `@N` of an expression)
///  - Constant:     a weight, a `pnnx.Attribute`, or a scalar literal
///  - Call:         an Op or a GlobalVar applied to arguments, with attributes
///  - Function:     parameters and a body; `main` and each primitive expression
///  - Tuple, TupleGetItem: several results
///  - Op:           a registered operator, the callee of a Call
///  - GlobalVar:    a function of the module by name, the callee of a Call
///
/// Nodes are immutable; rewrites build new nodes and share unchanged ones, so
/// a graph is a DAG. The only mutable field is the checked type, which type
/// inference fills in (a function of the node, as in TVM).
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Attr.h"
#include "kc/IR/TensorData.h"
#include "kc/IR/Type.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace kc {

class OpDef;

/// Where a node came from in its source file (1-based line; 0 = unknown).
struct SourceLoc {
  uint32_t line = 0;
  uint32_t col = 0;
  bool valid() const { return line != 0; }
};

class ExprNode : public Node {
public:
  static bool classof(const Node *n) {
    return n->kind() >= kFirstExprKind && n->kind() <= kLastExprKind;
  }

  /// The inferred (or declared) type; null until known.
  const Type &type() const { return type_; }
  /// Type inference records its result here. Types are a function of the
  /// node, so setting them on a shared node is safe.
  void setType(Type t) const { type_ = std::move(t); }

  SourceLoc loc() const { return loc_; }
  void setLoc(SourceLoc l) const { loc_ = l; }

protected:
  using Node::Node;

private:
  mutable Type type_;
  mutable SourceLoc loc_;
};

using Expr = Ref<const ExprNode>;

//===----------------------------------------------------------------------===//

class VarNode final : public ExprNode {
public:
  VarNode(std::string name, Type t) : ExprNode(NodeKind::Var), name_(std::move(name)) {
    setType(std::move(t));
  }
  /// The parameter's name (a PNNX operand name such as `0`, or `a`).
  const std::string &name() const { return name_; }
  static bool classof(const Node *n) { return n->kind() == NodeKind::Var; }

private:
  std::string name_;
};
using Var = Ref<const VarNode>;

//===----------------------------------------------------------------------===//

/// A compile-time value. Either a tensor (a weight or folded tensor, named,
/// with lazily loaded bytes) or a scalar literal (an AttrValue with a rank-0
/// type, e.g. the `2.5` in `mul(@0,2.5)`).
class ConstantNode final : public ExprNode {
public:
  /// A named tensor constant; `data` may be null when the weights are absent.
  ConstantNode(std::string name, Type t, TensorDataPtr data)
      : ExprNode(NodeKind::Constant), name_(std::move(name)), data_(std::move(data)) {
    setType(std::move(t));
  }
  /// A scalar literal.
  ConstantNode(AttrValue scalar, Type t)
      : ExprNode(NodeKind::Constant), scalar_(std::move(scalar)) {
    setType(std::move(t));
  }

  bool isScalar() const { return scalar_.has_value(); }
  const AttrValue &scalar() const { return *scalar_; }
  /// The tensor's name: the PNNX archive entry (`conv1.weight`); empty for literals.
  const std::string &name() const { return name_; }
  /// The tensor's bytes; null for literals and for weights whose archive is absent.
  const TensorDataPtr &data() const { return data_; }
  bool hasData() const { return data_ != nullptr; }

  static bool classof(const Node *n) { return n->kind() == NodeKind::Constant; }

private:
  std::string name_;
  std::optional<AttrValue> scalar_;
  TensorDataPtr data_;
};
using Constant = Ref<const ConstantNode>;

//===----------------------------------------------------------------------===//

/// How an argument of a Call was written in PNNX: positional, a `$name`-named
/// input, or an `@name` weight attribute stored in the archive.
enum class ArgRole : uint8_t { Positional, Named, Weight };

struct ArgKey {
  ArgRole role = ArgRole::Positional;
  std::string name; ///< empty for Positional
  friend bool operator==(const ArgKey &a, const ArgKey &b) {
    return a.role == b.role && a.name == b.name;
  }
};

class CallNode final : public ExprNode {
public:
  CallNode(Expr callee, llvm::ArrayRef<Expr> args, llvm::ArrayRef<ArgKey> keys, Attrs attrs,
           std::string name)
      : ExprNode(NodeKind::Call), callee_(std::move(callee)), args_(args.begin(), args.end()),
        keys_(keys.begin(), keys.end()), attrs_(std::move(attrs)), name_(std::move(name)) {
    keys_.resize(args_.size());
  }

  /// An OpNode or a GlobalVarNode.
  const Expr &callee() const { return callee_; }
  llvm::ArrayRef<Expr> args() const { return args_; }
  const Expr &arg(size_t i) const { return args_[i]; }
  size_t numArgs() const { return args_.size(); }
  llvm::ArrayRef<ArgKey> keys() const { return keys_; }
  const Attrs &attrs() const { return attrs_; }
  /// The PNNX operator name (`conv1`, `pnnx_expr_3`); may be empty.
  const std::string &name() const { return name_; }

  /// The registered op if the callee is an Op, else null.
  const OpDef *opDef() const;
  /// The op name (`nn.Conv2d`) or the callee function's name.
  llvm::StringRef calleeName() const;
  /// The callee if it is a function of the module (Module::callee finds it).
  const GlobalVarNode *global() const;
  /// The argument bound to `key` (`$key` or `@key`), or null.
  const ExprNode *argByName(llvm::StringRef key) const;
  /// The weight (`@key`) constant, or null.
  const ConstantNode *weight(llvm::StringRef key) const;
  /// Data argument `i`, counting every argument but the weights, or null.
  const ExprNode *dataArg(size_t i) const;
  /// The position among args() of data argument `i`, or numArgs().
  size_t dataArgIndex(size_t i) const;
  size_t numDataArgs() const;
  /// All data arguments in order (one walk, where dataArg(i) for every i
  /// would be quadratic in a 100,000-input concatenation).
  std::vector<const ExprNode *> dataArgs() const;

  static bool classof(const Node *n) { return n->kind() == NodeKind::Call; }

private:
  Expr callee_;
  llvm::SmallVector<Expr, 4> args_;
  llvm::SmallVector<ArgKey, 4> keys_;
  Attrs attrs_;
  std::string name_;
};
using Call = Ref<const CallNode>;

//===----------------------------------------------------------------------===//

/// What a function is. The kinds differ in how the interpreter runs a call
/// of one and in how the text form marks it (`primitive`, `fused`).
enum class FunctionKind : uint8_t {
  /// A graph of calls, like `main`.
  Graph,
  /// One elementwise computation over scalars and tensors (the AST of a
  /// `pnnx.Expression`): the interpreter runs it as one kernel.
  Expression,
  /// A group of calls the fuse-ops pass found to run as one step (a
  /// convolution and the activation after it): the interpreter binds the
  /// calls' kernels and joins them.
  Fused,
};

class FunctionNode final : public ExprNode {
public:
  FunctionNode(std::string name, llvm::ArrayRef<Var> params, Expr body, Type retType,
               FunctionKind kind, Attrs attrs = {})
      : ExprNode(NodeKind::Function), name_(std::move(name)), params_(params.begin(), params.end()),
        body_(std::move(body)), retType_(std::move(retType)), kind_(kind),
        attrs_(std::move(attrs)) {}
  /// `primitive`: an Expression function, otherwise a Graph.
  FunctionNode(std::string name, llvm::ArrayRef<Var> params, Expr body, Type retType,
               bool primitive, Attrs attrs = {})
      : FunctionNode(std::move(name), params, std::move(body), std::move(retType),
                     primitive ? FunctionKind::Expression : FunctionKind::Graph, std::move(attrs)) {
  }

  /// The global symbol (`main`, `pnnx_expr_3`).
  const std::string &name() const { return name_; }
  llvm::ArrayRef<Var> params() const { return params_; }
  const Expr &body() const { return body_; }
  /// Declared result type (may be null until inferred).
  const Type &retType() const { return retType_; }
  /// Type inference makes the declared result type as precise as the body's
  /// (derived data, like every node's type).
  void setRetType(Type t) const { retType_ = std::move(t); }
  FunctionKind functionKind() const { return kind_; }
  /// A primitive function is one fused elementwise/scalar computation (a
  /// `pnnx.Expression`): the interpreter runs it as one kernel.
  bool isPrimitive() const { return kind_ == FunctionKind::Expression; }
  /// A fused group of op calls (see FunctionKind::Fused).
  bool isFused() const { return kind_ == FunctionKind::Fused; }
  const Attrs &attrs() const { return attrs_; }

  static bool classof(const Node *n) { return n->kind() == NodeKind::Function; }

private:
  std::string name_;
  llvm::SmallVector<Var, 4> params_;
  Expr body_;
  mutable Type retType_;
  FunctionKind kind_;
  Attrs attrs_;
};
using Function = Ref<const FunctionNode>;

//===----------------------------------------------------------------------===//

class TupleNode final : public ExprNode {
public:
  explicit TupleNode(llvm::ArrayRef<Expr> fields)
      : ExprNode(NodeKind::Tuple), fields_(fields.begin(), fields.end()) {}
  llvm::ArrayRef<Expr> fields() const { return fields_; }
  static bool classof(const Node *n) { return n->kind() == NodeKind::Tuple; }

private:
  llvm::SmallVector<Expr, 4> fields_;
};
using Tuple = Ref<const TupleNode>;

class TupleGetItemNode final : public ExprNode {
public:
  TupleGetItemNode(Expr tuple, unsigned index)
      : ExprNode(NodeKind::TupleGetItem), tuple_(std::move(tuple)), index_(index) {}
  const Expr &tuple() const { return tuple_; }
  unsigned index() const { return index_; }
  static bool classof(const Node *n) { return n->kind() == NodeKind::TupleGetItem; }

private:
  Expr tuple_;
  unsigned index_;
};
using TupleGetItem = Ref<const TupleGetItemNode>;

//===----------------------------------------------------------------------===//

/// A reference to a registered operator; one node per OpDef, shared.
class OpNode final : public ExprNode {
public:
  explicit OpNode(const OpDef *def) : ExprNode(NodeKind::Op), def_(def) {}
  const OpDef &def() const { return *def_; }
  llvm::StringRef name() const;
  static bool classof(const Node *n) { return n->kind() == NodeKind::Op; }

private:
  const OpDef *def_;
};
using Op = Ref<const OpNode>;

/// A function of the module named by a call, as TVM's GlobalVar: a call
/// holds the name, the module holds the function, so replacing a function
/// is one Module::add and every call of it sees the new one.
class GlobalVarNode final : public ExprNode {
public:
  explicit GlobalVarNode(std::string name)
      : ExprNode(NodeKind::GlobalVar), name_(std::move(name)) {}
  const std::string &name() const { return name_; }
  static bool classof(const Node *n) { return n->kind() == NodeKind::GlobalVar; }

private:
  std::string name_;
};
using GlobalVar = Ref<const GlobalVarNode>;

//===----------------------------------------------------------------------===//
// Construction helpers.

Var var(std::string name, Type t = nullptr);
Constant scalarConstant(AttrValue v, Type t);
Constant floatConstant(double v, DType dt = DType::F32);
Constant intConstant(int64_t v, DType dt = DType::I64);
Constant tensorConstant(std::string name, Type t, TensorDataPtr data);
/// A call of the registered op `opName` (unknown names become opaque ops).
Call call(llvm::StringRef opName, llvm::ArrayRef<Expr> args, Attrs attrs = {},
          llvm::ArrayRef<ArgKey> keys = {}, std::string name = {});
Call call(Expr callee, llvm::ArrayRef<Expr> args, Attrs attrs = {},
          llvm::ArrayRef<ArgKey> keys = {}, std::string name = {});
Tuple tuple(llvm::ArrayRef<Expr> fields);
GlobalVar globalVar(std::string name);
/// A call of the module's function `f` (through a GlobalVar of its name).
Call call(const Function &f, llvm::ArrayRef<Expr> args, Attrs attrs = {},
          llvm::ArrayRef<ArgKey> keys = {}, std::string name = {});
TupleGetItem tupleGetItem(Expr t, unsigned index);

/// Copy-on-write rebuilders: return `c` itself when nothing changed (pointer
/// equality of every field), else a new node with the same name and location
/// and no type yet (types are re-inferred after a rewrite).
Call withArgs(const Call &c, llvm::ArrayRef<Expr> args);
Tuple withFields(const Tuple &t, llvm::ArrayRef<Expr> fields);
TupleGetItem withTuple(const TupleGetItem &g, Expr tuple);
Function withBody(const Function &f, llvm::ArrayRef<Var> params, Expr body);

} // namespace kc
