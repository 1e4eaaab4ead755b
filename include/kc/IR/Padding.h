//===- kc/IR/Padding.h - F.pad and the padding modules ----------*- C++ -*-===//
///
/// \file
/// What a call of F.pad or of a padding module (nn.ReflectionPad2d,
/// nn.ReplicationPad3d, nn.ZeroPad2d, ...) pads, and the shapes PyTorch 1.13
/// pads in each mode. The type rule, the pad kernel and the convolutions'
/// padding_mode all ask here, so what one accepts the others can run: a
/// shape this file refuses never reaches a kernel.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Expr.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace kc {

enum class PadMode { Constant, Reflect, Replicate, Circular };

/// `constant`, `reflect`, `replicate` or `circular`; nullopt for others.
std::optional<PadMode> parsePadMode(llvm::StringRef name);
llvm::StringRef padModeName(PadMode mode);

/// A padding: the mode and the (before, after) pairs, last dim first as
/// F.pad lists them. Negative entries crop.
struct Padding {
  PadMode mode = PadMode::Constant;
  std::vector<int64_t> pairs;
};

/// The padding a call asks for: F.pad's `mode` and `pad`, or a module's
/// mode (its op type) and `padding`, a single value meaning every side of
/// the module's dims. An error (without the op's name) for an unknown mode
/// or a malformed list.
llvm::Expected<Padding> readPadding(const CallNode &c);

/// The shape of `in` padded by `p`, or why PyTorch 1.13 refuses it (without
/// the op's name; `shown` is how the message shows the input). Dims below 0
/// (unknown) are kept unknown and not checked. PyTorch refuses, besides
/// sizes outside int64:
/// - reflect, replicate, circular: other than 1 to 3 padded dims of an
///   input with one or two dims more (circular: exactly two);
/// - replicate, and reflect of 3 dims: an empty dim other than the batch
///   (dim 0 of an input with two dims more than padded); reflect of 1 or 2
///   dims: an empty padded dim, or empty channels beside a batch;
/// - reflect: a pad not below its dim's size; replicate and reflect: an
///   empty result dim; circular: a pad above its dim's size, or a negative
///   result dim; constant: crops removing more than a dim holds.
llvm::Expected<std::vector<int64_t>> paddedShape(llvm::ArrayRef<int64_t> in, const Padding &p,
                                                 llvm::StringRef shown);

/// The index that position `i` of a padded dim (before the padding is
/// subtracted: i in [-before, size + after)) reads in a dim of `size`, or -1
/// for a constant pad's fill. Closed form, for the paddings paddedShape
/// accepts (a reflection folds once).
inline int64_t padSourceIndex(int64_t i, int64_t size, PadMode mode) {
  if (i >= 0 && i < size)
    return i;
  switch (mode) {
  case PadMode::Constant:
    return -1;
  case PadMode::Replicate:
    return i < 0 ? 0 : size - 1;
  case PadMode::Circular:
    return ((i % size) + size) % size;
  case PadMode::Reflect: {
    if (size == 1)
      return 0;
    int64_t period = 2 * (size - 1), j = ((i % period) + period) % period;
    return j < size ? j : period - j;
  }
  }
  return -1;
}

} // namespace kc
