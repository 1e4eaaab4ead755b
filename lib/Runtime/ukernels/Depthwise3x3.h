//===- Depthwise3x3.h - f32_dwconv3x3: 3x3 depthwise planes -----*- C++ -*-===//
//
// Three loops for one channel plane of a 3x3 depthwise layer (dilation 1,
// stride 1 or 2), each summing the nine taps in registers and writing each
// output once, ReLU and ReLU6 applied as a clamp in the same loop:
//
// - masked: a vector of outputs a step, rows outside the plane read as
//   zeros and the loads of a step that leaves the row masked to the lanes
//   inside it, so edges need neither scalar sums nor a padded copy, at any
//   padding. Where masks are fast (16 lanes, or 8 for short rows). With
//   padding up to 2 it slides instead (dwSlide): several output rows a
//   pass, each input row loaded once a vector at a time and its taps made
//   by lane shifts.
// - pad1: padding 1 read in place; the first output of a row (and the last
//   at stride 1) sums its taps one by one. On large planes the padded copy
//   cost as much as the arithmetic.
// - padded: from a zero-padded copy of the plane; a row ends with a step
//   that overlaps the one before it, a row shorter than a vector stores
//   whole vectors into the rows computed after it (masked stores are slow
//   on some cores).
//
// At stride 2 a tap's even and odd columns are split out of two vectors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "MicroKernels.h"
#include "Unroll.h"
#include "VecMath.h"

namespace kc::uk::KC_UK_ISA {

/// acc plus a vector of outputs of the 3x3 kernel at stride S on a row
/// triple, the first output's taps at columns col, col + 1, col + 2.
/// With Masked, load j reads only the lanes of m[j]; two accumulators
/// halve the chain of dependent multiply-adds. Loads are at offsets 0, 1,
/// 2 (stride 1) or 0, L, 2, L + 2 (stride 2).
template <class T, int S, bool Masked, bool TwoChains>
KC_UK_INLINE typename T::V dwTaps(const float *const r[3], int64_t col, const typename T::V w[9],
                                  const void *masks, typename T::V acc) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  constexpr int kLoads = S == 1 ? 3 : 4;
  constexpr int64_t kOffset[4] = {0, S == 1 ? 1 : L, 2, L + 2};
  V acc2 = T::zero();
  V &mid = TwoChains ? acc2 : acc;
  for (int i = 0; i < 3; ++i) {
    const float *p = r[i] + col;
    V v[4];
    for (int j = 0; j < kLoads; ++j) {
      if constexpr (Masked)
        v[j] = T::maskLoad(static_cast<const typename T::Mask *>(masks)[j], p + kOffset[j]);
      else
        v[j] = T::load(p + kOffset[j]);
    }
    if constexpr (S == 1) {
      acc = T::fma(w[3 * i], v[0], acc);
      mid = T::fma(w[3 * i + 1], v[1], mid);
      acc = T::fma(w[3 * i + 2], v[2], acc);
    } else {
      acc = T::fma(w[3 * i], T::evenLanes(v[0], v[1]), acc);
      mid = T::fma(w[3 * i + 1], T::oddLanes(v[0], v[1]), mid);
      acc = T::fma(w[3 * i + 2], T::evenLanes(v[2], v[3]), acc);
    }
  }
  return TwoChains ? T::add(acc, acc2) : acc;
}

template <class T> KC_UK_INLINE void setTaps(typename T::V w[9], const float *k) {
  for (int i = 0; i < 9; ++i)
    w[i] = T::set1(k[i]);
}

/// Columns [c0, c0 + lanes) of a row of W floats, zeros past its end
/// (c0 >= 0).
template <class T> KC_UK_INLINE typename T::V rowColumns(const float *row, int64_t c0, int64_t W) {
  if (c0 + T::kLanes <= W)
    return T::load(row + c0);
  return T::maskLoad(T::firstLanes(W - c0), row + c0);
}

/// A 3x3 kernel's nine weight vectors for dwSlide, held by value: through
/// a pointer, every store might change them, and each would be loaded
/// again.
template <class T> struct RegisterTaps {
  typename T::V w[9];
  KC_UK_INLINE typename T::V operator()(int i) const { return w[i]; }
};

/// Tap j of the sliding loop reads column S·ow + j − PW: phase (j − PW)
/// mod S of its step, shifted by floor((j − PW) / S) lanes into the step
/// before (< 0) or after (> 0).
constexpr int slidePhase(int S, int PW, int j) { return ((j - PW) % S + S) % S; }
constexpr int slideShift(int S, int PW, int j) { return (j - PW - slidePhase(S, PW, j)) / S; }

/// The rows dwSlide reads and the outputs it writes: one channel plane.
template <class T> struct OnePlane {
  using V = typename T::V;
  using Row = const float *;
  const float *src;
  float *dst;
  int64_t H, W, OW;

  int64_t steps() const { return (OW + T::kLanes - 1) / T::kLanes; }
  /// Input row ih, a row of zeros outside the plane.
  Row row(int64_t ih) const { return ih >= 0 && ih < H ? src + ih * W : zeroRow() + 32; }
  V columns(Row r, int64_t c0) const { return rowColumns<T>(r, c0, W); }
  void store(int64_t oh, int64_t ow0, V v) const {
    float *out = dst + oh * OW + ow0;
    if (ow0 + T::kLanes <= OW)
      T::store(out, v);
    else
      T::maskStore(out, T::firstLanes(OW - ow0), v);
  }
};

/// The sliding loop of a KxK kernel (K of 3 or 5, padding PW of 0 to
/// K − 1 columns, each tap within a step of its output's vector): R output
/// rows a pass, the input rows read once each, a vector at a time, and
/// every tap's columns made from the vectors in registers by lane shifts
/// instead of loaded again at offsets 1, 2, ... (most such loads cross a
/// cache line). At stride 2 a row's vectors are split into even and odd
/// columns once, and a tap is the even or odd vector shifted. Steps of L
/// outputs: phase vector q of step t holds columns S·t·L + S·l + q. The
/// weight of tap (kh, kw) is weight(kh·K + kw); `planes` reads and writes
/// (OnePlane).
template <class T, int S, int K, int PW, int R, class Planes, class Weight>
void dwSlide(const Planes &planes, int64_t OH, int64_t PH, Weight weight, typename T::V vb,
             typename T::V vlo, typename T::V vhi) {
  using V = typename T::V;
  using Row = typename Planes::Row;
  constexpr int L = T::kLanes;
  // Fewer than three rows a pass: the middle taps on a second chain.
  constexpr bool kTwoChains = R < 3;
  constexpr int kFirstShift = slideShift(S, PW, 0), kLastShift = slideShift(S, PW, K - 1);
  static_assert(kFirstShift > -L && kLastShift < L, "a tap beyond the steps either side");
  // Vectors carried from step to step.
  constexpr bool needPrev = kFirstShift < 0;
  constexpr bool needNext = kLastShift > 0;
  // Output row oh0 + r reads input rows S·(oh0 + r) − PH + kh; a pass reads
  // rows S·oh0 − PH + i, i < kIn.
  constexpr int kIn = S * (R - 1) + K;
  const int64_t steps = planes.steps();
  auto phases = [&](Row row, int64_t t, V ph[S]) {
    if constexpr (S == 1) {
      ph[0] = planes.columns(row, t * L);
    } else {
      V a = planes.columns(row, 2 * t * L), c = planes.columns(row, 2 * t * L + L);
      ph[0] = T::evenLanes(a, c), ph[1] = T::oddLanes(a, c);
    }
  };
  for (int64_t oh0 = 0; oh0 < OH; oh0 += R) {
    Row rows[kIn];
    for (int i = 0; i < kIn; ++i)
      rows[i] = planes.row(S * oh0 - PH + i);
    V prev[kIn][S], cur[kIn][S];
    unroll<kIn>([&](auto i) {
      for (int q = 0; q < S; ++q)
        prev[i][q] = T::zero();
      if constexpr (needNext)
        phases(rows[i], 0, cur[i]);
    });
    const int outRows = int(minOf<int64_t>(R, OH - oh0));
    for (int64_t t = 0; t < steps; ++t) {
      V acc[R], mid[R];
      unroll<R>([&](auto r) { acc[r] = vb, mid[r] = T::zero(); });
      unroll<kIn>([&](auto i) {
        V here[S], next[S];
        if constexpr (needNext) {
          for (int q = 0; q < S; ++q)
            here[q] = cur[i][q];
          phases(rows[i], t + 1, next);
        } else {
          phases(rows[i], t, here);
          for (int q = 0; q < S; ++q)
            next[q] = T::zero();
        }
        V tap[K];
        unroll<K>([&](auto j) {
          constexpr int q = slidePhase(S, PW, j), sh = slideShift(S, PW, j);
          if constexpr (sh < 0)
            tap[j] = T::template alignr<L + sh>(here[q], prev[i][q]);
          else if constexpr (sh == 0)
            tap[j] = here[q];
          else
            tap[j] = T::template alignr<sh>(next[q], here[q]);
        });
        unroll<R>([&](auto r) {
          constexpr int kh = int(i) - S * int(r);
          if constexpr (kh >= 0 && kh < K) {
            unroll<K>([&](auto j) {
              V &chain = kTwoChains && j % 2 == 1 ? mid[r] : acc[r];
              chain = T::fma(weight(kh * K + int(j)), tap[j], chain);
            });
          }
        });
        for (int q = 0; q < S; ++q) {
          if constexpr (needPrev)
            prev[i][q] = here[q];
          if constexpr (needNext)
            cur[i][q] = next[q];
        }
      });
      unroll<R>([&](auto r) {
        if (int(r) < outRows)
          planes.store(oh0 + r, t * L,
                       vclamp<T>(kTwoChains ? T::add(acc[r], mid[r]) : acc[r], vlo, vhi));
      });
    }
  }
}

/// DepthwiseMaskedFn at stride S.
template <class T, int S>
void f32_dwconv3x3_masked(const float *src, float *dst, int64_t H, int64_t W, int64_t OH,
                          int64_t OW, int64_t PH, int64_t PW, const float *k, float b,
                          const DepthwiseClamp &e) {
  using V = typename T::V;
  using Mask = typename T::Mask;
  constexpr int L = T::kLanes;
  RegisterTaps<T> weight;
  const V *w = weight.w;
  setTaps<T>(weight.w, k);
  const V vb = T::set1(b), vlo = T::set1(e.lo), vhi = T::set1(e.hi);
  // Rows a pass: the most before registers run out at stride 1; stride 2
  // gains nothing past two (docs/performance.md).
  constexpr int R = S == 1 ? 4 : 2;
  const OnePlane<T> plane{src, dst, H, W, OW};
  if (PW == 1)
    return dwSlide<T, S, 3, 1, R>(plane, OH, PH, weight, vb, vlo, vhi);
  if (PW == 0)
    return dwSlide<T, S, 3, 0, R>(plane, OH, PH, weight, vb, vlo, vhi);
  if (PW == 2)
    return dwSlide<T, S, 3, 2, R>(plane, OH, PH, weight, vb, vlo, vhi);
  constexpr int64_t kReach = (S == 1 ? 2 : L + 2) + L; // columns a step's loads span
  // Each step's load masks, the same on every row; a step whose loads all
  // lie inside the row is marked and runs unmasked.
  constexpr int64_t kMaxSteps = (kDepthwiseMaxWidth + L - 1) / L;
  Mask masks[kMaxSteps][4];
  bool inside[kMaxSteps];
  auto lanesInside = [](int64_t c0, int64_t width) {
    Mask m = T::firstLanes(width - c0);
    return c0 < 0 ? T::andNot(m, T::firstLanes(-c0)) : m;
  };
  int64_t steps = (OW + L - 1) / L;
  for (int64_t t = 0; t < steps; ++t) {
    int64_t c0 = t * L * S - PW;
    inside[t] = c0 >= 0 && c0 + kReach <= W;
    masks[t][0] = lanesInside(c0, W), masks[t][1] = lanesInside(c0 + (S == 1 ? 1 : L), W);
    masks[t][2] = lanesInside(c0 + 2, W), masks[t][3] = lanesInside(c0 + L + 2, W);
  }
  for (int64_t oh = 0; oh < OH; ++oh) {
    const float *r[3];
    for (int i = 0; i < 3; ++i) {
      int64_t ih = oh * S - PH + i;
      // The zero row is read from column c0 >= -PW: point 32 floats in.
      r[i] = ih >= 0 && ih < H ? src + ih * W : zeroRow() + 32;
    }
    float *row = dst + oh * OW;
    for (int64_t t = 0; t < steps; ++t) {
      int64_t ow0 = t * L, c0 = ow0 * S - PW;
      V acc = inside[t] ? dwTaps<T, S, false, true>(r, c0, w, masks[t], vb)
                        : dwTaps<T, S, true, true>(r, c0, w, masks[t], vb);
      V v = vclamp<T>(acc, vlo, vhi);
      if (ow0 + L <= OW)
        T::store(row + ow0, v);
      else
        T::maskStore(row + ow0, T::firstLanes(OW - ow0), v);
    }
  }
}

/// DepthwiseSlide5Fn at stride S: the sliding loop on 5x5 weights, read
/// as broadcasts (25 of them would take most of the registers), one output
/// row a pass (two to four ran slower; docs/performance.md).
template <class T, int S>
void f32_dwconv5x5_slide(const float *src, float *dst, int64_t H, int64_t W, int64_t OH, int64_t OW,
                         int64_t PH, const float *k, float b, const DepthwiseClamp &e) {
  using V = typename T::V;
  const V vb = T::set1(b), vlo = T::set1(e.lo), vhi = T::set1(e.hi);
  auto weight = [k](int i) { return T::set1(k[i]); };
  dwSlide<T, S, 5, 2, 1>(OnePlane<T>{src, dst, H, W, OW}, OH, PH, weight, vb, vlo, vhi);
}

/// DepthwisePad1Fn at stride S.
template <class T, int S>
void f32_dwconv3x3_pad1(const float *src, float *dst, int64_t H, int64_t W, int64_t OH, int64_t OW,
                        const float *k, float b, const DepthwiseClamp &e) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  const float lo = e.lo, hi = e.hi;
  auto edge = [&](const float *const r[3], int64_t ow) {
    float v = b;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        // A tap on the padding still multiplies (a zero), as PyTorch's
        // does: a NaN or infinite weight makes the output NaN there too.
        int64_t col = S * ow - 1 + j;
        v += k[3 * i + j] * (col >= 0 && col < W ? r[i][col] : 0.f);
      }
    return minOf(maxOf(v, lo), hi);
  };
  // Steps from ow in [1, last - L + 1] keep every tap and every load
  // inside the row (loads reach column ow + L at stride 1, 2 ow + 2 L at
  // stride 2).
  const int64_t last = S == 1 ? W - 2 : (W - 1 - 2 * L) / 2 + L - 1;
  V w[9];
  setTaps<T>(w, k);
  const V vb = T::set1(b), vlo = T::set1(lo), vhi = T::set1(hi);
  for (int64_t oh = 0; oh < OH; ++oh) {
    const float *r[3];
    for (int i = 0; i < 3; ++i) {
      int64_t ih = oh * S - 1 + i;
      r[i] = ih >= 0 && ih < H ? src + ih * W : zeroRow();
    }
    float *row = dst + oh * OW;
    row[0] = edge(r, 0);
    // Steps of L; the last one overlaps the step before it.
    for (int64_t step = 1; step <= last; step += L) {
      int64_t ow = minOf(step, last - L + 1);
      V v = dwTaps<T, S, false, false>(r, S * ow - 1, w, nullptr, vb);
      T::store(row + ow, vclamp<T>(v, vlo, vhi));
    }
    for (int64_t ow = last + 1; ow < OW; ++ow)
      row[ow] = edge(r, ow);
  }
}

/// DepthwisePaddedFn at stride S.
template <class T, int S>
void f32_dwconv3x3_padded(const float *pad, int64_t PWt, float *dst, int64_t OH, int64_t OW,
                          const float *k, float b, const DepthwiseClamp &e) {
  using V = typename T::V;
  constexpr int L = T::kLanes;
  V w[9];
  setTaps<T>(w, k);
  const V vb = T::set1(b), vlo = T::set1(e.lo), vhi = T::set1(e.hi);
  for (int64_t oh = 0; oh < OH; ++oh) {
    const float *rows[3] = {pad + oh * S * PWt, pad + (oh * S + 1) * PWt,
                            pad + (oh * S + 2) * PWt};
    float *row = dst + oh * OW;
    // A row of L or more ends with a step that overlaps the one before it;
    // a shorter row (7x7 planes) stores all L lanes, the extra ones landing
    // in the rows computed after it, except where they would leave the
    // plane. A short row's loads run past it into the next row, or past
    // the plane into the region's gap; those lanes are never kept.
    for (int64_t step = 0; step < OW; step += L) {
      int64_t ow = maxOf<int64_t>(0, minOf<int64_t>(step, OW - L));
      V v = vclamp<T>(dwTaps<T, S, false, false>(rows, S * ow, w, nullptr, vb), vlo, vhi);
      storeFirst<T>(row + ow, v, oh * OW + ow + L <= OH * OW, OW);
    }
  }
}

} // namespace kc::uk::KC_UK_ISA
