//===- kc/Runtime/Tensor.h - Run-time tensors -------------------*- C++ -*-===//
///
/// \file
/// A dense, contiguous, row-major tensor: an element type, a shape and a
/// pointer into reference-counted storage. Tensors made with `empty` own
/// 64-byte aligned memory; `view` wraps memory owned elsewhere (the
/// interpreter's activation arena, another tensor). Copying a Tensor shares
/// the bytes, as a torch.Tensor does.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Support/DType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <memory>
#include <string>

namespace kc::rt {

using Shape = llvm::SmallVector<int64_t, 6>;

/// Product of dims (1 for a scalar).
int64_t numElements(llvm::ArrayRef<int64_t> shape);
std::string shapeToString(llvm::ArrayRef<int64_t> shape);

class Tensor {
public:
  Tensor() = default;

  /// New zero-filled, 64-byte aligned storage.
  static Tensor empty(DType dtype, llvm::ArrayRef<int64_t> shape);
  /// A tensor owning a copy of `t`'s bytes, in 64-byte aligned heap memory
  /// that later copies of the same size reuse (a run's outputs).
  static Tensor copyOf(const Tensor &t);
  /// New 64-byte aligned heap storage, not initialized, that later tensors
  /// of the same size reuse (a run's outputs, written by their step).
  static Tensor uninitialized(DType dtype, llvm::ArrayRef<int64_t> shape);
  /// Wraps `data` (kept alive by `owner`, which may be null when the caller
  /// guarantees the lifetime).
  static Tensor view(DType dtype, llvm::ArrayRef<int64_t> shape, void *data,
                     std::shared_ptr<void> owner = nullptr);

  /// The same bytes with another shape of the same element count.
  Tensor reshaped(llvm::ArrayRef<int64_t> shape) const;

  bool defined() const { return data_ != nullptr || numel() == 0; }
  DType dtype() const { return dtype_; }
  llvm::ArrayRef<int64_t> shape() const { return shape_; }
  int64_t dim(int i) const { return shape_[i < 0 ? i + int(shape_.size()) : i]; }
  size_t rank() const { return shape_.size(); }
  int64_t numel() const { return numElements(shape_); }
  size_t nbytes() const { return size_t(numel()) * dtypeSize(dtype_); }

  void *raw() const { return data_; }
  /// What keeps the bytes alive (null for a view of memory the tensor does
  /// not own).
  const std::shared_ptr<void> &owner() const { return owner_; }
  template <typename T> T *data() const { return static_cast<T *>(data_); }

private:
  DType dtype_ = DType::F32;
  Shape shape_;
  void *data_ = nullptr;
  std::shared_ptr<void> owner_;
};

/// 64-byte aligned allocation released by the returned owner.
std::shared_ptr<void> alignedAlloc(size_t bytes);

} // namespace kc::rt
