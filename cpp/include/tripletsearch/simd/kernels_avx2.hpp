// AVX2/FMA versions of the block kernels (x86-64, GCC or Clang): intrinsics for the
// distance scans, the moment tiles and the pre-test; the portable bodies compiled for AVX2
// for the rest. Called only when simd::active_isa() is AVX2 (kernels.hpp).
#pragma once

#include "dispatch.hpp"
#include "kernels_portable.hpp"

#ifdef TS_SIMD_X86
#include <immintrin.h>

namespace tripletsearch {
namespace simd {
namespace avx2 {

// Eight lanes in two registers per point, NJ points at a time.
template <int NJ>
TS_TARGET_AVX2 TS_ALWAYS_INLINE void sqdist_group(const StoreFloat* __restrict xb, std::int64_t d,
                                                  const double* __restrict z,
                                                  double* __restrict out) {
  for (int l0 = 0; l0 < kLanes; l0 += 8) {
    __m256d lo[NJ], hi[NJ];
    for (int j = 0; j < NJ; ++j) lo[j] = hi[j] = _mm256_setzero_pd();
    for (std::int64_t a = 0; a < d; ++a) {
      const __m256 x8 = _mm256_loadu_ps(xb + a * kLanes + l0);
      const __m256d x0 = _mm256_cvtps_pd(_mm256_castps256_ps128(x8));
      const __m256d x1 = _mm256_cvtps_pd(_mm256_extractf128_ps(x8, 1));
      for (int j = 0; j < NJ; ++j) {
        const __m256d zj = _mm256_broadcast_sd(z + j * d + a);
        const __m256d u0 = _mm256_sub_pd(x0, zj), u1 = _mm256_sub_pd(x1, zj);
        lo[j] = _mm256_fmadd_pd(u0, u0, lo[j]);
        hi[j] = _mm256_fmadd_pd(u1, u1, hi[j]);
      }
    }
    for (int j = 0; j < NJ; ++j) {
      _mm256_storeu_pd(out + j * kLanes + l0, lo[j]);
      _mm256_storeu_pd(out + j * kLanes + l0 + 4, hi[j]);
    }
  }
}

TS_TARGET_AVX2 inline void block_sqdist(const StoreFloat* __restrict xb, std::int64_t d,
                                        const double* __restrict z, int k, double* __restrict out) {
  int j = 0;  // as the portable version, with the AVX2 groups
  for (; j + 4 <= k; j += 4) sqdist_group<4>(xb, d, z + j * d, out + j * kLanes);
  if (k - j == 3) sqdist_group<3>(xb, d, z + j * d, out + j * kLanes);
  if (k - j == 2) sqdist_group<2>(xb, d, z + j * d, out + j * kLanes);
  if (k - j == 1) sqdist_group<1>(xb, d, z + j * d, out + j * kLanes);
}

// The outer products of the second moment in TA x TB register tiles (3 x 3: 9
// accumulators, 6 loads per 9 fused multiply-adds).
template <int TA, int TB>
TS_TARGET_AVX2 TS_ALWAYS_INLINE void moment_tile(const double* __restrict wy,
                                                 const double* __restrict y, std::int64_t a0,
                                                 std::int64_t b0, std::int64_t d,
                                                 double* __restrict M) {
  __m256d t[TA][TB];
  for (int i = 0; i < TA; ++i)
    for (int j = 0; j < TB; ++j) t[i][j] = _mm256_setzero_pd();
  for (int l = 0; l < kLanes; l += 4) {
    __m256d u[TA], v[TB];
    for (int i = 0; i < TA; ++i) u[i] = _mm256_loadu_pd(wy + (a0 + i) * kLanes + l);
    for (int j = 0; j < TB; ++j) v[j] = _mm256_loadu_pd(y + (b0 + j) * kLanes + l);
    for (int i = 0; i < TA; ++i)
      for (int j = 0; j < TB; ++j) t[i][j] = _mm256_fmadd_pd(u[i], v[j], t[i][j]);
  }
  for (int i = 0; i < TA; ++i)
    for (int j = 0; j < TB; ++j) {
      const std::int64_t a = a0 + i, b = b0 + j;
      if (b < a) continue;
      double* m = M + (a * d + b) * 4;
      _mm256_storeu_pd(m, _mm256_add_pd(_mm256_loadu_pd(m), t[i][j]));
    }
}

TS_TARGET_AVX2 inline void block_moments(const StoreFloat* __restrict xb,
                                         const double* __restrict w, std::int64_t d,
                                         const double* __restrict c, double* __restrict acc,
                                         double* __restrict y, double* __restrict wy) {
  portable::moments_prep(xb, w, d, c, acc, y, wy);
  double* M = acc + kAccLanes * (1 + d);
  std::int64_t a0 = 0;
  for (; a0 + 3 <= d; a0 += 3) {
    std::int64_t b0 = a0;
    for (; b0 + 3 <= d; b0 += 3) moment_tile<3, 3>(wy, y, a0, b0, d, M);
    for (; b0 < d; ++b0) moment_tile<3, 1>(wy, y, a0, b0, d, M);
  }
  for (; a0 < d; ++a0)
    for (std::int64_t b0 = a0; b0 < d; ++b0) moment_tile<1, 1>(wy, y, a0, b0, d, M);
}

TS_TARGET_AVX2 inline std::uint64_t block_pretest(const double* __restrict D,
                                                  const double* __restrict w, double thr,
                                                  ScanRule rule) {
  const __m256d t = _mm256_set1_pd(thr), t2 = _mm256_set1_pd(thr * thr);
  std::uint64_t mask = 0;
  for (int l = 0; l < kLanes; l += 4) {
    const __m256d dv = _mm256_loadu_pd(D + l), wv = _mm256_loadu_pd(w + l);
    __m256d c;
    if (rule == ScanRule::Weighted)
      c = _mm256_cmp_pd(dv, _mm256_mul_pd(t, wv), _CMP_LE_OQ);
    else if (rule == ScanRule::Paper)
      c = _mm256_cmp_pd(_mm256_mul_pd(_mm256_mul_pd(wv, wv), dv), t2, _CMP_LE_OQ);
    else
      c = _mm256_cmp_pd(dv, t, _CMP_LE_OQ);
    mask |= std::uint64_t(_mm256_movemask_pd(c)) << l;
  }
  return mask;
}

TS_TARGET_AVX2 inline void block_choice_lik(const GammaPower& g, const double* D, int k, int chosen,
                                            double* lik) {
  portable::block_choice_lik_body(g, D, k, chosen, lik);
}
TS_TARGET_AVX2 inline void points_sqdist(const double* xc, const double* xsT, int S, std::int64_t d,
                                         double* D) {
  portable::points_sqdist_body(xc, xsT, S, d, D);
}
TS_TARGET_AVX2 inline void relative_weights(const GammaPower& g, const double* dmin, int S,
                                            double* u, double* base) {
  portable::relative_weights_body(g, dmin, S, u, base);
}
TS_TARGET_AVX2 inline void pair_gini(const double* ui, const double* uj, const double* in, int S,
                                     double* a, double* cond) {
  portable::pair_gini_body(ui, uj, in, S, a, cond);
}

}  // namespace avx2
}  // namespace simd
}  // namespace tripletsearch
#endif  // TS_SIMD_X86
