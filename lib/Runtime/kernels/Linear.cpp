//===- Linear.cpp - nn.Linear ---------------------------------------------===//
//
// y = x Wᵀ + b over all leading dims at once, on kc's panel kernel over the
// weight packed once: blocks of rows, each block's bias, activation and
// expression applied right after its product, while the block is in
// cache; with enough blocks they go to the threads.
//
//===----------------------------------------------------------------------===//
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
      : rows_(rows), in_(in), out_(out), b_(std::move(b)), mapped_(std::move(mapped)),
        packed_(std::move(w), "linear-panels", mapped_) {
    takesExpression_ = true;
  }

  /// A block's rows of x as strips of B, on each thread.
  size_t workspaceBytes() const override {
    if (in_ == 0)
      return 0;
    return size_t(omp_get_max_threads()) * size_t(blockFloats()) * sizeof(float);
  }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    float *y = out[0]->data<float>();
    const float *x = in[0]->data<float>();
    const BlockEpilogue ep = epilogue(y, in);
    if (in_ == 0) {
      // No input features: the product is zero.
      std::fill(y, y + rows_ * out_, 0.f);
      return finish(y, 0, rows_, ep);
    }
    const float *packed = packed_.get([&](const Tensor &w) { return packWeight(w); }).data<float>();
    float *ws = static_cast<float *>(ctx.workspace);
    const int64_t block = blockRows(), blocks = (rows_ + block - 1) / block;
    const int team = teamSize(blocks >= 2 * int64_t(omp_get_max_threads()), 0);
    auto one = [&](int64_t i, float *scratch) {
      const int64_t r0 = i * block, n = std::min(block, rows_ - r0);
      gemmPackedRows(packed, out_, in_, x + r0 * in_, in_, n, y + r0 * out_, out_, scratch);
      finish(y, r0, n, ep);
    };
    // Few blocks run one after another, each product over the threads;
    // shared out, each block's product runs as a team of its own thread.
    const int64_t slice = blockFloats();
    if (team > 1)
      parallelFor(blocks, true, [&](int64_t i) {
        float *mine = ws + omp_get_thread_num() * slice;
        alone([&] { one(i, mine); });
      });
    else
      for (int64_t i = 0; i < blocks; ++i)
        one(i, ws);
  }

private:
  /// Rows a block takes: whole strips of 6 (the panel kernel's columns),
  /// its outputs and its packed rows of x each within kBlockBytes, at
  /// least kMinBlockRows (the weight streams once a block).
  int64_t blockRows() const {
    const int64_t widest = std::max(in_, out_) * int64_t(sizeof(float));
    const int64_t rows = std::max(kMinBlockRows, kBlockBytes / widest / 6 * 6);
    return std::min(rows, (rows_ + 5) / 6 * 6);
  }
  int64_t blockFloats() const {
    return perThreadFloats(int64_t(packedColumnsScratch(in_, blockRows())));
  }

  /// Bias, activation and expression on rows [r0, r0 + n) of y.
  void finish(float *y, int64_t r0, int64_t n, const BlockEpilogue &ep) const {
    const float *b = b_.defined() && b_.numel() ? b_.data<float>() : nullptr;
    for (int64_t r = r0; r < r0 + n; ++r)
      rowBiasActivation(y + r * out_, out_, b, ep.storeAct(), slope_);
    ep.afterStore(y + r0 * out_, n, out_, out_);
  }

  /// w in panels. The mapped pages of the original are released, so the
  /// weight is not resident twice.
  Tensor packWeight(const Tensor &w) const {
    Tensor p = Tensor::empty(DType::F32, {int64_t(packedSize(out_, in_))});
    packRows(w.data<float>(), in_, out_, in_, p.data<float>());
    if (mapped_)
      mapped_->releasePages();
    return p;
  }

  /// Half of a 1 MB L2; rows a block takes at least.
  static constexpr int64_t kBlockBytes = 512 << 10, kMinBlockRows = 96;

  int64_t rows_, in_, out_;
  Tensor b_;
  TensorDataPtr mapped_;
  PreparedWeight packed_; ///< the weight in panels
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
