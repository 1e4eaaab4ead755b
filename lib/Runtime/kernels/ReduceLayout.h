//===- ReduceLayout.h - Where a reduction reads -----------------*- C++ -*-===//
#pragma once

#include "CallInfo.h"

namespace kc::rt {

/// The element offsets of a reduction over any set of dims of a
/// contiguous tensor: output element o reads in[kept[o] + reduced[r]] for
/// every r. Both tables are made once, at load time.
struct ReduceLayout {
  std::vector<int64_t> kept, reduced;

  /// `dims` to reduce (negative allowed); none reduces all.
  static llvm::Expected<ReduceLayout> make(const CallNode &c, llvm::ArrayRef<int64_t> shape,
                                           llvm::ArrayRef<int64_t> dims) {
    std::vector<bool> red(shape.size(), dims.empty());
    for (int64_t d : dims) {
      int a = normAxis(d, shape.size());
      if (a < 0 || a >= int(shape.size()))
        return kernelError(c,
                           "dim " + llvm::Twine(d) + " out of range for " + shapeToString(shape));
      red[a] = true;
    }
    std::vector<int64_t> stride(shape.size());
    int64_t st = 1;
    for (size_t i = shape.size(); i-- > 0;)
      stride[i] = st, st *= shape[i];
    ReduceLayout l;
    l.kept = {0};
    l.reduced = {0};
    for (size_t i = 0; i < shape.size(); ++i) {
      std::vector<int64_t> &t = red[i] ? l.reduced : l.kept;
      std::vector<int64_t> next;
      next.reserve(t.size() * size_t(shape[i]));
      for (int64_t base : t)
        for (int64_t j = 0; j < shape[i]; ++j)
          next.push_back(base + j * stride[i]);
      t = std::move(next);
    }
    return l;
  }
};

/// The `dim` attribute as a list (absent or None: empty).
inline std::vector<int64_t> dimList(const CallNode &c) {
  const AttrValue *dv = c.attrs().find("dim");
  return dv && !dv->isNone() ? dv->asIntVector() : std::vector<int64_t>{};
}

} // namespace kc::rt
