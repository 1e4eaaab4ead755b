//===- StridedCopy.h - A dense copy read through strides --------*- C++ -*-===//
#pragma once

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>
#include <cstdint>

namespace kc::rt {

/// Copies `dst` (dense, shape `shape`) from `src` read with element
/// `strides` (0 = broadcast), elements of `esize` bytes: permute,
/// transpose, slice, select and expand.
void stridedCopy(const uint8_t *src, uint8_t *dst, llvm::ArrayRef<int64_t> shape,
                 llvm::ArrayRef<int64_t> strides, size_t esize);

} // namespace kc::rt
