//===- MatMul.cpp - torch.matmul / bmm / mm -------------------------------===//
//
// NumPy matmul semantics: 1-d operands are promoted to a row/column and the
// leading (batch) dims broadcast. One sgemm per batch entry, then the
// activation fuse-ops grouped with it, while the block is in cache.
//
//===----------------------------------------------------------------------===//
#include "Blas.h"
#include "CallInfo.h"
#include "Epilogue.h"

#include <cblas.h>

namespace kc::rt {
namespace {

class MatMulKernel final : public FusableKernel {
public:
  MatMulKernel(std::vector<int64_t> a, std::vector<int64_t> b, std::vector<int64_t> out)
      : a_(std::move(a)), b_(std::move(b)), out_(std::move(out)) {
    if (a_.size() == 1)
      a_.insert(a_.begin(), 1);
    if (b_.size() == 1)
      b_.push_back(1);
    M_ = a_[a_.size() - 2], K_ = a_.back(), N_ = b_.back();
    size_t batchRank = std::max(a_.size(), b_.size()) - 2;
    batch_.assign(batchRank, 1);
    auto fill = [&](const std::vector<int64_t> &s, std::vector<int64_t> &strides, int64_t mat) {
      strides.assign(batchRank, 0);
      int64_t st = mat;
      for (size_t i = 0; i + 2 < s.size(); ++i) {
        size_t d = s.size() - 3 - i, bd = batchRank - 1 - i;
        strides[bd] = s[d] == 1 ? 0 : st;
        batch_[bd] = std::max(batch_[bd], s[d]);
        st *= s[d];
      }
    };
    fill(a_, sa_, M_ * K_);
    fill(b_, sb_, K_ * N_);
    takesExpression_ = true;
  }

  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    const float *a = in[0]->data<float>(), *b = in[1]->data<float>();
    float *c = out[0]->data<float>();
    const BlockEpilogue ep = epilogue(c, in);
    int64_t total = numElements(batch_);
    std::vector<int64_t> idx(batch_.size(), 0);
    for (int64_t t = 0; t < total; ++t) {
      int64_t oa = 0, ob = 0;
      for (size_t i = 0; i < idx.size(); ++i)
        oa += idx[i] * sa_[i], ob += idx[i] * sb_[i];
      if (M_ == 1)
        cblas_sgemv(CblasRowMajor, CblasTrans, int(K_), int(N_), 1.f, b + ob, int(N_), a + oa, 1,
                    0.f, c + t * M_ * N_, 1);
      else
        sgemm(false, false, int(M_), int(N_), int(K_), 1.f, a + oa, int(K_), b + ob, int(N_), 0.f,
              c + t * M_ * N_, int(N_));
      ep(c + t * M_ * N_, M_, N_, N_, nullptr);
      for (size_t i = idx.size(); i-- > 0;) {
        if (++idx[i] < batch_[i])
          break;
        idx[i] = 0;
      }
    }
  }

private:
  std::vector<int64_t> a_, b_, out_, batch_, sa_, sb_;
  int64_t M_, K_, N_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeMatMul(const CallNode &c, const CallShapes &io) {
  const std::vector<int64_t> &a = io.in;
  auto b = inputShape(c, 1);
  if (!b)
    return b.takeError();
  if (a.empty() || b->empty())
    return kernelError(c, "operands must have at least one dim");
  int64_t ka = a.back(), kb = b->size() == 1 ? (*b)[0] : (*b)[b->size() - 2];
  if (ka != kb)
    return kernelError(c, "inner dims differ: " + shapeToString(a) + " @ " + shapeToString(*b));
  return std::unique_ptr<OpKernel>(new MatMulKernel(a, *b, io.out));
}

} // namespace

KC_REGISTER_KERNEL(matmul, "torch.matmul", withShapes<makeMatMul>);

} // namespace kc::rt
