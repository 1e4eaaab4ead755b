//===- kc/Runtime/OpKernel.h - Kernels bound to IR calls --------*- C++ -*-===//
///
/// \file
/// The interpreter's dispatch table from operators to kernels. Each kernel
/// file registers a factory for the ops it implements; at load time the
/// interpreter asks the factory for a kernel instance bound to one Call (the
/// place to validate attributes and pre-pack weights, once). At run time the
/// instance maps input tensors to preallocated output tensors.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Expr.h"
#include "kc/IR/Op.h"
#include "kc/Runtime/Activation.h"
#include "kc/Runtime/Tensor.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace kc::rt {

class OutputExpression;

/// What a kernel may use while running: a scratch buffer sized by
/// `workspaceBytes()`, reused across kernels (never allocated per run).
struct ExecContext {
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  /// Set by a kernel whose inputs it cannot compute on (an index out of
  /// range): the run stops with this message, naming the op.
  std::string error;
};

/// A kernel's data operands and its preallocated results.
using KernelInputs = llvm::ArrayRef<const Tensor *>;
using KernelOutputs = llvm::ArrayRef<Tensor *>;

class OpKernel {
public:
  virtual ~OpKernel() = default;
  /// `inputs` are the call's data arguments (weights are bound at creation),
  /// `outputs` the preallocated results, shaped by the call's type.
  virtual void run(KernelInputs inputs, KernelOutputs outputs, ExecContext &ctx) const = 0;
  /// Scratch bytes `run` needs (e.g. an im2col buffer).
  virtual size_t workspaceBytes() const { return 0; }
  /// If output 0 is only a re-shaped view of input `i`'s bytes (reshape,
  /// flatten, squeeze), returns i: the planner then aliases instead of
  /// copying. -1 otherwise.
  virtual int viewOfInput() const { return -1; }
  /// Whether output 0 is the inputs' bytes laid end to end, in order (a
  /// concatenation whose extent before the axis is 1): the schedule may
  /// then have each input written in its place instead.
  virtual bool joinsInputsEndToEnd() const { return false; }

  // Fusion hooks, offered by the schedule (kc/Runtime/Schedule.h).

  /// Takes `a` into this kernel's epilogue, applied to its only output;
  /// false if it cannot, and the activation then runs as its own step.
  virtual bool fuseActivation(const Activation &a) { return false; }
  /// Takes `e`, an elementwise expression of this kernel's only output,
  /// into its epilogue (applied before the activation, which it may take
  /// after): its other operands come to run() as inputs from
  /// `firstOperand` on. Moves `e` and returns true if it can; else the
  /// expression runs as its own step.
  virtual bool fuseExpression(std::unique_ptr<OutputExpression> &e, unsigned firstOperand) {
    return false;
  }
  /// Takes a per-channel scale of its only data input into its reads of
  /// that input (x * s, s one value per channel, per image if `perImage`):
  /// run() then gets x and, as input 1, s. False if it cannot.
  virtual bool fuseInputScale(bool perImage) { return false; }
  /// Offered `next`, the kernel of this kernel's only reader: a kernel
  /// doing the work of both (reading this one's inputs, writing what
  /// `next` would have) where the two run better as one, else null.
  virtual std::unique_ptr<OpKernel> absorb(OpKernel &next) { return nullptr; }
};

/// Information a factory gets besides the call.
struct KernelBuildContext {
  int numThreads = 1;
  /// The module whose functions calls name (Tensor.index reads its list of
  /// index tensors from one).
  const Module *module = nullptr;
};

/// Builds a kernel for `call`, or explains why it cannot (unsupported
/// attribute, missing weight data, dynamic shape).
using KernelFactory = llvm::Expected<std::unique_ptr<OpKernel>> (*)(const CallNode &call,
                                                                    const KernelBuildContext &ctx);

/// A set of element types.
class DTypeSet {
public:
  constexpr DTypeSet(std::initializer_list<DType> types) {
    for (DType t : types)
      bits_ |= 1u << unsigned(t);
  }
  bool contains(DType t) const { return bits_ >> unsigned(t) & 1u; }
  /// "f32, i64 and bool".
  std::string str() const;

private:
  uint32_t bits_ = 0;
};

/// Every element type a tensor of a model can have but the complex ones,
/// which kc does not compute on.
inline constexpr DTypeSet kRealDTypes{DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,
                                      DType::U8,  DType::I16, DType::I32, DType::I64,  DType::Bool};

/// A kernel factory and the element types its kernels are written for:
/// every tensor a call reads (weights included) has one of `inputs`, every
/// result one of `results`, and with `sameDType` all of them the one type
/// (kernels that only move bytes); else the call is refused when the model
/// is compiled, naming the op and the type. A kernel never reads the bytes
/// of a type it was not written for; one that takes several types checks
/// their combination itself.
struct KernelEntry {
  KernelFactory factory = nullptr;
  DTypeSet inputs{DType::F32}, results{DType::F32};
  bool sameDType = false;
};

class KernelRegistry {
public:
  static KernelRegistry &global();
  /// Registers `factory` for the op named `opName` (resolved through the op
  /// registry, so aliases share the kernel), for tensors of `dtypes`.
  void add(llvm::StringRef opName, KernelEntry entry);
  /// The entry of `op` (or of an alias of it), or null.
  const KernelEntry *lookup(const OpDef *op) const;
  /// Op names with a kernel, sorted.
  std::vector<std::string> opNames() const;

private:
  llvm::StringMap<KernelEntry> byName_;
};

namespace detail {
struct KernelRegistrar {
  KernelRegistrar(llvm::StringRef opName, KernelEntry entry) {
    KernelRegistry::global().add(opName, entry);
  }
};
} // namespace detail

/// Registers a kernel factory from the kernel's own file, its kernels
/// written for f32 tensors only.
#define KC_REGISTER_KERNEL(ID, OPNAME, FACTORY)                                                    \
  static ::kc::rt::detail::KernelRegistrar kcKernelRegistrar_##ID [[maybe_unused]] {               \
    OPNAME, ::kc::rt::KernelEntry { FACTORY }                                                      \
  }

/// Registers a kernel factory whose kernels read tensors of the element
/// types INPUTS and write tensors of RESULTS (DTypeSets).
#define KC_REGISTER_KERNEL_DTYPES(ID, OPNAME, FACTORY, INPUTS, RESULTS)                            \
  static ::kc::rt::detail::KernelRegistrar kcKernelRegistrar_##ID [[maybe_unused]] {               \
    OPNAME, ::kc::rt::KernelEntry { FACTORY, INPUTS, RESULTS }                                     \
  }

/// Registers a kernel factory whose kernels move elements without reading
/// them as numbers: any element type, the operands' and results' one.
#define KC_REGISTER_MOVE_KERNEL(ID, OPNAME, FACTORY)                                               \
  static ::kc::rt::detail::KernelRegistrar kcKernelRegistrar_##ID [[maybe_unused]] {               \
    OPNAME, ::kc::rt::KernelEntry { FACTORY, ::kc::rt::kRealDTypes, ::kc::rt::kRealDTypes, true }  \
  }

/// The first tensor of `call` (an operand, a weight or a result) whose
/// element type `kernel` does not take, as an error naming the op, the
/// tensor and the types the kernel takes; success when there is none.
llvm::Error checkDTypes(const CallNode &call, const KernelEntry &kernel);

/// Shorthand for a kernel factory's error.
llvm::Error kernelError(const CallNode &call, const llvm::Twine &msg);

/// The static shape of an IR value (all dims known), or an error naming `call`.
llvm::Expected<std::vector<int64_t>> staticShape(const CallNode &call, const Type &t);

/// Copies a tensor constant's bytes (unaligned, possibly mapped) into an
/// aligned tensor of its type; errors if the data is absent.
llvm::Expected<Tensor> materializeConstant(const ConstantNode &c);

/// A read-only view of a tensor constant's bytes where they lie (in the
/// mapped .bin, or in the constant itself: a folded one) when they are
/// present, of the right size and aligned for the dtype; otherwise a copy
/// as materializeConstant makes. The view keeps the bytes alive. For
/// kernels that only ever read their weights: it saves the copy at load and
/// at every plan, and counts the bytes in memory once.
llvm::Expected<Tensor> viewConstant(const ConstantNode &c);

/// True when viewConstant would copy `c` only because its bytes (present,
/// of the right size) are not aligned for its dtype: a kernel that
/// prepares the weight in a layout of its own can copy it later, when it
/// does (copyConstantBytes), or never.
bool needsAlignedCopy(const ConstantNode &c);

/// Copies `bytes`, exactly the size of a `dtype` tensor of `shape`, into
/// such a tensor (aligned), f16 widened to f32; mapped pages are released
/// after the copy.
Tensor copyConstantBytes(const TensorData &bytes, DType dtype, llvm::ArrayRef<int64_t> shape);

/// True for a tensor constant of f16: kc computes f16 models in f32, and
/// kernels read such weights widened, once, when they are built
/// (weightTensor).
bool isHalfWeight(const ExprNode &e);

} // namespace kc::rt
