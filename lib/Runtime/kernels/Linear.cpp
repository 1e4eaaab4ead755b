//===- Linear.cpp - nn.Linear ---------------------------------------------===//
//
// y = x Wᵀ + b over all leading dims at once: kc's panel kernel over the
// weight packed once for up to 256 rows, else one sgemm with the weight
// (out × in, row-major as PyTorch stores it) read transposed in place.
//
//===----------------------------------------------------------------------===//
#include "Blas.h"
#include "CallInfo.h"
#include "Epilogue.h"
#include "PackedGemm.h"
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
      sgemm(false, true, rows_, out_, in_, 1.f, x, in_, w_.data<float>(), in_, 0.f, y, out_);
    }
    const float *b = b_.defined() && b_.numel() ? b_.data<float>() : nullptr;
    const BlockEpilogue ep = epilogue(y, in);
    for (int64_t r = 0; r < rows_; ++r)
      rowBiasActivation(y + r * out_, out_, b, ep.storeAct(), slope_);
    ep.afterStore(y, rows_, out_, out_);
  }

private:
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
