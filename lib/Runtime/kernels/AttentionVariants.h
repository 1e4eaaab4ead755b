//===- AttentionVariants.h - The general nn.MultiheadAttention --*- C++ -*-===//
//
// What the fast kernel of Attention.cpp and the general one of
// AttentionVariants.cpp share: which calls go to which, and the softmax
// of the scores.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "CallInfo.h"
#include "SoftmaxRow.h"

#include <algorithm>
#include <cmath>

namespace kc::rt {

/// True if `c` uses what the fast kernel of Attention.cpp leaves out:
/// masks, kdim/vdim, add_bias_kv, add_zero_attn, an unbatched query.
bool isAttentionVariant(const CallNode &c);

/// The general nn.MultiheadAttention kernel for those calls.
llvm::Expected<std::unique_ptr<OpKernel>> makeAttentionVariant(const CallNode &c,
                                                               const KernelBuildContext &ctx);

/// Turns one row of `n` attention scores into weights, in place: their
/// softmax, the maximum subtracted and the exponentials times the
/// reciprocal of their sum (as PyTorch). With `avg`, also adds the weights
/// divided by `heads` to it: the average over the heads that
/// need_weights returns.
inline void attentionWeights(float *row, int64_t n, float *avg, int64_t heads) {
  softmaxRow(row, row, n);
  if (avg)
    for (int64_t j = 0; j < n; ++j)
      avg[j] += row[j] / float(heads);
}

} // namespace kc::rt
