//===- CallInfo.h - What kernel factories read from a call ------*- C++ -*-===//
//
// A call's data operands, static shapes, weights and attributes, for the
// factories that bind kernels to calls.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Runtime/OpKernel.h"

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace kc::rt {

/// The static shape of data argument `i`.
inline llvm::Expected<std::vector<int64_t>> inputShape(const CallNode &c, size_t i) {
  auto args = c.dataArgs();
  if (i >= args.size())
    return kernelError(c, "expects at least " + llvm::Twine(i + 1) + " input(s), got " +
                              llvm::Twine(args.size()));
  return staticShape(c, args[i]->type());
}

/// The static shapes of all data arguments, of which there must be at
/// least `atLeast`.
llvm::Expected<std::vector<std::vector<int64_t>>> inputShapes(const CallNode &c, size_t atLeast);

/// The static shape of result `i` (the call's type, or field i of a tuple).
inline llvm::Expected<std::vector<int64_t>> outputShape(const CallNode &c, size_t i = 0) {
  if (auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(c.type().get())) {
    if (i >= tt->size())
      return kernelError(c, "has no result " + llvm::Twine(i));
    return staticShape(c, tt->fields()[i]);
  }
  return staticShape(c, c.type());
}

/// The element type of result `i` (the call's type, or field i of a tuple).
inline DType outputDType(const CallNode &c, size_t i = 0) {
  const Type *t = &c.type();
  if (auto *tu = llvm::dyn_cast_or_null<TupleTypeNode>(t->get()))
    t = i < tu->size() ? &tu->fields()[i] : nullptr;
  if (auto *tt = t ? llvm::dyn_cast_or_null<TensorTypeNode>(t->get()) : nullptr)
    return tt->dtype();
  return DType::F32;
}

/// How a kernel uses a weight: Copy gives it its own writable tensor;
/// ReadOnly may give a view of the mapped .bin (see viewConstant).
enum class WeightUse { Copy, ReadOnly };

/// Weight `key` as an f32 tensor; an error if it is required and absent.
inline llvm::Expected<Tensor> weightTensor(const CallNode &c, llvm::StringRef key, bool required,
                                           WeightUse use = WeightUse::Copy) {
  const ConstantNode *w = c.weight(key);
  if (!w) {
    if (required)
      return kernelError(c, "missing weight @" + key);
    return Tensor();
  }
  if (isHalfWeight(*w) && w->hasData()) // computed in f32: widened once, here
    return copyConstantBytes(*w->data(), DType::F16,
                             llvm::cast<TensorTypeNode>(w->type().get())->dims());
  auto t = use == WeightUse::ReadOnly ? viewConstant(*w) : materializeConstant(*w);
  if (!t)
    return kernelError(c, llvm::toString(t.takeError()));
  if (t->dtype() != DType::F32)
    return kernelError(c, "weight @" + key + " must be f32, got " + dtypeName(t->dtype()).str());
  return t;
}

/// Normalizes a possibly negative axis.
inline int normAxis(int64_t axis, size_t rank) {
  return int(axis < 0 ? axis + int64_t(rank) : axis);
}

/// An int or an int list attribute widened to `n` values.
inline std::vector<int64_t> intsN(const CallNode &c, llvm::StringRef key, size_t n,
                                  std::vector<int64_t> dflt) {
  const AttrValue *v = c.attrs().find(key);
  if (!v || v->isNone())
    return dflt;
  std::vector<int64_t> r = v->asIntVector();
  if (r.size() == 1 && n > 1)
    r.assign(n, r[0]);
  return r;
}

/// The static shapes of a call's data argument 0 and of its result.
struct CallShapes {
  std::vector<int64_t> in, out;
};
llvm::Expected<CallShapes> callShapes(const CallNode &c);

/// A factory that reads the call's input and output shapes.
using ShapedFactory = llvm::Expected<std::unique_ptr<OpKernel>> (*)(const CallNode &,
                                                                    const CallShapes &);

/// The KernelFactory of a ShapedFactory: the shapes read first.
template <ShapedFactory F>
llvm::Expected<std::unique_ptr<OpKernel>> withShapes(const CallNode &c,
                                                     const KernelBuildContext &) {
  auto io = callShapes(c);
  if (!io)
    return io.takeError();
  return F(c, *io);
}

/// Attribute `dim` of call c as an axis of `shape`, and the product of the
/// dims before it; an error naming c when it is out of range.
llvm::Expected<std::pair<int, int64_t>> axisAndOuter(const CallNode &c,
                                                     llvm::ArrayRef<int64_t> shape);

/// A weight a factory takes: key, where it goes, whether it must be there.
struct WeightSlot {
  llvm::StringRef key;
  Tensor *to;
  bool required = false;
  WeightUse use = WeightUse::Copy;
};

/// Takes each weight of `slots` (weightTensor); the first error, if any.
llvm::Error takeWeights(const CallNode &c, std::initializer_list<WeightSlot> slots);

} // namespace kc::rt
