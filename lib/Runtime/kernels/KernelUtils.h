//===- KernelUtils.h - Shared helpers of the kernel files -------*- C++ -*-===//
#pragma once

#include "Parallel.h"
#include "../ukernels/ScalarMath.h"
#include "kc/Runtime/Activation.h"
#include "kc/Runtime/OpKernel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

namespace kc::rt {

/// The data arguments of a call (weights excluded), in order.
inline std::vector<const ExprNode *> dataArgs(const CallNode &c) {
  std::vector<const ExprNode *> r;
  for (size_t i = 0; i < c.numArgs(); ++i)
    if (c.keys()[i].role != ArgRole::Weight)
      r.push_back(c.arg(i).get());
  return r;
}

/// The static shape of data argument `i`.
inline llvm::Expected<std::vector<int64_t>> inputShape(const CallNode &c, size_t i) {
  auto args = dataArgs(c);
  if (i >= args.size())
    return kernelError(c, "expects at least " + llvm::Twine(i + 1) + " input(s), got " +
                              llvm::Twine(args.size()));
  return staticShape(c, args[i]->type());
}

/// The static shape of result `i` (the call's type, or field i of a tuple).
inline llvm::Expected<std::vector<int64_t>> outputShape(const CallNode &c, size_t i = 0) {
  if (auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(c.type().get())) {
    if (i >= tt->size())
      return kernelError(c, "has no result " + llvm::Twine(i));
    return staticShape(c, tt->fields()[i]);
  }
  return staticShape(c, c.type());
}

inline DType outputDType(const CallNode &c) {
  if (auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(c.type().get()))
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
  auto t = use == WeightUse::ReadOnly ? viewConstant(*w) : materializeConstant(*w);
  if (!t)
    return kernelError(c, llvm::toString(t.takeError()));
  if (t->dtype() != DType::F32)
    return kernelError(c, "weight @" + key + " must be f32, got " +
                              dtypeName(t->dtype()).str());
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

/// Row-major C = alpha * op(A) op(B) + beta * C over OpenBLAS, split
/// across the OpenMP threads by columns (or rows when C is narrow). OpenBLAS
/// itself runs single-threaded: one pool of threads for everything, so BLAS
/// workers never compete with spinning OpenMP workers for the cores.
void sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
           int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

using uk::applyAct;
using uk::expApprox;

/// Adds `bias` to `n` values and applies `act`, in place (f32_bias_act).
void biasActivationRow(float *p, int64_t n, float bias, Act act, float slope);

/// p[j] = act(p[j] + bias[j]) for j < n (bias may be null): a linear
/// layer's epilogue, one bias per output feature.
void rowBiasActivation(float *p, int64_t n, const float *bias, Act act, float slope);

/// Applies `act` (and a per-row bias) to `rows` × `cols` values in place.
void biasActivation(float *data, int64_t rows, int64_t cols, const float *bias, Act act,
                    float slope);

/// Kernels that take a following activation into their epilogue.
class FusableKernel : public OpKernel {
public:
  bool fuseActivation(const Activation &a) override {
    act_ = a.kind;
    slope_ = a.slope;
    return true;
  }

protected:
  Act act_ = Act::None;
  float slope_ = 0.f;
};


} // namespace kc::rt
