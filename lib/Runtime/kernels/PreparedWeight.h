//===- PreparedWeight.h - A weight in a kernel's layout, made once -*- C++ -*-===//
//
// Kernels that pack or transform their weights (GEMM panels and strips,
// Winograd's transformed filters) do it on their first run: a model loaded
// to run once would not repay the load time. Runs may be concurrent
// (CompiledModel::run from several threads), so the first one makes the
// tensor and any other waits for it; afterwards every run only reads it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Runtime/OpKernel.h"
#include "kc/Runtime/Tensor.h"
#include "kc/Runtime/WeightCache.h"

#include <mutex>
#include <string>

namespace kc::rt {

/// A weight as a kernel that prepares it receives it: a tensor (a view of
/// the bytes where they lie, or a copy), or the bytes of a constant that an
/// archive left unaligned or holds in f16, copied into an aligned f32
/// tensor only when the prepared form is made. A plan at a new input shape whose kernels find
/// their prepared weights made by another plan then copies nothing.
class WeightSource {
public:
  WeightSource() = default;
  WeightSource(Tensor t) : tensor_(std::move(t)) {}
  /// The `dtype` tensor of `shape` that `bytes` holds, copied (f16:
  /// widened) when taken.
  WeightSource(TensorDataPtr bytes, DType dtype, Shape shape)
      : bytes_(std::move(bytes)), dtype_(dtype), shape_(std::move(shape)) {}

  /// The tensor, copied now if it was deferred; the source is left empty.
  Tensor take() {
    if (bytes_) {
      tensor_ = copyConstantBytes(*bytes_, dtype_, shape_);
      bytes_ = nullptr;
    }
    return std::move(tensor_);
  }

private:
  Tensor tensor_;
  TensorDataPtr bytes_;
  DType dtype_ = DType::F32;
  Shape shape_;
};

class PreparedWeight {
public:
  PreparedWeight() = default;
  /// Keeps `source` until the prepared tensor is made from it.
  explicit PreparedWeight(WeightSource source) : source_(std::move(source)) {}
  /// The same, the tensor shared with every plan of the model that
  /// prepares the same weight (`weight`: the constant's bytes, source's
  /// origin) in the same `layout` (what the tensor is, with whatever else
  /// it depends on: "conv-strips, 2 groups"; kc/Runtime/WeightCache.h).
  PreparedWeight(WeightSource source, std::string layout, std::shared_ptr<const void> weight)
      : source_(std::move(source)), layout_(std::move(layout)), weight_(std::move(weight)),
        cache_(weight_ ? WeightCache::building() : nullptr) {}

  /// The tensor `make(source)` returns, made by the first caller only (of
  /// any plan, with a layout); the source is then let go, so the weight is
  /// not held twice.
  template <class F> const Tensor &get(F &&make) const {
    std::call_once(once_, [&] {
      auto made = [&] { return make(source_.take()); };
      tensor_ = cache_ ? cache_->get(weight_, layout_, made) : made();
      source_ = WeightSource();
    });
    return tensor_;
  }

  /// The source, given up before any run (a kernel absorbed into another
  /// hands its weight on).
  WeightSource takeSource() { return std::move(source_); }

private:
  mutable std::once_flag once_;
  mutable WeightSource source_;
  mutable Tensor tensor_;
  std::string layout_;
  std::shared_ptr<const void> weight_;
  WeightCache *cache_ = nullptr;
};

} // namespace kc::rt
