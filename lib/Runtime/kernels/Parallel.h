//===- Parallel.h - Sharing a kernel's work over the threads ----*- C++ -*-===//
//
// Kernels share their loops over OpenMP's threads, but only when the work
// pays for waking them; serial work runs as a plain loop rather than as a
// region of one thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
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

/// The team useThreads(worthIt) allows, at most maxThreads (0: any): the
/// threads a kernel's per-thread scratch was sized for.
inline int teamSize(bool worthIt, int maxThreads) {
  if (!useThreads(worthIt))
    return 1;
  int t = omp_get_max_threads();
  return maxThreads > 0 && maxThreads < t ? maxThreads : t;
}

namespace detail {
/// Whether this thread is running in a team kc opened: set for its
/// threads by OwnTeam while they run a region's body.
inline thread_local bool inOwnTeam = false;
} // namespace detail

/// Marks the calling thread as one of a team kc opened, for the scope.
class OwnTeam {
public:
  OwnTeam() : saved_(detail::inOwnTeam) { detail::inOwnTeam = true; }
  ~OwnTeam() { detail::inOwnTeam = saved_; }
  OwnTeam(const OwnTeam &) = delete;
  OwnTeam &operator=(const OwnTeam &) = delete;

private:
  bool saved_;
};

/// f() on the calling thread as a team of one of its own, inside any
/// parallel region: for a team's body that calls code sharing its loops
/// out with `omp for`, which would otherwise bind to the enclosing team.
template <class F> void alone(F &&f) {
  if (!omp_in_parallel())
    return f();
#pragma omp parallel num_threads(1)
  {
    OwnTeam own;
    f();
  }
}

/// f() on the calling thread. Inside a parallel region of the caller's
/// (an application running models from its own OpenMP threads), f runs
/// alone: kernels index per-thread scratch by omp_get_thread_num() and
/// share loops with `omp for`, which there would take the caller's thread
/// number (past the scratch kc sized) and share the loop out among the
/// caller's threads.
template <class F> void onThisThread(F &&f) {
  if (detail::inOwnTeam)
    return f();
  alone(f);
}

/// body(i) for i in [0, n): statically shared over a team of
/// teamSize(worthIt, maxThreads) threads, or a plain loop on the calling
/// thread.
template <class Body> void parallelFor(int64_t n, bool worthIt, Body &&body, int maxThreads = 0) {
  int team = n > 1 ? teamSize(worthIt, maxThreads) : 1;
  if (team > 1) {
#pragma omp parallel num_threads(team)
    {
      OwnTeam own;
#pragma omp for schedule(static)
      for (int64_t i = 0; i < n; ++i)
        body(i);
    }
  } else {
    onThisThread([&] {
      for (int64_t i = 0; i < n; ++i)
        body(i);
    });
  }
}

/// f() on every thread of a team of teamSize(worthIt, maxThreads), or once
/// on the calling thread; worksharing loops (`omp for`) inside f share out
/// their iterations accordingly.
template <class F> void parallelRegion(bool worthIt, int maxThreads, F &&f) {
  int team = teamSize(worthIt, maxThreads);
  if (team > 1) {
#pragma omp parallel num_threads(team)
    {
      OwnTeam own;
      f();
    }
  } else {
    onThisThread(f);
  }
}

/// Scratch a kernel needs on each of `threads` threads, in one planned
/// buffer: slices of `floats` rounded up to whole cache lines, so that two
/// threads never write one line.
inline int64_t perThreadFloats(int64_t floats) { return (floats + 15) / 16 * 16; }

/// A kernel's per-thread scratch in the planned workspace: `floats` floats
/// for each of the `threads` threads it was built for.
struct ThreadScratch {
  int64_t floats = 0;
  int threads = omp_get_max_threads();

  /// What the kernel's workspaceBytes() reports for it.
  size_t bytes() const { return size_t(threads) * size_t(perThreadFloats(floats)) * sizeof(float); }
};

/// body(i, slice) for i in [0, n), shared as parallelFor(n, worthIt) over
/// at most s.threads threads; slice is the calling thread's s.floats floats
/// of `workspace`.
template <class Body>
void parallelForScratch(int64_t n, bool worthIt, const ThreadScratch &s, void *workspace,
                        Body &&body) {
  parallelRegion(worthIt && n > 1, s.threads, [&] {
    float *slice =
        static_cast<float *>(workspace) + omp_get_thread_num() * perThreadFloats(s.floats);
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; ++i)
      body(i, slice);
  });
}

} // namespace kc::rt
