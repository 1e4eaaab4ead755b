//===- BufferPool.h - Activation memory shared by a model's plans -*- C++ -*-===//
//
// Each run needs its plan's activation memory (the arena and the kernels'
// workspace) for its duration only. The plans of one model take it from one
// pool and give it back after the run: plans at shapes that take turns
// share one buffer, made for the largest of them, rather than each holding
// its own, and a new shape no larger than one seen before maps no new memory
// (on the machines kc is measured on, mapping fresh memory costs about as
// much as a run). Concurrent runs each hold a buffer of their own.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Runtime/Tensor.h"

#include <memory>
#include <mutex>
#include <vector>

namespace kc::rt {

class BufferPool {
public:
  struct Buffer {
    std::shared_ptr<void> memory;
    size_t bytes = 0;
  };

  /// The smallest idle buffer of at least `bytes`, else a new one of
  /// exactly that size (zeroed), the smaller idle ones let go first.
  /// Throws std::bad_alloc.
  Buffer take(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      size_t best = idle_.size();
      for (size_t i = 0; i < idle_.size(); ++i)
        if (idle_[i].bytes >= bytes && (best == idle_.size() || idle_[i].bytes < idle_[best].bytes))
          best = i;
      if (best != idle_.size()) {
        Buffer b = std::move(idle_[best]);
        idle_.erase(idle_.begin() + long(best));
        return b;
      }
      // Every idle buffer is smaller: the new one serves whatever they
      // would, and unmapping them first lets the kernel hand their pages
      // to it (on a virtual machine memory it recycles maps ~25x faster
      // than memory the guest has not touched).
      idle_.clear();
    }
    return Buffer{alignedAlloc(bytes), bytes};
  }

  /// Gives `b` back. Past kMaxIdle idle buffers the smallest is let go:
  /// shapes that grow leave smaller buffers that would never fit again.
  void give(Buffer b) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (idle_.capacity() < kMaxIdle + 1)
      idle_.reserve(kMaxIdle + 1); // once: giving back then never allocates
    idle_.push_back(std::move(b));
    if (idle_.size() > kMaxIdle) {
      auto smallest = std::min_element(idle_.begin(), idle_.end(), [](const Buffer &x,
                                                                       const Buffer &y) {
        return x.bytes < y.bytes;
      });
      idle_.erase(smallest);
    }
  }

private:
  static constexpr size_t kMaxIdle = 8;
  std::mutex mutex_;
  std::vector<Buffer> idle_;
};

} // namespace kc::rt
