// The core's vector maths with AVX2/FMA (x86-64, GCC or Clang): every exp and log
// approximation of the kernels, in one place. exp and log of four doubles, accurate to a few
// units in the last place over the domains the kernels use (the row kernels of the
// embedding's gradient, rows_avx2.hpp; the triplet sampler's log-odds terms, pair sums with
// a lapse and answers, information_avx2.hpp); exp of eight floats for x <= 0, a float's
// precision (the sampler's pair sums of lapse 0: its information to about 1e-7 of log 2).
// tests/core/test_simd.py compares them with the C library (_core.vector_math, vmath.hpp).
#pragma once

#include "dispatch.hpp"

#ifdef TS_SIMD_X86
#include <immintrin.h>

#include <cfloat>
#include <cmath>

namespace tripletsearch {
namespace simd {
namespace avx2 {

// exp(x) for x <= 709; 0 below -708.39 (where the result would be subnormal); NaN stays NaN.
TS_TARGET_AVX2 inline __m256d exp_pd(__m256d x) {
  const __m256d nan = _mm256_cmp_pd(x, x, _CMP_UNORD_Q);
  const __m256d x0 = x;
  const __m256d lo = _mm256_set1_pd(-708.39);
  const __m256d under = _mm256_cmp_pd(x, lo, _CMP_LT_OQ);
  x = _mm256_min_pd(_mm256_max_pd(x, lo), _mm256_set1_pd(709.0));
  // x = k ln2 + r, |r| <= ln2 / 2 (ln2 in two parts: k r exact in the first)
  const __m256d k = _mm256_round_pd(_mm256_mul_pd(x, _mm256_set1_pd(1.4426950408889634)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256d r = _mm256_fnmadd_pd(k, _mm256_set1_pd(6.93147180369123816490e-01), x);
  r = _mm256_fnmadd_pd(k, _mm256_set1_pd(1.90821492927058770002e-10), r);
  // Taylor to r^13 / 13!: truncation below 1e-17 relative for |r| <= 0.3466
  __m256d p = _mm256_set1_pd(1.0 / 6227020800.0);
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 479001600.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 39916800.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 3628800.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 362880.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 40320.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 5040.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 720.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 120.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 24.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 6.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(0.5));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0));
  // 2^k through the exponent bits (k in [-1022, 1023])
  const __m256i ki = _mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(k));
  const __m256i bits = _mm256_slli_epi64(_mm256_add_epi64(ki, _mm256_set1_epi64x(1023)), 52);
  const __m256d y = _mm256_mul_pd(p, _mm256_castsi256_pd(bits));
  return _mm256_blendv_pd(_mm256_andnot_pd(under, y), x0, nan);
}

// exp(x) for x <= 0 in float lanes, below -87 as at -87 (1.6e-38: a normal float, no slow
// subnormal arithmetic downstream): x = k ln2 + r, Taylor to r^7 (5e-9 relative).
TS_TARGET_AVX2 inline __m256 exp_neg_ps(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145751953125f), x);  // ln2 in two parts
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.42860682030941723212e-6f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

// log(x) for positive finite x (subnormals included); -inf at 0, NaN stays NaN.
TS_TARGET_AVX2 inline __m256d log_pd(__m256d x) {
  const __m256d zero = _mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_EQ_OQ);
  const __m256d nan = _mm256_cmp_pd(x, x, _CMP_UNORD_Q);
  const __m256d x0 = x;
  const __m256d small = _mm256_cmp_pd(x, _mm256_set1_pd(DBL_MIN), _CMP_LT_OQ);
  x = _mm256_blendv_pd(x, _mm256_mul_pd(x, _mm256_set1_pd(4503599627370496.0)), small);  // 2^52
  const __m256d eadj = _mm256_and_pd(small, _mm256_set1_pd(-52.0));
  const __m256i bits = _mm256_castpd_si256(x);
  // the exponent as a double: the biased exponent in a double's mantissa, minus 2^52
  const __m256i eb = _mm256_srli_epi64(bits, 52);
  const __m256d magic = _mm256_set1_pd(4503599627370496.0);
  __m256d e = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(eb, _mm256_castpd_si256(magic))),
                            _mm256_add_pd(magic, _mm256_set1_pd(1023.0)));
  e = _mm256_add_pd(e, eadj);
  // the mantissa m in [1, 2), then in [sqrt(1/2), sqrt(2))
  __m256d m = _mm256_castsi256_pd(
      _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi64x(0x000FFFFFFFFFFFFFLL)),
                      _mm256_set1_epi64x(0x3FF0000000000000LL)));
  const __m256d big = _mm256_cmp_pd(m, _mm256_set1_pd(1.4142135623730951), _CMP_GT_OQ);
  m = _mm256_blendv_pd(m, _mm256_mul_pd(m, _mm256_set1_pd(0.5)), big);
  e = _mm256_add_pd(e, _mm256_and_pd(big, _mm256_set1_pd(1.0)));
  // log m = 2 atanh(f), f = (m - 1) / (m + 1), |f| <= 0.1716: the series to f^23
  const __m256d one = _mm256_set1_pd(1.0);
  const __m256d f = _mm256_div_pd(_mm256_sub_pd(m, one), _mm256_add_pd(m, one));
  const __m256d f2 = _mm256_mul_pd(f, f);
  __m256d p = _mm256_set1_pd(1.0 / 23.0);
  p = _mm256_fmadd_pd(p, f2, _mm256_set1_pd(1.0 / 21.0));
  p = _mm256_fmadd_pd(p, f2, _mm256_set1_pd(1.0 / 19.0));
  p = _mm256_fmadd_pd(p, f2, _mm256_set1_pd(1.0 / 17.0));
  p = _mm256_fmadd_pd(p, f2, _mm256_set1_pd(1.0 / 15.0));
  p = _mm256_fmadd_pd(p, f2, _mm256_set1_pd(1.0 / 13.0));
  p = _mm256_fmadd_pd(p, f2, _mm256_set1_pd(1.0 / 11.0));
  p = _mm256_fmadd_pd(p, f2, _mm256_set1_pd(1.0 / 9.0));
  p = _mm256_fmadd_pd(p, f2, _mm256_set1_pd(1.0 / 7.0));
  p = _mm256_fmadd_pd(p, f2, _mm256_set1_pd(1.0 / 5.0));
  p = _mm256_fmadd_pd(p, f2, _mm256_set1_pd(1.0 / 3.0));
  const __m256d twof = _mm256_add_pd(f, f);
  const __m256d logm = _mm256_fmadd_pd(_mm256_mul_pd(twof, f2), p, twof);
  // e ln2 + log m, ln2 in two parts (e * hi exact)
  const __m256d y =
      _mm256_fmadd_pd(e, _mm256_set1_pd(6.93147180369123816490e-01),
                      _mm256_fmadd_pd(e, _mm256_set1_pd(1.90821492927058770002e-10), logm));
  const __m256d edge = _mm256_blendv_pd(y, _mm256_set1_pd(-HUGE_VAL), zero);
  return _mm256_blendv_pd(edge, x0, nan);
}

// y[0..4) = exp or log of a[0..4) (tests of the accuracy).
TS_TARGET_AVX2 inline void vector_math(bool is_exp, const double* a, double* y) {
  const __m256d x = _mm256_loadu_pd(a);
  _mm256_storeu_pd(y, is_exp ? exp_pd(x) : log_pd(x));
}

// y[0..8) = exp_neg_ps of a[0..8) rounded to float (tests of the accuracy).
TS_TARGET_AVX2 inline void vector_exp_neg_float(const double* a, double* y) {
  const __m256 e = exp_neg_ps(_mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd(a + 4)),
                                              _mm256_cvtpd_ps(_mm256_loadu_pd(a))));
  _mm256_storeu_pd(y, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
  _mm256_storeu_pd(y + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
}

}  // namespace avx2
}  // namespace simd
}  // namespace tripletsearch

#endif  // TS_SIMD_X86
