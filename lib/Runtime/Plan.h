//===- Plan.h - main compiled at one input-shape signature ------*- C++ -*-===//
//
// What CompiledModel (Interpreter.cpp) holds per input-shape signature:
// the schedule, its memory plan and the pool of run states.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Runtime/Interpreter.h"
#include "kc/Runtime/Schedule.h"
#include "kc/Runtime/WeightCache.h"
#include "BufferPool.h"

#include <memory>
#include <mutex>
#include <vector>

namespace kc::rt {

/// main compiled at one input-shape signature: the schedule and its memory
/// plan, shared by every run at those shapes, and the pool of run states.
struct Plan {
  ModulePtr module; ///< the module the schedule was built from
  std::shared_ptr<WeightCache> weights; ///< the model's, shared with its other plans
  Schedule schedule;
  // The memory plan: each arena value's offset, the arena's and the
  // workspace's sizes.
  std::vector<size_t> offsets;
  size_t arenaBytes = 0, unplanned = 0, workspaceBytes = 0;
  CompileOptions opts;
  int threads = 1; ///< the most threads kernels' scratch is sized for
  /// The outputs an f16 model gives in f16, computed in f32 (WidenHalf.h).
  std::vector<bool> halfOutputs;
  /// Per entry of schedule.outputs: its step writes it straight into the
  /// tensor the run returns (an arena value, listed once), rather than into
  /// the arena and copied.
  std::vector<bool> writtenInPlace;

  /// What a run writes: one tensor per value (bound to the arena it holds
  /// during the run), the time of each step. Each concurrent run has its
  /// own, taken from a pool: runs in turn reuse one, so the steady state
  /// allocates nothing.
  struct RunState {
    BufferPool::Buffer memory;   ///< the arena, then the workspace; held while running
    const void *boundTo = nullptr; ///< the arena `bound` views
    std::vector<Tensor> bound;
    std::vector<double> stepMs;
    int64_t runs = 0;
  };
  std::shared_ptr<BufferPool> buffers; ///< the model's, shared with its other plans
  mutable std::mutex poolMutex;
  std::vector<std::unique_ptr<RunState>> states; ///< every state made, for profiles
  std::vector<RunState *> idle;                  ///< those no run holds

  static llvm::Expected<std::shared_ptr<Plan>> build(ModulePtr m, const CompileOptions &opts,
                                                     int threads,
                                                     std::shared_ptr<WeightCache> weights,
                                                     std::shared_ptr<BufferPool> buffers);
  llvm::Error plan();
  llvm::Error checkMemory(llvm::ArrayRef<int> defStep) const;
  llvm::Expected<RunState *> acquire();
  void release(RunState *s);
  llvm::Expected<std::vector<Tensor>> runOn(RunState &R, llvm::ArrayRef<Tensor> inputs);
  llvm::Error takeMemory(RunState &s) const;
  size_t workspaceOffset() const { return (arenaBytes + 63) / 64 * 64; }
  std::vector<OpProfile> profile() const;
  void clearProfile();
};

} // namespace kc::rt
