//===- Blas.cpp - OpenBLAS's sgemm over kc's threads ----------------------===//
#include "Blas.h"

#include <algorithm>
#include <cblas.h>
#include <omp.h>

namespace kc::rt {

void sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
           int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  auto call = [&](int64_t m, int64_t n, const float *a, const float *b, float *c) {
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, int(m), int(n), int(K), alpha, a, int(lda), b,
                int(ldb), beta, c, int(ldc));
  };
  // A single row or column is a matrix-vector product: OpenBLAS's sgemm
  // would pack the whole other factor on every call (a recurrent layer's
  // 1 MB hidden weight once per time step).
  if (M == 1 && N > 1 && K > 1) {
    cblas_sgemv(CblasRowMajor, transB ? CblasNoTrans : CblasTrans, int(transB ? N : K),
                int(transB ? K : N), alpha, B, int(ldb), A, transA ? int(lda) : 1, beta, C, 1);
    return;
  }
  if (N == 1 && M > 1 && K > 1) {
    cblas_sgemv(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, int(transA ? K : M),
                int(transA ? M : K), alpha, A, int(lda), B, transB ? 1 : int(ldb), beta, C,
                int(ldc));
    return;
  }
  int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (threads <= 1 || 2.0 * double(M) * double(N) * double(K) < 4e6) {
    call(M, N, A, B, C);
    return;
  }
  bool byCols = N >= 64 * threads || N >= M;
  int64_t total = byCols ? N : M;
  // Chunks are multiples of 16 so every thread's block stays vector-aligned.
  int64_t chunk = ((total + threads - 1) / threads + 15) / 16 * 16;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int t = 0; t < threads; ++t) {
    int64_t lo = t * chunk, hi = std::min(total, lo + chunk);
    if (lo >= hi)
      continue;
    if (byCols)
      call(M, hi - lo, A, transB ? B + lo * ldb : B + lo, C + lo);
    else
      call(hi - lo, N, transA ? A + lo : A + lo * lda, B, C + lo * ldc);
  }
}

} // namespace kc::rt
