//===- kc-gemm-peak.cpp - Measure the sgemm peak of this machine ----------===//
//
// Times OpenBLAS sgemm on square matrices and prints GFLOP/s for each thread
// count, the yardstick benchmarks state kc's achieved share against. kc runs
// GEMMs on its own OpenMP threads with OpenBLAS single-threaded inside them,
// so T threads here means T sgemms on column blocks of C, as kc does.
//
//===----------------------------------------------------------------------===//
#include "../common/OpenBlasCore.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <omp.h>
#include <vector>

extern "C" void openblas_set_num_threads(int);
extern "C" char *openblas_get_corename(void);

int main(int argc, char **argv) {
  kc::tools::reexecForOpenBlasCore(argv);
  int n = argc > 1 ? std::atoi(argv[1]) : 1024;
  int maxThreads = argc > 2 ? std::atoi(argv[2]) : 2;
  if (n <= 0 || n > 8192 || maxThreads <= 0 || maxThreads > 256) {
    std::fprintf(stderr, "usage: kc-gemm-peak [N=1024] [MAX_THREADS=2]\n");
    return 1;
  }
  openblas_set_num_threads(1); // the parallelism is the loop below, as in kc
  std::printf("openblas_core=%s\n", openblas_get_corename());
  std::vector<float> a(size_t(n) * n, 1.0f), b(size_t(n) * n, 0.5f), c(size_t(n) * n);
  for (int t = 1; t <= maxThreads; ++t) {
    std::vector<double> ms;
    int chunk = (n + t - 1) / t;
    for (int i = 0; i < 12; ++i) {
      auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for num_threads(t) schedule(static, 1)
      for (int part = 0; part < t; ++part) {
        int lo = part * chunk, cols = std::min(n, lo + chunk) - lo;
        if (cols > 0)
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, cols, n, 1.f, a.data(), n,
                      b.data() + lo, n, 0.f, c.data() + lo, n);
      }
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                       .count());
    }
    std::sort(ms.begin(), ms.end());
    double best = ms[1]; // second best: robust to one outlier
    std::printf("threads=%d n=%d gflops=%.1f\n", t, n, 2.0 * n * n * double(n) / best / 1e6);
  }
  return 0;
}
