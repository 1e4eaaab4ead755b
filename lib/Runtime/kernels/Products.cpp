//===- Products.cpp - F.linear, addmm, baddbmm, mv ------------------------===//
//
// Matrix products whose factors are all operands, on the sgemm of
// Blas.h (OpenBLAS, split over kc's threads).
//
//===----------------------------------------------------------------------===//
#include "Blas.h"
#include "Operands.h"
#include "Rebind.h"

namespace kc::rt {
namespace {

/// F.linear: y = x Wᵀ + b over the rows of x.
class LinearKernel final : public OpKernel {
public:
  LinearKernel(int64_t rows, int64_t in, int64_t out, int bias)
      : rows_(rows), in_(in), out_(out), bias_(bias) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *x = in[0]->data<float>(), *w = in[1]->data<float>();
    float *y = out[0]->data<float>();
    sgemm(false, true, rows_, out_, in_, 1.f, x, in_, w, in_, 0.f, y, out_);
    if (bias_ >= 0) {
      const float *b = in[bias_]->data<float>();
      for (int64_t r = 0; r < rows_; ++r)
        for (int64_t j = 0; j < out_; ++j)
          y[r * out_ + j] += b[j];
    }
  }

private:
  int64_t rows_, in_, out_;
  int bias_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeLinear(const CallNode &c,
                                                     const KernelBuildContext &) {
  auto x = inputShape(c, 0);
  if (!x)
    return x.takeError();
  int wi = namedOperand(c, "weight");
  if (wi < 0)
    wi = 1;
  if (wi != 1)
    return kernelError(c, "expects the weight as operand 1");
  auto w = inputShape(c, 1);
  if (!w)
    return w.takeError();
  int bi = namedOperand(c, "bias");
  if (bi < 0 && c.dataArgs().size() > 2)
    bi = 2;
  if (x->empty() || w->size() != 2 || (*w)[1] != x->back())
    return kernelError(c,
                       "weight " + shapeToString(*w) + " does not fit input " + shapeToString(*x));
  if (bi >= 0) {
    auto b = inputShape(c, size_t(bi));
    if (!b)
      return b.takeError();
    if (numElements(*b) != (*w)[0])
      return kernelError(c, "bias " + shapeToString(*b) + " does not have " + llvm::Twine((*w)[0]) +
                                " elements");
  }
  return std::unique_ptr<OpKernel>(
      new LinearKernel(numElements(*x) / x->back(), x->back(), (*w)[0], bi));
}
KC_REGISTER_KERNEL(flinear, "F.linear", makeLinear);

/// torch.addmm / torch.baddbmm: beta * input + alpha * (a @ b), the input
/// broadcast to the product (read through strides, 0 where it is 1).
class AddProductKernel final : public OpKernel {
public:
  AddProductKernel(int64_t batch, int64_t M, int64_t N, int64_t K, float alpha, float beta,
                   std::vector<int64_t> inStrides)
      : batch_(batch), M_(M), N_(N), K_(K), alpha_(alpha), beta_(beta),
        inStrides_(std::move(inStrides)) {}
  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *c = in[0]->data<float>(), *a = in[1]->data<float>(), *b = in[2]->data<float>();
    float *y = out[0]->data<float>();
    const int64_t sb = inStrides_[0], sm = inStrides_[1], sn = inStrides_[2];
    for (int64_t t = 0; t < batch_; ++t) {
      float *yt = y + t * M_ * N_;
      for (int64_t i = 0; i < M_; ++i)
        for (int64_t j = 0; j < N_; ++j)
          yt[i * N_ + j] = beta_ == 0 ? 0.f : beta_ * c[t * sb + i * sm + j * sn];
      sgemm(false, false, M_, N_, K_, alpha_, a + t * M_ * K_, K_, b + t * K_ * N_, N_, 1.f, yt,
            N_);
    }
  }

private:
  int64_t batch_, M_, N_, K_;
  float alpha_, beta_;
  std::vector<int64_t> inStrides_;
};

template <size_t Rank>
llvm::Expected<std::unique_ptr<OpKernel>> makeAddProduct(const CallNode &c,
                                                         const KernelBuildContext &) {
  auto s = inputShapes(c, 3);
  if (!s)
    return s.takeError();
  const std::vector<int64_t> &in = (*s)[0];
  std::vector<int64_t> A = (*s)[1], B = (*s)[2];
  if (A.size() != Rank || B.size() != Rank || in.size() > Rank)
    return kernelError(c, "expects " + llvm::Twine(Rank) + "-d factors");
  if (Rank == 2)
    A.insert(A.begin(), 1), B.insert(B.begin(), 1);
  std::vector<int64_t> outShape = {A[0], A[1], B[2]};
  // The input's strides against (batch, M, N), 0 where it broadcasts.
  std::vector<int64_t> is(3 - in.size(), 1);
  is.insert(is.end(), in.begin(), in.end());
  std::vector<int64_t> strides(3, 0);
  int64_t st = 1;
  for (size_t i = 3; i-- > 0;) {
    if (is[i] != 1 && is[i] != outShape[i])
      return kernelError(c, "input " + shapeToString(in) + " does not broadcast");
    strides[i] = is[i] == 1 ? 0 : st;
    st *= is[i];
  }
  return std::unique_ptr<OpKernel>(
      new AddProductKernel(A[0], A[1], B[2], A[2], float(c.attrs().getFloat("alpha", 1.0)),
                           float(c.attrs().getFloat("beta", 1.0)), std::move(strides)));
}
KC_REGISTER_KERNEL(addmm, "torch.addmm", makeAddProduct<2>);
KC_REGISTER_KERNEL(baddbmm, "torch.baddbmm", makeAddProduct<3>);

llvm::Expected<std::unique_ptr<OpKernel>> makeMv(const CallNode &c, const KernelBuildContext &ctx) {
  return kernelAs(c, "torch.matmul", {}, ctx);
}
KC_REGISTER_KERNEL(mv, "torch.mv", makeMv);

} // namespace
} // namespace kc::rt
