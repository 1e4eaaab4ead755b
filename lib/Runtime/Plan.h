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

  /// What a run writes: the arena, the kernels' workspace, one tensor per
  /// value (rebound each run), the time of each step. Each concurrent run
  /// has its own, taken from a pool: runs in turn reuse one, so the steady
  /// state allocates nothing.
  struct RunState {
    std::shared_ptr<void> arena, workspace;
    std::vector<Tensor> bound;
    std::vector<double> stepMs;
    int64_t runs = 0;
  };
  mutable std::mutex poolMutex;
  std::vector<std::unique_ptr<RunState>> states; ///< every state made, for profiles
  std::vector<RunState *> idle;                  ///< those no run holds

  static llvm::Expected<std::shared_ptr<Plan>>
  build(ModulePtr m, const CompileOptions &opts, int threads, std::shared_ptr<WeightCache> weights);
  llvm::Error plan();
  llvm::Error checkMemory(llvm::ArrayRef<int> defStep) const;
  llvm::Expected<RunState *> acquire();
  void release(RunState *s);
  llvm::Expected<std::vector<Tensor>> runOn(RunState &R, llvm::ArrayRef<Tensor> inputs);
  llvm::Expected<std::unique_ptr<RunState>> allocate() const;
  std::vector<OpProfile> profile() const;
};

} // namespace kc::rt
