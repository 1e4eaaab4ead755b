//===- StridedCopy.cpp - A dense copy read through strides ----------------===//
//
// Row by row, each output row one memcpy where the input is contiguous
// along it, else a gather; where the output's innermost dim is strided in
// the input but another output dim is contiguous there (a permute between
// channels-first and channels-last), tiles of a 2-d transpose.
//
//===----------------------------------------------------------------------===//
#include "StridedCopy.h"
#include "Parallel.h"
#include "kc/Runtime/Tensor.h"

#include <algorithm>
#include <cstring>

namespace kc::rt {
namespace {

/// Tiles of a transposing copy: 16 source rows of 16 elements each read
/// and written within L1.
constexpr int64_t kTransposeTile = 16;

/// dst[a·dstLd + b] = src[a + b·srcLd] for a < rows, b < cols: tile by
/// tile, each tile's source read along a (contiguous) and written along b.
template <class E>
void transposeTile(const E *src, E *dst, int64_t rows, int64_t cols, int64_t srcLd, int64_t dstLd) {
  for (int64_t b = 0; b < cols; ++b)
    for (int64_t a = 0; a < rows; ++a)
      dst[a * dstLd + b] = src[a + b * srcLd];
}

/// The copy where the output's innermost dim is strided in the input and
/// output dim j is the input's contiguous one: 2-d transposes, a tile of
/// kTransposeTile × kTransposeTile at a time. Row by row, each output row
/// read one element a cache line (channels-last to channels-first on
/// 14x14x384: 0.072 ms, against 0.026 the other way).
template <class E>
void transposingCopy(const E *src, E *dst, llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<int64_t> strides, size_t j) {
  const size_t r = shape.size();
  const int64_t rows = shape[j], cols = shape[r - 1], srcLd = strides[r - 1];
  int64_t dstLd = 1;
  for (size_t d = j + 1; d < r; ++d)
    dstLd *= shape[d];
  const int64_t rowTiles = (rows + kTransposeTile - 1) / kTransposeTile;
  const int64_t colTiles = (cols + kTransposeTile - 1) / kTransposeTile;
  const int64_t outer = numElements(shape) / (rows * cols);
  parallelFor(outer * rowTiles, outer * rows * cols > 262144, [&](int64_t item) {
    // The item's indices over the dims other than j and the innermost.
    int64_t rem = item / rowTiles, in = 0, out = 0, step = cols;
    for (size_t d = r - 1; d-- > 0;) {
      if (d != j) {
        int64_t i = rem % shape[d];
        rem /= shape[d];
        in += i * strides[d], out += i * step;
      }
      step *= shape[d];
    }
    int64_t a0 = item % rowTiles * kTransposeTile, na = std::min(kTransposeTile, rows - a0);
    for (int64_t t = 0; t < colTiles; ++t) {
      int64_t b0 = t * kTransposeTile, nb = std::min(kTransposeTile, cols - b0);
      transposeTile(src + in + a0 + b0 * srcLd, dst + out + a0 * dstLd + b0, na, nb, srcLd, dstLd);
    }
  });
}

/// The output dim read contiguously from the input, when the innermost
/// one is not and both are long enough to tile; r (none) otherwise.
size_t transposedDim(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> strides) {
  size_t r = shape.size();
  if (r < 2 || strides[r - 1] == 1 || shape[r - 1] < 4)
    return r;
  for (size_t d = 0; d + 1 < r; ++d)
    if (strides[d] == 1 && shape[d] >= 4)
      return d;
  return r;
}

} // namespace

void stridedCopy(const uint8_t *src, uint8_t *dst, llvm::ArrayRef<int64_t> shape,
                 llvm::ArrayRef<int64_t> strides, size_t esize) {
  size_t r = shape.size();
  if (r == 0) {
    std::memcpy(dst, src, esize);
    return;
  }
  int64_t inner = shape[r - 1], istride = strides[r - 1];
  int64_t rows = numElements(shape) / std::max<int64_t>(inner, 1);
  if (inner == 0 || rows == 0)
    return;
  if (size_t j = transposedDim(shape, strides); j < r) {
    switch (esize) {
    case 1:
      return transposingCopy(src, dst, shape, strides, j);
    case 2:
      return transposingCopy(reinterpret_cast<const uint16_t *>(src),
                             reinterpret_cast<uint16_t *>(dst), shape, strides, j);
    case 4:
      return transposingCopy(reinterpret_cast<const uint32_t *>(src),
                             reinterpret_cast<uint32_t *>(dst), shape, strides, j);
    case 8:
      return transposingCopy(reinterpret_cast<const uint64_t *>(src),
                             reinterpret_cast<uint64_t *>(dst), shape, strides, j);
    default:
      break;
    }
  }
  parallelFor(rows, rows * inner > 262144, [&](int64_t row) {
    int64_t rem = row, off = 0;
    for (size_t d = r - 1; d-- > 0;) {
      off += (rem % shape[d]) * strides[d];
      rem /= shape[d];
    }
    uint8_t *o = dst + row * inner * esize;
    const uint8_t *s = src + off * esize;
    if (istride == 1) {
      std::memcpy(o, s, inner * esize);
    } else if (esize == 4) {
      auto *of = reinterpret_cast<uint32_t *>(o);
      auto *sf = reinterpret_cast<const uint32_t *>(s);
      for (int64_t j = 0; j < inner; ++j)
        of[j] = sf[j * istride];
    } else {
      for (int64_t j = 0; j < inner; ++j)
        std::memcpy(o + j * esize, s + j * istride * esize, esize);
    }
  });
}

} // namespace kc::rt
