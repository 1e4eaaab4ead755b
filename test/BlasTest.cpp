//===- BlasTest.cpp - kc's sgemm wrapper against a direct product ---------===//
//
// The wrapper hands one-row and one-column products to sgemv (kernels/
// Blas.cpp); every transpose, leading dimensions wider than the matrices,
// alpha and beta, against a double-precision product of the same floats.
//
//===----------------------------------------------------------------------===//
#include "kernels/Blas.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace kc;

TEST_CASE("sgemm: one row or one column, every transpose, against a direct product") {
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  struct Shape {
    int64_t M, N, K;
  };
  for (Shape s : {Shape{1, 37, 19}, Shape{23, 1, 31}, Shape{1, 1, 9}, Shape{5, 7, 3}})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        INFO("M=" << s.M << " N=" << s.N << " K=" << s.K << " transA=" << ta << " transB=" << tb);
        // Stored shapes (rows x cols) and leading dimensions 3 wider.
        int64_t ar = ta ? s.K : s.M, ac = ta ? s.M : s.K, br = tb ? s.N : s.K,
                bc = tb ? s.K : s.N;
        int64_t lda = ac + 3, ldb = bc + 3, ldc = s.N + 3;
        std::vector<float> A(size_t(ar * lda)), B(size_t(br * ldb)), C(size_t(s.M * ldc));
        for (float &v : A)
          v = u(rng);
        for (float &v : B)
          v = u(rng);
        for (float &v : C)
          v = u(rng);
        std::vector<float> C0 = C;
        const float alpha = 0.75f, beta = -0.5f;
        rt::sgemm(ta, tb, s.M, s.N, s.K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
        for (int64_t i = 0; i < s.M; ++i)
          for (int64_t j = 0; j < ldc; ++j) {
            if (j >= s.N) { // outside the result: untouched
              CHECK(C[size_t(i * ldc + j)] == C0[size_t(i * ldc + j)]);
              continue;
            }
            double ref = 0;
            for (int64_t k = 0; k < s.K; ++k)
              ref += double(ta ? A[size_t(k * lda + i)] : A[size_t(i * lda + k)]) *
                     double(tb ? B[size_t(j * ldb + k)] : B[size_t(k * ldb + j)]);
            ref = alpha * ref + beta * double(C0[size_t(i * ldc + j)]);
            CHECK(std::fabs(C[size_t(i * ldc + j)] - ref) <= 1e-5 + 1e-5 * std::fabs(ref));
          }
      }
}
