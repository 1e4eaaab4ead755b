//===- kc/IR/WindowAttrs.h - Convolution and pooling attributes -*- C++ -*-===//
///
/// \file
/// The sliding-window attributes of a convolution, transposed convolution
/// or pool (kernel_size, stride, padding, dilation, output_padding, groups,
/// padding_mode, ceil_mode), read, defaulted and checked in one place. The
/// type rules and the kernels both read a call through this view, so the
/// output size the type promises is the one the kernel computes, and a
/// malformed list is refused instead of silently replaced by a default.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Expr.h"
#include "kc/IR/Op.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kc {

struct WindowAttrs {
  WindowOp op = WindowOp::Conv;
  /// One entry per spatial dim, first spatial dim first.
  std::vector<int64_t> kernel, stride, dilation, outputPadding;
  /// The padding before and after each spatial dim: `padding="same"`
  /// resolved as PyTorch does (the odd unit after), or a convolution's
  /// F.pad-style (before, after) pairs, last dim first: pnnx writes them
  /// for the padding modes, and fold-pad for an uneven zero padding (the
  /// exporter writes that one back as F.pad).
  std::vector<int64_t> padBefore, padAfter;
  /// A convolution's padding_mode: `zeros`, or the F.pad mode
  /// (`reflect`, `replicate`, `circular`) applied before convolving.
  std::string paddingMode = "zeros";
  int64_t groups = 1;
  bool ceilMode = false;

  /// Reads call `c` over `n` spatial dims. The kernel size is the
  /// attribute `kernel_size`, or `weightKernel` (the weight's trailing
  /// dims) for the functional convolutions that have no such attribute;
  /// when both are known they must agree. The error names no op: callers
  /// add it.
  static llvm::Expected<WindowAttrs> from(const CallNode &c, size_t n, WindowOp op,
                                          llvm::ArrayRef<int64_t> weightKernel = {});

  size_t rank() const { return kernel.size(); }
  bool symmetricPadding() const { return padBefore == padAfter; }
  bool zeroPadding() const;
  /// F.pad's (before, after) pairs, last dim first, for padding_mode.
  std::vector<int64_t> padPairs() const;
  /// PyTorch's output size of spatial dim `i` for an input of `in`; nullopt
  /// when the attributes take the arithmetic outside int64. Zero or less
  /// means the input is smaller than the padded, dilated kernel.
  std::optional<int64_t> outputSize(size_t i, int64_t in) const;
};

} // namespace kc
