//===- Linear.cpp - nn.Linear ---------------------------------------------===//
//
// y = x Wᵀ + b over all leading dims at once: kc's panel kernel over the
// weight packed once for up to 256 rows, else sgemm with the weight (out ×
// in, row-major as PyTorch stores it) read transposed in place, by blocks
// of rows on the threads.
//
//===----------------------------------------------------------------------===//
#include "Blas.h"
#include "CallInfo.h"
#include "Epilogue.h"
#include "PackedGemm.h"
#include "Parallel.h"
#include "PreparedWeight.h"

#include <algorithm>

namespace kc::rt {
namespace {

class LinearKernel final : public FusableKernel {
public:
  /// `mapped`, when given, holds the weight's bytes in the mapped .bin (w
  /// may view them): their pages are released once the weight is packed.
  LinearKernel(int64_t rows, int64_t in, int64_t out, Tensor w, Tensor b, TensorDataPtr mapped)
      : rows_(rows), in_(in), out_(out), b_(std::move(b)), mapped_(std::move(mapped)) {
    takesExpression_ = true;
    if (packs())
      packed_ = std::make_unique<PreparedWeight>(std::move(w), "linear-panels", mapped_);
    else
      w_ = std::move(w);
  }

  /// The rows of x as strips of B, for the panel kernel.
  size_t workspaceBytes() const override {
    return packs() ? packedColumnsScratch(in_, rows_) * sizeof(float) : 0;
  }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    float *y = out[0]->data<float>();
    const float *x = in[0]->data<float>();
    if (in_ == 0) {
      // No input features: the product is zero (BLAS refuses k = 0).
      std::fill(y, y + rows_ * out_, 0.f);
    } else if (packs()) {
      const Tensor &packed = packed_->get([&](const Tensor &w) { return packWeight(w); });
      gemmPackedRows(packed.data<float>(), out_, in_, x, in_, rows_, y, out_,
                     static_cast<float *>(ctx.workspace));
    } else {
      return runBlocks(x, y, epilogue(y, in));
    }
    finish(y, 0, rows_, epilogue(y, in));
  }

private:
  /// Bias, activation and expression on rows [r0, r0 + n) of y.
  void finish(float *y, int64_t r0, int64_t n, const BlockEpilogue &ep) const {
    const float *b = b_.defined() && b_.numel() ? b_.data<float>() : nullptr;
    for (int64_t r = r0; r < r0 + n; ++r)
      rowBiasActivation(y + r * out_, out_, b, ep.storeAct(), slope_);
    ep.afterStore(y + r0 * out_, n, out_, out_);
  }

  /// With threads, blocks of rows go to them, each thread's sgemm followed
  /// by its block's bias and activation while the outputs are still in
  /// L2: after one sgemm over all rows, a large output went out to memory
  /// and came back for its bias and activation on the calling thread
  /// alone. At 1 thread one sgemm runs: OpenBLAS packs the weight again
  /// for each block, which cost more than the epilogue's pass saved.
  void runBlocks(const float *x, float *y, const BlockEpilogue &ep) const {
    const int64_t block =
        std::max<int64_t>(kMinBlockRows, kBlockBytes / (out_ * int64_t(sizeof(float))) / 16 * 16);
    const int64_t blocks = (rows_ + block - 1) / block;
    if (!useThreads(blocks >= 2 * int64_t(omp_get_max_threads()))) {
      sgemm(false, true, rows_, out_, in_, 1.f, x, in_, w_.data<float>(), in_, 0.f, y, out_);
      return finish(y, 0, rows_, ep);
    }
    parallelFor(blocks, true, [&](int64_t i) {
      const int64_t r0 = i * block, n = std::min(block, rows_ - r0);
      sgemm(false, true, n, out_, in_, 1.f, x + r0 * in_, in_, w_.data<float>(), in_, 0.f,
            y + r0 * out_, out_);
      finish(y, r0, n, ep);
    });
  }

  /// Rows of output a block holds at most (half of a 1 MB L2), and at least.
  static constexpr int64_t kBlockBytes = 512 << 10, kMinBlockRows = 32;

  /// Rows for the panel kernel: fewer than sgemm wants, down to one. A
  /// classifier's weight is read once a run, from memory in a model larger
  /// than the caches; packed, it is one sequential stream, which the
  /// hardware's prefetch keeps up with better than the several rows at
  /// once of a matrix-vector product per row (cblas_sgemv;
  /// docs/performance.md). sgemm would pack the whole weight on every call.
  bool packs() const { return in_ > 0 && rows_ <= kPackedRowsMax; }

  /// w in panels. The mapped pages of the original are released, so the
  /// weight is not resident twice.
  Tensor packWeight(const Tensor &w) const {
    Tensor p = Tensor::empty(DType::F32, {int64_t(packedSize(out_, in_))});
    packRows(w.data<float>(), in_, out_, in_, p.data<float>());
    if (mapped_)
      mapped_->releasePages();
    return p;
  }

  int64_t rows_, in_, out_;
  Tensor w_, b_;                           ///< w_ unless packed_
  std::unique_ptr<PreparedWeight> packed_; ///< the weight in panels, when packs()
  TensorDataPtr mapped_;
};

llvm::Expected<std::unique_ptr<OpKernel>> makeLinear(const CallNode &c, const CallShapes &io) {
  Tensor wT, bT;
  if (llvm::Error e = takeWeights(c, {{"weight", &wT, true, WeightUse::ReadOnly}, {"bias", &bT}}))
    return e;
  Tensor *w = &wT, *b = &bT;
  if (io.in.empty() || w->rank() != 2 || w->dim(1) != io.in.back())
    return kernelError(c, "input " + shapeToString(io.in) + " does not match weight " +
                              shapeToString(w->shape()));
  // The leading dims, whatever the (possibly empty) last one.
  int64_t rows = numElements(llvm::ArrayRef<int64_t>(io.in).drop_back());
  return std::unique_ptr<OpKernel>(new LinearKernel(rows, w->dim(1), w->dim(0), std::move(*w),
                                                    std::move(*b), c.weight("weight")->data()));
}

} // namespace

KC_REGISTER_KERNEL(linear, "nn.Linear", withShapes<makeLinear>);

} // namespace kc::rt
