//===- Parallel.h - Sharing a kernel's work over the threads ----*- C++ -*-===//
//
// Kernels share their loops over OpenMP's threads, but only when the work
// pays for waking them; serial work runs as a plain loop rather than as a
// region of one thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <omp.h>

namespace kc::rt {

/// Whether to share work over the OpenMP threads: `worthIt` holds, there
/// is more than one thread and no region is running already. Serial work
/// must not enter a region at all: a region of one thread (an `if` clause
/// that is false) still ends in a futex system call, 55 per run of
/// tiny_transformer, ~12 % of its time.
inline bool useThreads(bool worthIt = true) {
  return worthIt && omp_get_max_threads() > 1 && !omp_in_parallel();
}

/// body(i) for i in [0, n): statically shared over the threads when
/// useThreads(worthIt), else a plain loop on the calling thread.
template <class Body> void parallelFor(int64_t n, bool worthIt, Body &&body) {
  if (n > 1 && useThreads(worthIt)) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i)
      body(i);
  } else {
    for (int64_t i = 0; i < n; ++i)
      body(i);
  }
}

/// f() on every thread of a team when useThreads(worthIt), else once on the
/// calling thread; worksharing loops (`omp for`) inside f share out their
/// iterations accordingly.
template <class F> void parallelRegion(bool worthIt, F &&f) {
  if (useThreads(worthIt)) {
#pragma omp parallel
    f();
  } else {
    f();
  }
}

} // namespace kc::rt
