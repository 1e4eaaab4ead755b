//===- ParamTensor.h - A parameter: a weight or an operand ------*- C++ -*-===//
//
// Many ops come twice: as an nn module, whose parameters (a weight, a bias,
// running statistics) are weights of the call, and as an F. function, which
// takes the same parameters as operands. A ParamTensor says where one is,
// so that one kernel serves both: a weight is bound when the kernel is
// built, an operand read from the kernel's inputs at each run.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Operands.h"

namespace kc::rt {

class ParamTensor {
public:
  /// c's parameter `name`: its weight @name, else its operand $name, else
  /// its data argument `pos` when it has one; absent when none is.
  static llvm::Expected<ParamTensor> of(const CallNode &c, llvm::StringRef name, int pos = -1) {
    ParamTensor p;
    if (c.weight(name)) {
      auto t = weightTensor(c, name, true, WeightUse::ReadOnly);
      if (!t)
        return t.takeError();
      p.shape_.assign(t->shape().begin(), t->shape().end());
      p.bound_ = std::move(*t);
      p.present_ = true;
      return p;
    }
    p.operand_ = namedOperand(c, name);
    if (p.operand_ < 0 && pos >= 0 && size_t(pos) < c.dataArgs().size())
      p.operand_ = pos;
    if (p.operand_ < 0)
      return p;
    auto s = inputShape(c, size_t(p.operand_));
    if (!s)
      return s.takeError();
    p.shape_ = std::move(*s);
    p.present_ = true;
    return p;
  }

  bool present() const { return present_; }
  /// The static shape (empty when absent).
  llvm::ArrayRef<int64_t> shape() const { return shape_; }
  int64_t numel() const { return present_ ? numElements(shape_) : 0; }
  /// Its floats during a run, `in` the kernel's inputs; null when absent.
  const float *data(llvm::ArrayRef<const Tensor *> in) const {
    return operand_ >= 0 ? in[operand_]->data<float>() : bound_.data<float>();
  }

private:
  Tensor bound_;
  int operand_ = -1;
  std::vector<int64_t> shape_;
  bool present_ = false;
};

/// Takes each parameter (ParamTensor::of) of `slots`, names and where they
/// go, each of which, when present, must hold `n` elements; the first
/// error, if any.
inline llvm::Error
takeParams(const CallNode &c, int64_t n,
           std::initializer_list<std::pair<llvm::StringRef, ParamTensor *>> slots) {
  for (auto [name, to] : slots) {
    auto p = ParamTensor::of(c, name);
    if (!p)
      return p.takeError();
    if (p->present() && p->numel() != n)
      return kernelError(c, name + " " + shapeToString(p->shape()) + " does not have " +
                                llvm::Twine(n) + " elements");
    *to = std::move(*p);
  }
  return llvm::Error::success();
}

} // namespace kc::rt
