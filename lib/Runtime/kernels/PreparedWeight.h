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

#include <mutex>

namespace kc::rt {

class PreparedWeight {
public:
  PreparedWeight() = default;
  /// Keeps `source` until the prepared tensor is made from it.
  explicit PreparedWeight(Tensor source) : source_(std::move(source)) {}

  /// The tensor `make(source)` returns, made by the first caller only; the
  /// source is then let go, so the weight is not held twice.
  template <class F> const Tensor &get(F &&make) const {
    std::call_once(once_, [&] {
      tensor_ = make(static_cast<const Tensor &>(source_));
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
};

} // namespace kc::rt
