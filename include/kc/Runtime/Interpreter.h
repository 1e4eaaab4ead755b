//===- kc/Runtime/Interpreter.h - Executes a module --------------*- C++ -*-===//
///
/// \file
/// Compiles `main` of a typed Module into a flat schedule: a topological
/// order computed once (iteratively), one kernel per call bound at load time
/// (weights packed then), reshape-like ops as aliases, and a memory plan
/// that places every intermediate in one arena, reusing a buffer once its
/// last reader has run. `run` then executes the schedule without touching
/// the heap except for the returned outputs.
///
/// Shapes: a schedule and its memory plan hold for one input-shape
/// signature. `compile` makes the plan at the shapes `main` declares (none
/// when it has `?` dims); `run` on inputs of other shapes (same element
/// types and ranks) makes a plan for them on first use, with every type
/// inferred again from the inputs (kc/IR/Specialize.h), and keeps the most
/// recent few, so a repeated shape never compiles again.
///
/// Threads: `run` may be called from any number of threads at once on one
/// CompiledModel. The kernels, their packed weights and the schedule are
/// shared and only read; each run gets its own activations and scratch from
/// a pool (a new set when every set is busy, reused afterwards, so the
/// steady state allocates nothing but the outputs). A run sets the OpenMP
/// thread count of the thread that calls it for its own extent only.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"
#include "kc/Runtime/OpKernel.h"
#include "kc/Runtime/Schedule.h"
#include "kc/Runtime/Tensor.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kc::rt {

struct CompileOptions {
  /// Threads for kernels and BLAS; 0 keeps the current setting. Set on the
  /// thread that compiles and, when it differs, on the thread that runs.
  int numThreads = 0;
  /// Record the time of every step (see CompiledModel::profile()).
  bool profile = false;
  /// Check every step's outputs for NaN and fail naming the op.
  bool checkNan = false;
  /// Let convolutions and linear layers apply a following activation.
  bool fuseActivations = true;
  /// Most bytes the activation arena plus kernel scratch may take; 0 means
  /// the machine's physical memory. A model over it fails to compile with an
  /// error naming its largest buffer, instead of failing to allocate.
  size_t maxMemoryBytes = 0;
};

/// Options of one run.
struct RunOptions {
  /// Threads for this run's kernels: 0 is the count the model was compiled
  /// for, which is also the most a run can use (kernels' scratch is sized
  /// for it).
  int numThreads = 0;
};

struct OpProfile {
  std::string op, name;
  /// Shapes of the step's inputs and outputs, e.g. `f32[1,3,32,32]`, comma-separated.
  std::string inputShapes, outputShapes;
  double totalMs = 0;
  int64_t calls = 0;
  /// Floating-point operations of one call (kc/IR/OpCost.h), when known
  /// and the model was compiled with CompileOptions::profile.
  std::optional<double> flops;
  /// Bytes of the step's inputs and outputs, each counted once a call: the
  /// least memory traffic of a call, for a rate of memory-bound kernels.
  double bytes = 0;
};

class CompiledModel {
public:
  ~CompiledModel();
  static llvm::Expected<std::unique_ptr<CompiledModel>> compile(const Module &m,
                                                                const CompileOptions &opts = {});

  /// Runs on `inputs`; returns the outputs in order, each in its own
  /// buffer. Inputs need inputSpecs()'s element types and ranks; other
  /// sizes than the declared ones run on a plan made for them (an error
  /// names the op that cannot take them). Safe to call concurrently; the
  /// inputs are not referenced after it returns.
  llvm::Expected<std::vector<Tensor>> run(llvm::ArrayRef<Tensor> inputs,
                                          const RunOptions &opts = {});

  /// The inputs and outputs as `main` declares them (-1 for a `?` dim).
  llvm::ArrayRef<TensorSpec> inputSpecs() const;
  llvm::ArrayRef<TensorSpec> outputSpecs() const;
  /// The figures below are those of the plan last run (before any run, of
  /// the plan at the declared shapes; 0 without one).
  /// Bytes of the activation arena: the peak memory of intermediates.
  size_t arenaBytes() const;
  /// Sum of the intermediate sizes: what the arena would be without reuse.
  size_t unplannedBytes() const;
  size_t workspaceBytes() const;
  size_t numSteps() const;
  /// Plans compiled so far: the declared shapes' and one per other
  /// input-shape signature run (at most a few are kept).
  size_t numPlans() const;
  /// Weights prepared (packed, transformed) so far, by any plan: each is
  /// prepared once per model and shared by the plans that take it in the
  /// same layout.
  size_t preparedWeights() const;
  /// Per-op shapes, FLOPs and time accumulated over the runs so far (with
  /// CompileOptions::profile), sorted by time. Read it while no run is in
  /// flight: the times of a run in progress are being written.
  std::vector<OpProfile> profile() const;
  /// Forgets the times accumulated so far, in every plan: a profile of the
  /// steady state leaves out the first run (which packs weights) and the
  /// warm-up runs. Call it while no run is in flight.
  void clearProfile();

private:
  CompiledModel();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Sets the threads used by kernels (OpenMP) and by OpenBLAS.
void setNumThreads(int n);

} // namespace kc::rt
