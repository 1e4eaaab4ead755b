//===- Operands.h - Checks of a call's operands at kernel build -*- C++ -*-===//
#pragma once

#include "CallInfo.h"

namespace kc::rt {

/// The element type of data argument `i`, or Unknown.
inline DType operandDType(const CallNode &c, size_t i) {
  auto args = c.dataArgs();
  auto *tt =
      i < args.size() ? llvm::dyn_cast_or_null<TensorTypeNode>(args[i]->type().get()) : nullptr;
  return tt ? tt->dtype() : DType::Unknown;
}

/// Data arguments `indices` must be f32: for a kernel registered for
/// several element types (KC_REGISTER_KERNEL_DTYPES) that reads these
/// operands as floats. Another type is refused naming the op, never
/// reinterpreted. (KC_REGISTER_KERNEL's kernels need no such check: the
/// registry lets only f32 tensors reach them.)
inline llvm::Error requireF32(const CallNode &c, std::initializer_list<size_t> indices = {0}) {
  for (size_t i : indices) {
    DType t = operandDType(c, i);
    if (t != DType::F32)
      return kernelError(c,
                         "operand " + llvm::Twine(i) + " must be f32, got " + dtypeName(t).str());
  }
  return llvm::Error::success();
}

/// Refuses a call whose attribute `key` is present with a value other than
/// `dflt` (None counts as absent): a mode the kernel does not implement is
/// never run as the default one. `what` says what that mode would do.
inline llvm::Error refuseAttr(const CallNode &c, llvm::StringRef key, const AttrValue &dflt,
                              llvm::StringRef what) {
  const AttrValue *v = c.attrs().find(key);
  if (!v || v->isNone() || *v == dflt)
    return llvm::Error::success();
  std::string shown = v->isBool() ? (v->getBool() ? "True" : "False") : attrToString(*v);
  return kernelError(c, key + "=" + shown + " is not supported (" + what + ")");
}

/// The position among the data arguments (the kernel's inputs) of the one
/// keyed `$name`, or -1.
inline int namedOperand(const CallNode &c, llvm::StringRef name) {
  int data = 0;
  for (size_t i = 0; i < c.numArgs(); ++i) {
    if (c.keys()[i].role == ArgRole::Weight)
      continue;
    if (c.keys()[i].role == ArgRole::Named && c.keys()[i].name == name)
      return data;
    ++data;
  }
  return -1;
}

/// A tensor viewed as (outer, len, inner) around one of its dims.
struct AxisLine {
  int64_t outer = 1, len = 1, inner = 1;
};

/// The (outer, len, inner) view of `shape` around `dim` (negative counts
/// from the end); a scalar is one line of one element.
inline llvm::Expected<AxisLine> axisLine(const CallNode &c, llvm::ArrayRef<int64_t> shape,
                                         int64_t dim) {
  if (shape.empty())
    return AxisLine{};
  int a = normAxis(dim, shape.size());
  if (a < 0 || a >= int(shape.size()))
    return kernelError(c, "dim " + llvm::Twine(dim) + " out of range for " + shapeToString(shape));
  AxisLine l;
  for (int i = 0; i < a; ++i)
    l.outer *= shape[i];
  l.len = shape[a];
  for (size_t i = a + 1; i < shape.size(); ++i)
    l.inner *= shape[i];
  return l;
}

} // namespace kc::rt
