//===- kc/Runtime/Schedule.h - Kernels bound to a module's calls -*- C++ -*-===//
///
/// \file
/// The schedule step of compiling a module: given `main`'s calls in an
/// order where every operand comes before its reader, it binds one kernel
/// per call (weights taken then), folds activations into the epilogue of
/// the kernel they read, lets a kernel absorb its only reader, and makes
/// reshape-like ops aliases. What it builds is read-only afterwards and
/// shared by every run; the memory plan and each run's buffers are the
/// interpreter's.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"
#include "kc/Runtime/OpKernel.h"
#include "kc/Runtime/Tensor.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kc::rt {

/// Where a value's bytes live.
struct ScheduleValue {
  enum Kind : uint8_t { Input, Constant, Arena, Alias } kind = Arena;
  DType dtype = DType::F32;
  Shape shape;
  size_t bytes = 0;
  unsigned input = 0;   ///< Input: parameter index
  Tensor constant;      ///< Constant: the materialized tensor
  unsigned aliasOf = 0; ///< Alias: the value whose bytes these are (never an alias)
  size_t aliasOffset = 0; ///< Alias: where in aliasOf's bytes these start
};

/// One kernel run: reads values `inputs`, writes values `outputs`.
struct ScheduleStep {
  std::unique_ptr<OpKernel> kernel;
  std::vector<unsigned> inputs, outputs;
  std::string op, name; ///< ops folded into the step joined by '+'
  SourceLoc loc;
  std::optional<double> flops; ///< of every op the step runs, when counted and known
};

struct TensorSpec {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
};

struct Schedule {
  std::vector<ScheduleValue> values;
  std::vector<ScheduleStep> steps;
  std::vector<unsigned> outputs; ///< main's results, in order
  std::vector<TensorSpec> inputSpecs, outputSpecs;

  /// The value whose bytes value v uses (v itself unless an alias).
  unsigned root(unsigned v) const {
    while (values[v].kind == ScheduleValue::Alias)
      v = values[v].aliasOf;
    return v;
  }
};

struct ScheduleOptions {
  int numThreads = 1;
  /// Fold activations into their producer, and let kernels absorb their
  /// only reader.
  bool fuse = true;
  /// Count each step's FLOPs (a walk of each expression: for profiles).
  bool countFlops = false;
};

/// The schedule of `m`'s main, whose body's nodes `order` lists with every
/// operand before its readers.
llvm::Expected<Schedule> buildSchedule(const Module &m, llvm::ArrayRef<Expr> order,
                                       const ScheduleOptions &opts);

/// Lets the producers of a concatenation's pieces write them into its
/// result, and drops its step, where the pieces lie end to end in the
/// result (ConcatInPlace.cpp).
void placeConcatenations(Schedule &s);

/// The activation an op applies, if it is one a producer can fuse.
std::optional<Activation> fusableActivation(const CallNode &c);

} // namespace kc::rt
