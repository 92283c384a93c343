// AVX2/FMA versions of the triplet sampler's scoring lanes (information.hpp): four support
// points per instruction with vmath_avx2.hpp's exp and log (and log(1 + e) by its own
// series, sharing the division of the sigmoid), equal to the portable ones to a few units
// in the last place (the sums in four partial sums). Called only when simd::active_isa()
// is AVX2.
#pragma once

#include <cmath>
#include <cstdint>

#include "dispatch.hpp"
#include "information_portable.hpp"
#include "vmath_avx2.hpp"

#ifdef TS_SIMD_X86
#include <immintrin.h>

namespace tripletsearch {
namespace simd {
namespace avx2 {

TS_TARGET_AVX2 inline void log_odds_lanes(const LogOdds& f, const double* __restrict ST,
                                          std::int64_t M, std::int64_t d,
                                          const double* __restrict x, double* __restrict F) {
  const std::int64_t M4 = M & ~std::int64_t(3);
  const __m256d a = _mm256_set1_pd(f.a), b = _mm256_set1_pd(f.b), c = _mm256_set1_pd(f.c);
  const __m256d tiny = _mm256_set1_pd(kTinyDistance);
  for (std::int64_t m = 0; m < M4; m += 4) {
    __m256d D = _mm256_setzero_pd();
    for (std::int64_t k = 0; k < d; ++k) {
      const __m256d u = _mm256_sub_pd(_mm256_loadu_pd(ST + k * M + m), _mm256_set1_pd(x[k]));
      D = _mm256_add_pd(D, _mm256_mul_pd(u, u));  // no FMA: the portable rounding
    }
    if (!f.linear) D = _mm256_mul_pd(a, log_pd(_mm256_max_pd(tiny, _mm256_fmadd_pd(c, D, b))));
    _mm256_storeu_pd(F + m, D);
  }
  for (std::int64_t m = M4; m < M; ++m) {
    double D = 0.0;
    for (std::int64_t k = 0; k < d; ++k) {
      const double u = ST[k * M + m] - x[k];
      D += u * u;
    }
    F[m] = f(D);
  }
}

// log(1 + e) for e in [0, 1], and 1 / (1 + e) in `inv`, with one division: for
// D = 1 / ((1 + e)(2 + e)), 1 / (1 + e) = (2 + e) D and log(1 + e) = 2 atanh(f) with
// f = e / (2 + e) = e (1 + e) D in [0, 1/3], the series to f^35 (truncation below 1e-17).
TS_TARGET_AVX2 inline __m256d log1p_unit(__m256d e, __m256d& inv) {
  const __m256d one = _mm256_set1_pd(1.0);
  const __m256d t1 = _mm256_add_pd(one, e), t2 = _mm256_add_pd(_mm256_set1_pd(2.0), e);
  const __m256d D = _mm256_div_pd(one, _mm256_mul_pd(t1, t2));
  inv = _mm256_mul_pd(t2, D);
  const __m256d f = _mm256_mul_pd(_mm256_mul_pd(e, t1), D), f2 = _mm256_mul_pd(f, f);
  __m256d p = _mm256_set1_pd(1.0 / 35.0);
  for (int k = 33; k >= 3; k -= 2) p = _mm256_fmadd_pd(p, f2, _mm256_set1_pd(1.0 / k));
  const __m256d twof = _mm256_add_pd(f, f);
  return _mm256_fmadd_pd(_mm256_mul_pd(twof, f2), p, twof);
}

TS_TARGET_AVX2 inline double hsum(__m256d v) {
  alignas(32) double t[4];
  _mm256_store_pd(t, v);
  return (t[0] + t[1]) + (t[2] + t[3]);
}

template <bool kLapse>
TS_TARGET_AVX2 inline PairSums pair_sums_impl(const double* __restrict Fa,
                                              const double* __restrict Fb,
                                              const double* __restrict w, std::int64_t L,
                                              double lapse) {
  const std::int64_t L4 = L & ~std::int64_t(3);
  const __m256d sign = _mm256_set1_pd(-0.0);
  const __m256d half_lapse = _mm256_set1_pd(0.5 * lapse), keep = _mm256_set1_pd(1.0 - lapse);
  __m256d P = _mm256_setzero_pd(), Pc = P, H = P;
  for (std::int64_t l = 0; l < L4; l += 4) {
    const __m256d z = _mm256_sub_pd(_mm256_loadu_pd(Fb + l), _mm256_loadu_pd(Fa + l));
    const __m256d az = _mm256_andnot_pd(sign, z);
    const __m256d e = exp_pd(_mm256_xor_pd(az, sign));  // exp(-|z|)
    __m256d big;                                        // sigmoid(|z|) = 1 / (1 + e)
    const __m256d log1pe = log1p_unit(e, big);
    const __m256d small = _mm256_mul_pd(e, big);
    const __m256d pos = _mm256_cmp_pd(z, _mm256_setzero_pd(), _CMP_GE_OQ);
    __m256d q = _mm256_blendv_pd(small, big, pos), qc = _mm256_blendv_pd(big, small, pos);
    __m256d h;
    if constexpr (kLapse) {  // q, qc >= lapse / 2 > 0
      q = _mm256_fmadd_pd(keep, q, half_lapse);
      qc = _mm256_fmadd_pd(keep, qc, half_lapse);
      h = _mm256_fmadd_pd(q, log_pd(q), _mm256_mul_pd(qc, log_pd(qc)));
      h = _mm256_xor_pd(h, sign);
    } else {  // H2(sigmoid(z)) = log(1 + e) + |z| sigmoid(-|z|): no log of 0
      h = _mm256_fmadd_pd(az, small, log1pe);
    }
    const __m256d wl = _mm256_loadu_pd(w + l);
    P = _mm256_fmadd_pd(wl, q, P);
    Pc = _mm256_fmadd_pd(wl, qc, Pc);
    H = _mm256_fmadd_pd(wl, h, H);
  }
  const PairSums tail = portable::pair_sums(Fa + L4, Fb + L4, w + L4, L - L4, lapse);
  return {hsum(P) + tail.P, hsum(Pc) + tail.Pc, hsum(H) + tail.H};
}

TS_TARGET_AVX2 inline PairSums pair_sums(const double* __restrict Fa, const double* __restrict Fb,
                                         const double* __restrict w, std::int64_t L, double lapse) {
  return lapse > 0.0 ? pair_sums_impl<true>(Fa, Fb, w, L, lapse)
                     : pair_sums_impl<false>(Fa, Fb, w, L, lapse);
}

}  // namespace avx2
}  // namespace simd
}  // namespace tripletsearch

#endif  // TS_SIMD_X86
