//===- OpKernel.cpp - The kernel dispatch table ---------------------------===//
#include "kc/Runtime/OpKernel.h"
#include "kc/IR/Diagnostic.h"
#include "kc/Support/FloatToInt.h"
#include "kc/Support/Half.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <optional>

namespace kc::rt {

KernelRegistry &KernelRegistry::global() {
  static KernelRegistry r;
  return r;
}

void KernelRegistry::add(llvm::StringRef opName, KernelEntry entry) {
  byName_.insert_or_assign(opName, entry);
}

const KernelEntry *KernelRegistry::lookup(const OpDef *op) const {
  if (!op)
    return nullptr;
  auto it = byName_.find(op->name());
  if (it != byName_.end())
    return &it->second;
  for (const std::string &a : op->aliases()) {
    auto al = byName_.find(a);
    if (al != byName_.end())
      return &al->second;
  }
  return nullptr;
}

std::string DTypeSet::str() const {
  std::vector<llvm::StringRef> names;
  for (unsigned t = 1; t < 32; ++t)
    if (contains(DType(t)))
      names.push_back(dtypeName(DType(t)));
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i].str();
  return s;
}

/// The element type of every tensor in t (a tensor or a tuple of them).
static void tensorDTypes(const Type &t, llvm::SmallVectorImpl<DType> &out) {
  if (auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(t.get()))
    out.push_back(tt->dtype());
  else if (auto *tu = llvm::dyn_cast_or_null<TupleTypeNode>(t.get()))
    for (const Type &f : tu->fields())
      tensorDTypes(f, out);
}

llvm::Error checkDTypes(const CallNode &call, const KernelEntry &kernel) {
  std::optional<DType> common;
  auto check = [&](const Type &type, const DTypeSet &allowed,
                   const std::string &what) -> llvm::Error {
    llvm::SmallVector<DType, 4> types;
    tensorDTypes(type, types);
    for (DType t : types) {
      if (t == DType::Unknown)
        continue;
      if (!allowed.contains(t))
        return kernelError(call, "the interpreter runs it on " + allowed.str() + " tensors, not " +
                                     dtypeName(t).str() + " (" + what + ")");
      if (kernel.sameDType && common && *common != t)
        return kernelError(call, "its tensors must have one element type, but " + what + " is " +
                                     dtypeName(t).str() + " and another " +
                                     dtypeName(*common).str());
      common = t;
    }
    return llvm::Error::success();
  };
  for (size_t i = 0; i < call.numArgs(); ++i) {
    // Scalar literals are attributes written as operands.
    if (auto *k = llvm::dyn_cast<ConstantNode>(call.arg(i).get()); k && k->isScalar())
      continue;
    const ArgKey &key = call.keys()[i];
    if (key.role == ArgRole::Weight && isHalfWeight(*call.arg(i)))
      continue; // read as f32 (weightTensor)
    if (auto e = check(call.arg(i)->type(), kernel.inputs,
                       key.role == ArgRole::Weight ? "weight @" + key.name
                                                   : "operand " + std::to_string(i)))
      return e;
  }
  return check(call.type(), kernel.results, "result");
}

llvm::Error kernelError(const CallNode &call, const llvm::Twine &msg) {
  std::string where = describeCall(call);
  if (call.loc().valid())
    where += " (line " + std::to_string(call.loc().line) + ")";
  return llvm::createStringError(llvm::inconvertibleErrorCode(), where + ": " + msg);
}

llvm::Expected<std::vector<int64_t>> staticShape(const CallNode &call, const Type &t) {
  auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(t.get());
  if (!tt)
    return kernelError(call, "needs a tensor type with a known shape, got " + typeToString(t));
  if (!tt->isStatic())
    return kernelError(call, "needs a static shape, got " + typeToString(t));
  return std::vector<int64_t>(tt->dims().begin(), tt->dims().end());
}

llvm::Expected<Tensor> materializeConstant(const ConstantNode &c) {
  auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(c.type().get());
  if (!tt || !tt->isStatic())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "constant '" + c.name() + "' has no static tensor type");
  if (c.isScalar()) {
    Tensor t = Tensor::empty(tt->dtype(), {});
    const AttrValue &v = c.scalar();
    double d = v.isBool() ? double(v.getBool()) : v.isNumber() ? v.getNumber() : 0.0;
    // Integer literals hold their value exactly (the parser refuses others);
    // a value that does not fit is an error, never a conversion.
    int64_t i = 0;
    if (isInteger(tt->dtype()) || tt->dtype() == DType::Bool) {
      if (!literalFits(v, tt->dtype()))
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "literal " + attrToString(v) + " does not fit in " +
                                           typeToString(c.type()));
      i = v.isInt() ? v.getInt() : v.isBool() ? int64_t(v.getBool()) : *exactInt64(d);
    }
    switch (tt->dtype()) {
    case DType::F32:
      *t.data<float>() = float(d);
      break;
    case DType::F64:
      *t.data<double>() = d;
      break;
    case DType::I64:
      *t.data<int64_t>() = i;
      break;
    case DType::I32:
      *t.data<int32_t>() = int32_t(i);
      break;
    case DType::Bool:
      *t.data<uint8_t>() = i != 0;
      break;
    default:
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "literal of type " + typeToString(c.type()) +
                                         " is not supported at run time");
    }
    return t;
  }
  if (!c.hasData())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "weight '" + c.name() +
                                       "' has no data (is the .pnnx.bin beside the .param?)");
  auto bytes = c.data()->bytes();
  size_t need = size_t(numElements(tt->dims())) * dtypeSize(tt->dtype());
  if (bytes.size() == need)
    return copyConstantBytes(*c.data(), tt->dtype(), tt->dims());
  if (tt->rank() == 0 && bytes.empty())
    return Tensor::empty(tt->dtype(), {}); // a folded scalar written without bytes reads as zero
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "weight '" + c.name() + "' holds " + std::to_string(bytes.size()) +
                                     " bytes, but " + typeToString(c.type()) + " needs " +
                                     std::to_string(need));
}

Tensor copyConstantBytes(const TensorData &data, DType dtype, llvm::ArrayRef<int64_t> shape) {
  Tensor t = Tensor::empty(dtype == DType::F16 ? DType::F32 : dtype, shape);
  auto bytes = data.bytes();
  assert(bytes.size() == size_t(t.numel()) * dtypeSize(dtype));
  data.prefault();
  if (dtype == DType::F16)
    halfToFloat(bytes.data(), t.data<float>(), size_t(t.numel()));
  else if (!bytes.empty()) // the bytes of an empty weight may be a null pointer
    std::memcpy(t.raw(), bytes.data(), bytes.size());
  // Kernels keep their own packed copy; the mapped one need not stay
  // resident (it is paged in again if anything reads it later).
  data.releasePages();
  return t;
}

bool isHalfWeight(const ExprNode &e) {
  auto *k = llvm::dyn_cast<ConstantNode>(&e);
  auto *tt = k ? llvm::dyn_cast_or_null<TensorTypeNode>(k->type().get()) : nullptr;
  return tt && !k->isScalar() && tt->dtype() == DType::F16;
}

/// Whether a constant's bytes can be its tensor where they lie: they are
/// not for scalars, absent or mis-sized bytes and types not static, and
/// only once copied when they are not aligned for the dtype.
enum class InPlace { Yes, Misaligned, No };
static InPlace bytesInPlace(const ConstantNode &c) {
  auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(c.type().get());
  if (c.isScalar() || !c.hasData() || !tt || !tt->isStatic())
    return InPlace::No;
  size_t align = dtypeSize(tt->dtype());
  size_t need = size_t(numElements(tt->dims())) * align;
  auto bytes = c.data()->bytes();
  if (bytes.size() != need || need == 0)
    return InPlace::No;
  return reinterpret_cast<uintptr_t>(bytes.data()) % align ? InPlace::Misaligned : InPlace::Yes;
}

bool needsAlignedCopy(const ConstantNode &c) { return bytesInPlace(c) == InPlace::Misaligned; }

llvm::Expected<Tensor> viewConstant(const ConstantNode &c) {
  if (bytesInPlace(c) != InPlace::Yes)
    return materializeConstant(c);
  auto *tt = llvm::cast<TensorTypeNode>(c.type().get());
  auto bytes = c.data()->bytes();
  // Kernels given a view never write through it (a mapping is read-only).
  std::shared_ptr<void> owner(std::const_pointer_cast<TensorData>(c.data()),
                              const_cast<uint8_t *>(bytes.data()));
  return Tensor::view(tt->dtype(), tt->dims(), owner.get(), owner);
}

} // namespace kc::rt
