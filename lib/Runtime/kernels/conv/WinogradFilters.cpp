//===- WinogradFilters.cpp - Winograd filters transformed into panels -----===//
//
// Both Winograd kernels multiply by their transformed filters on the panel
// kernel: each tile position's OC × C matrix is written straight into the
// panel layout of PackedGemm.h, once, on the first run.
//
//===----------------------------------------------------------------------===//
#include "../PackedGemm.h"
#include "ConvAlgorithms.h"

#include <algorithm>
#include <cstring>

namespace kc::rt {

Tensor winogradFilters(const float *weight, int64_t OC, int64_t C, const float *G, int T,
                       size_t uSize) {
  constexpr int kMaxT = 6;
  const int P = T * T;
  Tensor transformed = Tensor::empty(DType::F32, {P, int64_t(uSize)});
  float *U = transformed.data<float>();
  const int64_t panels = (OC + kPanelRows - 1) / kPanelRows, icBlocks = (C + 15) / 16;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t pb = 0; pb < panels; ++pb)
    for (int64_t ib = 0; ib < icBlocks; ++ib) {
      float block[kMaxT * kMaxT][16][kPanelRows] = {}; // [p][ic in block][oc in panel]
      for (int64_t r = 0; r < kPanelRows && pb * kPanelRows + r < OC; ++r)
        for (int64_t i = 0; i < 16 && ib * 16 + i < C; ++i) {
          const float *g = weight + ((pb * kPanelRows + r) * C + ib * 16 + i) * 9;
          float t[kMaxT][3];
          for (int a = 0; a < T; ++a)
            for (int b = 0; b < 3; ++b)
              t[a][b] = G[a * 3] * g[b] + G[a * 3 + 1] * g[3 + b] + G[a * 3 + 2] * g[6 + b];
          for (int a = 0; a < T; ++a)
            for (int b = 0; b < T; ++b)
              block[a * T + b][i][r] =
                  t[a][0] * G[b * 3] + t[a][1] * G[b * 3 + 1] + t[a][2] * G[b * 3 + 2];
        }
      int64_t n = std::min<int64_t>(16, C - ib * 16);
      for (int p = 0; p < P; ++p)
        std::memcpy(U + p * uSize + packedIndex(pb * kPanelRows, ib * 16, C), block[p],
                    sizeof(float) * kPanelRows * n);
    }
  return transformed;
}

} // namespace kc::rt
