// AVX2/FMA versions of the triplet sampler's scoring lanes (information.hpp): the log-odds
// terms and a lapse's pair sums four support points per instruction with vmath_avx2.hpp's
// exp and log, equal to the portable ones to a few units in the last place (the sums in
// four partial sums); the pair sums of lapse 0 (what the sampler's methods use) eight per
// instruction in float with vmath_avx2.hpp's float exp, to about 1e-7 of log 2 (4x faster);
// an answer's log-probabilities. Called only when simd::active_isa() is AVX2.
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

TS_TARGET_AVX2 inline double hsum(__m256d v) {
  alignas(32) double t[4];
  _mm256_store_pd(t, v);
  return (t[0] + t[1]) + (t[2] + t[3]);
}

// A lapse > 0: q and 1 - q mixed with it (both >= lapse / 2 > 0), H2 by their logs.
TS_TARGET_AVX2 inline PairSums pair_sums_lapse(const double* __restrict Fa,
                                               const double* __restrict Fb,
                                               const double* __restrict w, std::int64_t L,
                                               double lapse) {
  const std::int64_t L4 = L & ~std::int64_t(3);
  const __m256d sign = _mm256_set1_pd(-0.0), one = _mm256_set1_pd(1.0);
  const __m256d half_lapse = _mm256_set1_pd(0.5 * lapse), keep = _mm256_set1_pd(1.0 - lapse);
  __m256d P = _mm256_setzero_pd(), Pc = P, H = P;
  for (std::int64_t l = 0; l < L4; l += 4) {
    const __m256d z = _mm256_sub_pd(_mm256_loadu_pd(Fb + l), _mm256_loadu_pd(Fa + l));
    const __m256d e = exp_pd(_mm256_xor_pd(_mm256_andnot_pd(sign, z), sign));  // exp(-|z|)
    const __m256d big = _mm256_div_pd(one, _mm256_add_pd(one, e));             // sigmoid(|z|)
    const __m256d small = _mm256_mul_pd(e, big);
    const __m256d pos = _mm256_cmp_pd(z, _mm256_setzero_pd(), _CMP_GE_OQ);
    const __m256d q = _mm256_fmadd_pd(keep, _mm256_blendv_pd(small, big, pos), half_lapse);
    const __m256d qc = _mm256_fmadd_pd(keep, _mm256_blendv_pd(big, small, pos), half_lapse);
    const __m256d h =
        _mm256_xor_pd(_mm256_fmadd_pd(q, log_pd(q), _mm256_mul_pd(qc, log_pd(qc))), sign);
    const __m256d wl = _mm256_loadu_pd(w + l);
    P = _mm256_fmadd_pd(wl, q, P);
    Pc = _mm256_fmadd_pd(wl, qc, Pc);
    H = _mm256_fmadd_pd(wl, h, H);
  }
  const PairSums tail = portable::pair_sums(Fa + L4, Fb + L4, w + L4, nullptr, L - L4, lapse);
  return {hsum(P) + tail.P, hsum(Pc) + tail.Pc, hsum(H) + tail.H};
}

TS_TARGET_AVX2 inline void add_halves(__m256 v, __m256d& lo, __m256d& hi) {
  lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
  hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

// Lapse 0 in float lanes, eight support points per instruction: z = Fb - Fa in double,
// then rounded to float; q, 1 - q and H2(q) = log(1 + e) + |z| sigmoid(-|z|) (no log of 0) with
// float exp, and log(1 + e) = 2 atanh(f), f = e / (2 + e) in [0, 1/3], by its series to
// f^17 (1e-8), one division shared with the sigmoid; each weighted term added in double.
// I to about 1e-7 of log 2.
TS_TARGET_AVX2 inline PairSums pair_sums_f32(const double* __restrict Fa,
                                             const double* __restrict Fb,
                                             const double* __restrict w,
                                             const float* __restrict w32, std::int64_t L) {
  const std::int64_t L8 = L & ~std::int64_t(7);
  const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
  const __m256 two = _mm256_set1_ps(2.0f);
  __m256d P0 = _mm256_setzero_pd(), P1 = P0, Pc0 = P0, Pc1 = P0, H0 = P0, H1 = P0;
  for (std::int64_t l = 0; l < L8; l += 8) {
    const __m128 zlo =
        _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_loadu_pd(Fb + l), _mm256_loadu_pd(Fa + l)));
    const __m128 zhi =
        _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_loadu_pd(Fb + l + 4), _mm256_loadu_pd(Fa + l + 4)));
    const __m256 z = _mm256_set_m128(zhi, zlo);
    const __m256 az = _mm256_andnot_ps(sign, z);
    const __m256 e = exp_neg_ps(_mm256_xor_ps(az, sign));  // exp(-|z|)
    const __m256 t1 = _mm256_add_ps(one, e), t2 = _mm256_add_ps(two, e);
    const __m256 D = _mm256_div_ps(one, _mm256_mul_ps(t1, t2));
    const __m256 big = _mm256_mul_ps(t2, D), small = _mm256_mul_ps(e, big);
    const __m256 f = _mm256_mul_ps(_mm256_mul_ps(e, t1), D), x = _mm256_mul_ps(f, f);
    __m256 p = _mm256_set1_ps(1.0f / 19.0f);
    for (int k = 17; k >= 3; k -= 2) p = _mm256_fmadd_ps(p, x, _mm256_set1_ps(1.0f / k));
    const __m256 twof = _mm256_add_ps(f, f);
    const __m256 log1pe = _mm256_fmadd_ps(_mm256_mul_ps(twof, x), p, twof);
    const __m256 pos = _mm256_cmp_ps(z, _mm256_setzero_ps(), _CMP_GE_OQ);
    const __m256 q = _mm256_blendv_ps(small, big, pos), qc = _mm256_blendv_ps(big, small, pos);
    const __m256 h = _mm256_fmadd_ps(az, small, log1pe);
    const __m256 wl = _mm256_loadu_ps(w32 + l);
    add_halves(_mm256_mul_ps(wl, q), P0, P1);
    add_halves(_mm256_mul_ps(wl, qc), Pc0, Pc1);
    add_halves(_mm256_mul_ps(wl, h), H0, H1);
  }
  const PairSums tail = portable::pair_sums(Fa + L8, Fb + L8, w + L8, w32 + L8, L - L8, 0.0);
  return {hsum(_mm256_add_pd(P0, P1)) + tail.P, hsum(_mm256_add_pd(Pc0, Pc1)) + tail.Pc,
          hsum(_mm256_add_pd(H0, H1)) + tail.H};
}

// One answer's log-probabilities added to acc, lapse 0 four support points per instruction
// (log sigmoid(z) = min(z, 0) - log(1 + exp(-|z|)), exp and log of vmath_avx2.hpp: to about
// 1e-16 absolute); a lapse in the portable lanes.
TS_TARGET_AVX2 inline void add_answer_log_prob(const double* __restrict Fc,
                                               const double* __restrict Ff, double* __restrict acc,
                                               std::int64_t L, double lapse) {
  if (lapse > 0.0) return portable::add_answer_log_prob(Fc, Ff, acc, L, lapse);
  const std::int64_t L4 = L & ~std::int64_t(3);
  const __m256d sign = _mm256_set1_pd(-0.0), one = _mm256_set1_pd(1.0);
  for (std::int64_t l = 0; l < L4; l += 4) {
    const __m256d z = _mm256_sub_pd(_mm256_loadu_pd(Ff + l), _mm256_loadu_pd(Fc + l));
    const __m256d e = exp_pd(_mm256_or_pd(z, sign));  // exp(-|z|)
    const __m256d v =
        _mm256_sub_pd(_mm256_min_pd(z, _mm256_setzero_pd()), log_pd(_mm256_add_pd(one, e)));
    _mm256_storeu_pd(acc + l, _mm256_add_pd(_mm256_loadu_pd(acc + l), v));
  }
  portable::add_answer_log_prob(Fc + L4, Ff + L4, acc + L4, L - L4, 0.0);
}

// w32: w in float, below FLT_MIN as 0 (read by the float lanes of lapse 0 only).
TS_TARGET_AVX2 inline PairSums pair_sums(const double* __restrict Fa, const double* __restrict Fb,
                                         const double* __restrict w, const float* __restrict w32,
                                         std::int64_t L, double lapse) {
  return lapse > 0.0 ? pair_sums_lapse(Fa, Fb, w, L, lapse) : pair_sums_f32(Fa, Fb, w, w32, L);
}

}  // namespace avx2
}  // namespace simd
}  // namespace tripletsearch

#endif  // TS_SIMD_X86
