//===- Blas.h - OpenBLAS's sgemm over kc's threads --------------*- C++ -*-===//
#pragma once

#include <cstdint>

namespace kc::rt {

/// Row-major C = alpha * op(A) op(B) + beta * C over OpenBLAS, split
/// across the OpenMP threads by columns (or rows when C is narrow). OpenBLAS
/// itself runs single-threaded: one pool of threads for everything, so BLAS
/// workers never compete with spinning OpenMP workers for the cores.
void sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
           int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

} // namespace kc::rt
