//===- KernelUtils.h - Shared helpers of the kernel files -------*- C++ -*-===//
#pragma once

#include "Parallel.h"
#include "kc/Runtime/OpKernel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

namespace kc::rt {

/// Makes `planes` hold one zero-filled scratch plane of `floats` floats
/// per thread (allocated and zeroed on the first run only) and returns the
/// distance between planes: whole cache lines plus a gap of 16 floats, so
/// that two threads never write one line (a 9x9 plane is shorter than one)
/// and vector reads a little past a plane's end stay inside its region.
inline int64_t threadPlanes(std::vector<float> &planes, int64_t floats) {
  int64_t region = (floats + 15) / 16 * 16 + 16;
  size_t need = size_t(omp_get_max_threads()) * size_t(region);
  if (planes.size() < need)
    planes.assign(need, 0.f);
  return region;
}

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

/// exp(x) in float without a library call, so loops over it vectorize:
/// Cody-Waite reduction x = k·ln2 + r and Cephes' degree-6 polynomial for
/// e^r (within 2 ulp of std::exp; kernel tests pin the bound). Inputs are
/// clamped to [-87.3, 88.3], where the result stays a normal float.
inline float expApprox(float x) {
  x = std::min(std::max(x, -87.33654f), 88.37626f);
  // Round x·log2(e) to an integer by the 1.5·2^23 trick (no rint call).
  float k = (x * 1.44269504088896341f + 12582912.f) - 12582912.f;
  float r = x - k * 0.693359375f + k * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  int32_t bits = (int32_t(k) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

/// Activations a producer kernel can apply in its epilogue.
enum class Act : uint8_t { None, Relu, Relu6, Silu, Sigmoid, Hardswish, LeakyRelu };

inline float applyAct(Act a, float x, float slope) {
  switch (a) {
  case Act::None: return x;
  case Act::Relu: return x > 0 ? x : 0;
  case Act::Relu6: return std::min(std::max(x, 0.f), 6.f);
  case Act::Silu: return x / (1.f + expApprox(-x));
  case Act::Sigmoid: return 1.f / (1.f + expApprox(-x));
  case Act::Hardswish: return x * std::min(std::max(x + 3.f, 0.f), 6.f) / 6.f;
  case Act::LeakyRelu: return x > 0 ? x : x * slope;
  }
  return x;
}

/// Adds `bias` to `n` values and applies `act`, in place (8 at a time with
/// AVX2, see VecMath.h).
void biasActivationRow(float *p, int64_t n, float bias, Act act, float slope);

/// p[j] = act(p[j] + bias[j]) for j < n (bias may be null): a linear
/// layer's epilogue, one bias per output feature.
void rowBiasActivation(float *p, int64_t n, const float *bias, Act act, float slope);

/// Applies `act` (and a per-row bias) to `rows` × `cols` values in place.
void biasActivation(float *data, int64_t rows, int64_t cols, const float *bias, Act act,
                    float slope);

/// Kernels that can take a following activation into their epilogue, or
/// the whole of the op after them.
class FusableKernel : public OpKernel {
public:
  /// Applies `a` to the output (of the last kernel absorbed, if any).
  virtual void fuseActivation(Act a, float slope) {
    act_ = a;
    slope_ = slope;
  }
  /// Takes over `next`, the kernel of this one's only reader, where the two
  /// run better as one; then `next` is emptied, and this kernel reads its
  /// own inputs and writes what `next` would have.
  virtual bool absorb(std::unique_ptr<OpKernel> &next) { return false; }

protected:
  Act act_ = Act::None;
  float slope_ = 0.f;
};

/// The activation an op applies, if it is one a producer can fuse.
Act activationOf(const CallNode &c, float *slope);

} // namespace kc::rt
