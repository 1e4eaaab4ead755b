//===- PackedProjection.h - x Wᵀ + b over a weight packed once --*- C++ -*-===//
//
// The projections of the attention kernels: up to kPackedRowsMax rows on
// the panel kernel (gemmPackedRows) over the weight packed on the first
// run, longer inputs on sgemm, which packs the weight itself and repays it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Blas.h"
#include "Epilogue.h"
#include "PackedGemm.h"
#include "PreparedWeight.h"

#include <memory>

namespace kc::rt {

class PackedProjection {
public:
  PackedProjection() = default;
  /// `w`: out × in, row-major; `bias`: out values, or empty.
  PackedProjection(Tensor w, Tensor bias)
      : w_(std::move(w)), b_(std::move(bias)), out_(w_.shape()[0]), in_(w_.shape()[1]),
        packed_(std::make_unique<PreparedWeight>()) {}

  /// Scratch floats apply() needs for `rows` rows.
  size_t scratchFloats(int64_t rows) const {
    return rows <= kPackedRowsMax ? packedColumnsScratch(in_, rows) : 0;
  }

  /// y (rows × out, rows ldy apart) = x (rows × in, ldx apart) Wᵀ + b.
  void apply(const float *x, int64_t ldx, int64_t rows, float *y, int64_t ldy,
             float *scratch) const {
    if (rows <= kPackedRowsMax) {
      const Tensor &p = packed_->get([&](const Tensor &) {
        Tensor panels = Tensor::empty(DType::F32, {int64_t(packedSize(out_, in_))});
        packRows(w_.data<float>(), in_, out_, in_, panels.data<float>());
        return panels;
      });
      gemmPackedRows(p.data<float>(), out_, in_, x, ldx, rows, y, ldy, scratch);
    } else {
      sgemm(false, true, rows, out_, in_, 1.f, x, ldx, w_.data<float>(), in_, 0.f, y, ldy);
    }
    if (b_.defined() && b_.numel())
      for (int64_t i = 0; i < rows; ++i)
        rowBiasActivation(y + i * ldy, out_, b_.data<float>(), Act::None, 0.f);
  }

private:
  Tensor w_, b_;
  int64_t out_ = 0, in_ = 0;
  std::unique_ptr<PreparedWeight> packed_;
};

} // namespace kc::rt
