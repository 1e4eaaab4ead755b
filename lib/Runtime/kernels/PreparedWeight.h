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

#include "kc/Runtime/Tensor.h"
#include "kc/Runtime/WeightCache.h"

#include <mutex>
#include <string>

namespace kc::rt {

class PreparedWeight {
public:
  PreparedWeight() = default;
  /// Keeps `source` until the prepared tensor is made from it.
  explicit PreparedWeight(Tensor source) : source_(std::move(source)) {}
  /// The same, the tensor shared with every plan of the model that
  /// prepares the same weight (`weight`: the constant's bytes, source's
  /// origin) in the same `layout` (what the tensor is, with whatever else
  /// it depends on: "conv-strips, 2 groups"; kc/Runtime/WeightCache.h).
  PreparedWeight(Tensor source, std::string layout, std::shared_ptr<const void> weight)
      : source_(std::move(source)), layout_(std::move(layout)), weight_(std::move(weight)),
        cache_(weight_ ? WeightCache::building() : nullptr) {}

  /// The tensor `make(source)` returns, made by the first caller only (of
  /// any plan, with a layout); the source is then let go, so the weight is
  /// not held twice.
  template <class F> const Tensor &get(F &&make) const {
    std::call_once(once_, [&] {
      const Tensor &source = source_;
      tensor_ = cache_ ? cache_->get(weight_, layout_, [&] { return make(source); }) : make(source);
      source_ = Tensor();
    });
    return tensor_;
  }

  /// The source, given up before any run (a kernel absorbed into another
  /// hands its weight on).
  Tensor takeSource() { return std::move(source_); }

private:
  mutable std::once_flag once_;
  mutable Tensor source_, tensor_;
  std::string layout_;
  std::shared_ptr<const void> weight_;
  WeightCache *cache_ = nullptr;
};

} // namespace kc::rt
