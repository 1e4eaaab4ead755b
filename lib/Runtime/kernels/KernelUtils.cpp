//===- KernelUtils.cpp - Shared helpers of the kernel files ---------------===//
#include "KernelUtils.h"

namespace kc::rt {

void biasActivation(float *data, int64_t rows, int64_t cols, const float *bias, Act act,
                    float slope) {
  if (!bias && act == Act::None)
    return;
#pragma omp parallel for if (rows * cols > 65536)
  for (int64_t r = 0; r < rows; ++r) {
    float *p = data + r * cols;
    float b = bias ? bias[r] : 0.f;
    switch (act) {
    case Act::None:
      for (int64_t j = 0; j < cols; ++j)
        p[j] += b;
      break;
    case Act::Relu:
      for (int64_t j = 0; j < cols; ++j)
        p[j] = std::max(p[j] + b, 0.f);
      break;
    case Act::Relu6:
      for (int64_t j = 0; j < cols; ++j)
        p[j] = std::min(std::max(p[j] + b, 0.f), 6.f);
      break;
    default:
      for (int64_t j = 0; j < cols; ++j)
        p[j] = applyAct(act, p[j] + b, slope);
      break;
    }
  }
}

Act activationOf(const CallNode &c, float *slope) {
  const OpDef *d = c.opDef();
  if (!d)
    return Act::None;
  llvm::StringRef n = d->name();
  *slope = 0.f;
  if (n == "nn.ReLU")
    return Act::Relu;
  if (n == "nn.ReLU6")
    return Act::Relu6;
  if (n == "nn.SiLU")
    return Act::Silu;
  if (n == "nn.Sigmoid")
    return Act::Sigmoid;
  if (n == "nn.Hardswish")
    return Act::Hardswish;
  if (n == "nn.LeakyReLU") {
    *slope = float(c.attrs().getFloat("negative_slope", 0.01));
    return Act::LeakyRelu;
  }
  return Act::None;
}

} // namespace kc::rt
