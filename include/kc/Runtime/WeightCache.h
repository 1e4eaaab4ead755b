//===- kc/Runtime/WeightCache.h - Prepared weights shared by plans -*- C++ -*-===//
///
/// \file
/// A model run at several input shapes has one plan, and one set of
/// kernels, per shape. What kernels prepare from a weight (panels and
/// strips for the GEMM kernels, Winograd's transformed filters) depends on
/// the weight and the layout only, so the plans of one model share it: the
/// first plan to run prepares a weight, every other plan takes that tensor.
/// A weight is known by the bytes the model holds it in (the constant's
/// TensorData, which every plan's kernels read; the cache holds a weak
/// reference, so a freed weight's address reused by another is another key)
/// and the layout's name.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/Runtime/Tensor.h"

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace kc::rt {

class WeightCache {
public:
  /// The tensor `make()` returns for `weight` in layout `layout`, made once
  /// per model (concurrent callers wait for the first).
  template <class F>
  Tensor get(const std::shared_ptr<const void> &weight, const std::string &layout, F &&make) {
    std::shared_ptr<Entry> e;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto &slot = entries_[Key{weight, layout}];
      if (!slot)
        slot = std::make_shared<Entry>();
      e = slot;
    }
    std::call_once(e->once, [&] { e->tensor = make(); });
    return e->tensor;
  }

  /// Whether `weight` has been prepared (or is being prepared) in
  /// `layout`: a kernel that could use either of two layouts takes the
  /// one another plan already made.
  bool has(const std::shared_ptr<const void> &weight, const std::string &layout) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.count(Key{weight, layout}) != 0;
  }

  /// Weights prepared so far.
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
  }

  /// The cache of the plan whose kernels this thread is building, or null:
  /// kernels take it when they are made (PreparedWeight).
  static WeightCache *building() { return building_; }
  /// Makes `cache` the one kernels built on this thread take, for its extent.
  class Building {
  public:
    explicit Building(WeightCache *cache) : saved_(building_) { building_ = cache; }
    ~Building() { building_ = saved_; }
    Building(const Building &) = delete;
    Building &operator=(const Building &) = delete;

  private:
    WeightCache *saved_;
  };

private:
  struct Entry {
    std::once_flag once;
    Tensor tensor;
  };
  struct Key {
    std::weak_ptr<const void> weight;
    std::string layout;
  };
  struct KeyLess {
    bool operator()(const Key &a, const Key &b) const {
      if (a.weight.owner_before(b.weight))
        return true;
      if (b.weight.owner_before(a.weight))
        return false;
      return a.layout < b.layout;
    }
  };
  mutable std::mutex mutex_;
  std::map<Key, std::shared_ptr<Entry>, KeyLess> entries_;
  static thread_local WeightCache *building_;
};

} // namespace kc::rt
