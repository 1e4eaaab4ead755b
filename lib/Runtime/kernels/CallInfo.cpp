//===- CallInfo.cpp - What kernel factories read from a call --------------===//
#include "CallInfo.h"

namespace kc::rt {

llvm::Expected<std::vector<std::vector<int64_t>>> inputShapes(const CallNode &c, size_t atLeast) {
  auto args = c.dataArgs(); // once: inputShape(c, i) collects them on every call
  if (args.size() < atLeast)
    return kernelError(c, "expects at least " + llvm::Twine(atLeast) + " input(s), got " +
                              llvm::Twine(args.size()));
  std::vector<std::vector<int64_t>> shapes;
  for (const ExprNode *a : args) {
    auto s = staticShape(c, a->type());
    if (!s)
      return s.takeError();
    shapes.push_back(std::move(*s));
  }
  return shapes;
}

llvm::Expected<CallShapes> callShapes(const CallNode &c) {
  auto in = inputShape(c, 0);
  if (!in)
    return in.takeError();
  auto out = outputShape(c);
  if (!out)
    return out.takeError();
  return CallShapes{std::move(*in), std::move(*out)};
}

llvm::Expected<std::pair<int, int64_t>> axisAndOuter(const CallNode &c,
                                                     llvm::ArrayRef<int64_t> shape) {
  int axis = normAxis(c.attrs().getInt("dim", 0), shape.size());
  if (axis < 0 || axis >= int(shape.size()))
    return kernelError(c, "dim out of range for " + shapeToString(shape));
  int64_t outer = 1;
  for (int i = 0; i < axis; ++i)
    outer *= shape[i];
  return std::make_pair(axis, outer);
}

llvm::Error takeWeights(const CallNode &c, std::initializer_list<WeightSlot> slots) {
  for (const WeightSlot &s : slots) {
    auto t = weightTensor(c, s.key, s.required, s.use);
    if (!t)
      return t.takeError();
    *s.to = std::move(*t);
  }
  return llvm::Error::success();
}

} // namespace kc::rt
