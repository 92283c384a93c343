// The memory floor of the gradient's row path: for m random rows (t, i, j) over n items in
// d = 10 (rows of X and G padded to 12 doubles), read the three rows of X, form the two
// squared distances, and add the three scaled differences into G, as the row path does, but
// with no exp, log or division. Nothing the library computes per row can be faster than
// this loop on the same machine. Used by bench/test_bench_embedding_scale.py.
//
//   c++ -O3 -mavx2 -mfma row_floor.cpp -o row_floor && ./row_floor N M REPEATS
#include <immintrin.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: row_floor N M REPEATS\n");
    return 2;
  }
  const std::int64_t n = std::atoll(argv[1]), m = std::atoll(argv[2]);
  const int repeats = std::atoi(argv[3]);
  constexpr int kD = 12;  // d = 10 padded: no masked loads (they cost little either way)
  std::vector<double> X(n * kD, 0.0), G(n * kD, 0.0);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> unif(-1.0, 1.0);
  for (std::int64_t p = 0; p < n; ++p)
    for (int a = 0; a < 10; ++a) X[p * kD + a] = unif(rng);
  std::vector<std::int32_t> T(3 * m);
  for (auto& t : T) t = static_cast<std::int32_t>(rng() % n);
  double best = 1e300, check = 0.0;
  for (int rep = 0; rep < repeats; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t r = 0; r < m; ++r) {
      const double* xt = &X[T[3 * r] * kD];
      const double* xi = &X[T[3 * r + 1] * kD];
      const double* xj = &X[T[3 * r + 2] * kD];
      __m256d si = _mm256_setzero_pd(), sj = _mm256_setzero_pd();
      for (int a = 0; a < kD; a += 4) {
        const __m256d t = _mm256_loadu_pd(xt + a);
        const __m256d u = _mm256_sub_pd(_mm256_loadu_pd(xi + a), t);
        const __m256d v = _mm256_sub_pd(_mm256_loadu_pd(xj + a), t);
        si = _mm256_fmadd_pd(u, u, si);
        sj = _mm256_fmadd_pd(v, v, sj);
      }
      alignas(32) double s[4], q[4];
      _mm256_store_pd(s, si);
      _mm256_store_pd(q, sj);
      const double ca = 1e-3 * (s[0] + s[1] + s[2] + s[3]);  // stands in for the coefficients
      const double cb = -1e-3 * (q[0] + q[1] + q[2] + q[3]);
      check += ca;
      double* gt = &G[T[3 * r] * kD];
      double* gi = &G[T[3 * r + 1] * kD];
      double* gj = &G[T[3 * r + 2] * kD];
      const __m256d A = _mm256_set1_pd(ca), B = _mm256_set1_pd(cb);
      for (int a = 0; a < kD; a += 4) {
        const __m256d t = _mm256_loadu_pd(xt + a);
        const __m256d vi = _mm256_mul_pd(A, _mm256_sub_pd(_mm256_loadu_pd(xi + a), t));
        const __m256d vj = _mm256_mul_pd(B, _mm256_sub_pd(_mm256_loadu_pd(xj + a), t));
        _mm256_storeu_pd(gi + a, _mm256_add_pd(_mm256_loadu_pd(gi + a), vi));
        _mm256_storeu_pd(gj + a, _mm256_add_pd(_mm256_loadu_pd(gj + a), vj));
        _mm256_storeu_pd(gt + a, _mm256_sub_pd(_mm256_loadu_pd(gt + a), _mm256_add_pd(vi, vj)));
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best) best = s;
  }
  std::printf("%.3f %.17g\n", best / static_cast<double>(m) * 1e9, check + G[0]);
  return 0;
}
