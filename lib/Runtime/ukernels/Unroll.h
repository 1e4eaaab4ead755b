//===- Unroll.h - Helpers of the micro-kernel templates ---------*- C++ -*-===//
//
// Included by each per-ISA file inside its own namespace (KC_UK_ISA), like
// every micro-kernel template: whatever the compiler emits out of line from
// here carries the ISA in its name, so the linker can never hand code
// compiled for one instruction set to a caller built for another. The
// helpers are force-inlined all the same, and nothing here calls the
// standard library's templates (std::min, std::copy), whose instantiations
// would be shared by name across files.
//
//===----------------------------------------------------------------------===//
#pragma once

#ifndef KC_UK_ISA
#error "micro-kernel templates are included from a per-ISA file that defines KC_UK_ISA"
#endif

#include <cstdint>
#include <utility>

#define KC_UK_INLINE inline __attribute__((always_inline))
/// The same for a lambda (after its parameters): GCC leaves a large one
/// out of line, and the accumulators it reads then go through memory.
#define KC_UK_INLINE_LAMBDA __attribute__((always_inline))

namespace kc::uk::KC_UK_ISA {

template <class F, int... I>
KC_UK_INLINE void unrollEach(F &&f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>()), ...);
}

/// f(0), f(1), ..., f(N - 1), each index a compile-time constant: arrays of
/// accumulators indexed so stay in registers (indexed in a loop, GCC keeps
/// them on the stack).
template <int N, class F> KC_UK_INLINE void unroll(F &&f) {
  unrollEach(f, std::make_integer_sequence<int, N>());
}

/// f(std::integral_constant<int, n>) for a run-time n in [1, Max]: a
/// block's width as a template argument.
template <int Max, class F> KC_UK_INLINE void withWidth(int64_t n, F &&f) {
  unroll<Max>([&](auto i) {
    if (n == i + 1)
      f(std::integral_constant<int, decltype(i)::value + 1>());
  });
}

/// Stores vector v at p whole, or else only its first n lanes through a
/// buffer (masked stores are slow on some cores). T: the vector traits.
template <class T, class V> KC_UK_INLINE void storeFirst(float *p, V v, bool whole, int64_t n) {
  if (whole) {
    T::store(p, v);
    return;
  }
  alignas(64) float lanes[T::kLanes];
  T::store(lanes, v);
  for (int64_t i = 0; i < n; ++i)
    p[i] = lanes[i];
}

template <class T> KC_UK_INLINE T minOf(T a, T b) { return b < a ? b : a; }
template <class T> KC_UK_INLINE T maxOf(T a, T b) { return a < b ? b : a; }

} // namespace kc::uk::KC_UK_ISA
