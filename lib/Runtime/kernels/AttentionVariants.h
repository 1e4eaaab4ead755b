//===- AttentionVariants.h - The general nn.MultiheadAttention --*- C++ -*-===//
#pragma once

#include "CallInfo.h"

namespace kc::rt {

/// True if `c` uses what the fast kernel of Attention.cpp leaves out:
/// masks, kdim/vdim, add_bias_kv, add_zero_attn, an unbatched query.
bool isAttentionVariant(const CallNode &c);

/// The general nn.MultiheadAttention kernel for those calls.
llvm::Expected<std::unique_ptr<OpKernel>> makeAttentionVariant(const CallNode &c,
                                                               const KernelBuildContext &ctx);

} // namespace kc::rt
