//===- kc/IR/OpCost.h - Floating-point operations of a call -----*- C++ -*-===//
///
/// \file
/// How many floating-point operations one call performs, computed from its
/// typed arguments, result and attributes by a cost rule per op, kept beside
/// the op registry (lib/IR/ops/OpCosts.cpp). A multiply-add counts 2; the
/// conventions for each kind of op are in docs/ops.md. `kc-run --profile`
/// divides them by each op's time, `kc-opt --summary` adds them up.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"

#include <optional>

namespace kc {

class OpDef;

/// FLOPs of `call` (an op, an expression function, or the sum over a fused
/// group's calls), or nullopt when a type it needs is unknown or dynamic, or
/// the op has no cost rule. `m` holds the functions calls name.
std::optional<double> flopCount(const CallNode &call, const Module &m);

/// The FLOPs of two calls run as one, known when both are.
inline std::optional<double> plusFlops(std::optional<double> a, std::optional<double> b) {
  return a && b ? std::optional<double>(*a + *b) : std::nullopt;
}

/// Whether calls of `op` have a cost rule (every registered op does).
bool hasCostRule(const OpDef &op);

} // namespace kc
