// AVX2/FMA version of the hypotheses' update (x86-64, GCC or Clang): intrinsics with gamma
// inferred (pairs, the default search, and larger tuples), the portable body compiled for
// AVX2 for a fixed gamma.
// Called only when simd::active_isa() is AVX2 (hypotheses.hpp).
#pragma once

#include <cstddef>

#include "dispatch.hpp"
#include "hypotheses_portable.hpp"

#ifdef TS_SIMD_X86
#include <immintrin.h>

namespace tripletsearch {
namespace simd {
namespace avx2 {

// k = 2 (pairs, the default) with gamma inferred: hypothesis_update_body's arithmetic in AVX2
// intrinsics (the compilers leave the plain loops scalar): the same operations in the same
// order (bit for bit where the compiler fuses the generic body's multiply-add as here).
// The closer item's ratio is 1, so its powers are 1 and only the farther one's,
// rho = Dmin / Dmax, need the three square roots; sixteen lanes at a time, as four
// independent chains of squarings and sums. The masses' partial sums stay in L1, in
// hypothesis_update_body's lane order.
TS_TARGET_AVX2 inline void hypothesis_pair(const HypothesisBlock& hb, const double* D, int choice,
                                           double scale) {
  constexpr int R = 4;  // groups of four lanes in flight
  const int nl = hb.lapse_auto ? kLapseGrid : 1, nh = kGammaGrid * nl;
  alignas(32) double mass[kGammaGrid * kLapseGrid][kMassLanes];
  for (int h = 0; h < nh; ++h)
    for (int q = 0; q < kMassLanes; ++q) mass[h][q] = 0.0;
  __m256d cfirst[kLapseGrid], cslope[kLapseGrid];  // eps / 2 and 1 - eps per lapse value
  for (int e = 0; e < nl; ++e) {
    const double eps = hb.lapse_auto ? kLapseValues[e] : hb.lapse;
    cfirst[e] = _mm256_set1_pd(eps / 2);
    cslope[e] = _mm256_set1_pd(1.0 - eps);
  }
  const __m256d tiny = _mm256_set1_pd(kTinyDistance), one = _mm256_set1_pd(1.0),
                sc = _mm256_set1_pd(scale), floor = _mm256_set1_pd(kWeightFloor);
  for (int l0 = 0; l0 < kLanes; l0 += 4 * R) {
    __m256d even[R], odd[R], closer[R], w[R];
    for (int r = 0; r < R; ++r) {
      const __m256d a = _mm256_max_pd(_mm256_loadu_pd(D + l0 + 4 * r), tiny);
      const __m256d b = _mm256_max_pd(_mm256_loadu_pd(D + kLanes + l0 + 4 * r), tiny);
      const __m256d lo = _mm256_min_pd(a, b), hi = _mm256_max_pd(a, b);
      const __m256d tie = _mm256_cmp_pd(a, b, _CMP_EQ_OQ);  // both ratios 1
      const __m256d rho = _mm256_blendv_pd(_mm256_mul_pd(lo, _mm256_div_pd(one, hi)), one, tie);
      closer[r] = _mm256_or_pd(
          tie, choice == 0 ? _mm256_cmp_pd(a, b, _CMP_LT_OQ) : _mm256_cmp_pd(b, a, _CMP_LT_OQ));
      const __m256d h = _mm256_sqrt_pd(rho);
      even[r] = _mm256_sqrt_pd(h);
      odd[r] = _mm256_sqrt_pd(_mm256_mul_pd(h, even[r]));
      w[r] = _mm256_setzero_pd();
    }
    for (int g = 0; g < kGammaGrid; ++g) {
      const bool is_odd = (g & 1) != 0;
      __m256d p[R];  // P(choice | item, gamma_g) = (1 or rho^g/2) / (1 + rho^g/2)
      for (int r = 0; r < R; ++r) {
        const __m256d pw = is_odd ? odd[r] : even[r];
        p[r] = _mm256_mul_pd(_mm256_blendv_pd(pw, one, closer[r]),
                             _mm256_div_pd(one, _mm256_add_pd(one, pw)));
      }
      for (int e = 0; e < nl; ++e) {
        const int hh = g * nl + e;
        Weight* wh = hb.wh + static_cast<std::size_t>(hh) * hb.stride + l0;
        for (int r = 0; r < R; ++r) {
          const __m256d f = _mm256_mul_pd(_mm256_fmadd_pd(cslope[e], p[r], cfirst[e]), sc);
          const __m256d v = _mm256_mul_pd(_mm256_cvtps_pd(_mm_loadu_ps(wh + 4 * r)), f);
          const __m256d kept = _mm256_and_pd(v, _mm256_cmp_pd(v, floor, _CMP_GE_OQ));
          _mm_storeu_ps(wh + 4 * r, _mm256_cvtpd_ps(kept));  // to_weight
          w[r] = _mm256_add_pd(w[r], v);
          double* mq = mass[hh] + ((l0 + 4 * r) & (kMassLanes - 1));
          _mm256_store_pd(mq, _mm256_add_pd(_mm256_load_pd(mq), v));
        }
      }
      if (is_odd)
        for (int r = 0; r < R; ++r) {
          even[r] = _mm256_mul_pd(even[r], even[r]);
          odd[r] = _mm256_mul_pd(odd[r], odd[r]);
        }
    }
    for (int r = 0; r < R; ++r) _mm256_storeu_pd(hb.w + l0 + 4 * r, w[r]);
  }
  for (int h = 0; h < nh; ++h) hb.hacc[h] += mass_of(mass[h]);
}

// k > 2 with gamma inferred: hypothesis_update_body's arithmetic in AVX2 intrinsics, four
// lanes at a time, the same operations in the same order (each grid gamma's denominator
// summed over the shown items in their order). Each shown item's ratio Dmin / D_c (1 for
// the closest) gets the three square roots and its chains of squarings add into the
// thirteen denominators, kept in registers with the chosen item's powers; then each
// hypothesis' weights. Measured at 1e6 items, k = 4: 30 ns an item (the body: 40).
TS_TARGET_AVX2 inline void hypothesis_tuple(const HypothesisBlock& hb, const double* D, int k,
                                            int choice, double scale) {
  const int nl = hb.lapse_auto ? kLapseGrid : 1, nh = kGammaGrid * nl;
  alignas(32) double mass[kGammaGrid * kLapseGrid][kMassLanes];
  for (int h = 0; h < nh; ++h)
    for (int q = 0; q < kMassLanes; ++q) mass[h][q] = 0.0;
  __m256d cfirst[kLapseGrid], cslope[kLapseGrid];  // eps / k and 1 - eps per lapse value
  for (int e = 0; e < nl; ++e) {
    const double eps = hb.lapse_auto ? kLapseValues[e] : hb.lapse;
    cfirst[e] = _mm256_set1_pd(eps / k);
    cslope[e] = _mm256_set1_pd(1.0 - eps);
  }
  const __m256d tiny = _mm256_set1_pd(kTinyDistance), one = _mm256_set1_pd(1.0),
                sc = _mm256_set1_pd(scale), floor = _mm256_set1_pd(kWeightFloor);
  Weight* const wh0 = hb.wh;
  const std::size_t stride = hb.stride;
  for (int l0 = 0; l0 < kLanes; l0 += 4) {
    __m256d dmin = _mm256_max_pd(_mm256_loadu_pd(D + l0), tiny);
    for (int c = 1; c < k; ++c)
      dmin = _mm256_min_pd(dmin, _mm256_max_pd(_mm256_loadu_pd(D + c * kLanes + l0), tiny));
    __m256d den[kGammaGrid], num[kGammaGrid];
    for (int g = 0; g < kGammaGrid; ++g) den[g] = _mm256_setzero_pd();
    for (int c = 0; c < k; ++c) {  // the closest items' ratios are 1 exactly
      const __m256d Dc = _mm256_max_pd(_mm256_loadu_pd(D + c * kLanes + l0), tiny);
      const __m256d rho = _mm256_blendv_pd(_mm256_mul_pd(dmin, _mm256_div_pd(one, Dc)), one,
                                           _mm256_cmp_pd(Dc, dmin, _CMP_EQ_OQ));
      const __m256d h = _mm256_sqrt_pd(rho);
      __m256d even = _mm256_sqrt_pd(h);
      __m256d odd = _mm256_sqrt_pd(_mm256_mul_pd(h, even));
      for (int g = 0; g < kGammaGrid; g += 2) {
        den[g] = _mm256_add_pd(den[g], even);
        if (c == choice) num[g] = even;
        if (g + 1 < kGammaGrid) {
          den[g + 1] = _mm256_add_pd(den[g + 1], odd);
          if (c == choice) num[g + 1] = odd;
        }
        even = _mm256_mul_pd(even, even);
        odd = _mm256_mul_pd(odd, odd);
      }
    }
    __m256d w = _mm256_setzero_pd();
    for (int g = 0; g < kGammaGrid; ++g) {
      const __m256d p = _mm256_mul_pd(num[g], _mm256_div_pd(one, den[g]));
      for (int e = 0; e < nl; ++e) {
        const int hh = g * nl + e;
        Weight* wh = wh0 + static_cast<std::size_t>(hh) * stride + l0;
        const __m256d f = _mm256_mul_pd(_mm256_fmadd_pd(cslope[e], p, cfirst[e]), sc);
        const __m256d v = _mm256_mul_pd(_mm256_cvtps_pd(_mm_loadu_ps(wh)), f);
        const __m256d kept = _mm256_and_pd(v, _mm256_cmp_pd(v, floor, _CMP_GE_OQ));
        _mm_storeu_ps(wh, _mm256_cvtpd_ps(kept));  // to_weight
        w = _mm256_add_pd(w, v);
        double* mq = mass[hh] + (l0 & (kMassLanes - 1));
        _mm256_store_pd(mq, _mm256_add_pd(_mm256_load_pd(mq), v));
      }
    }
    _mm256_storeu_pd(hb.w + l0, w);
  }
  for (int h = 0; h < nh; ++h) hb.hacc[h] += mass_of(mass[h]);
}

// Gamma inferred by the intrinsics above (pairs or tuples), a fixed gamma (with the lapse
// rate inferred) by the portable body compiled for AVX2.
TS_TARGET_AVX2 inline void hypothesis_update(const HypothesisBlock& hb, const double* D, int k,
                                             int choice, double scale) {
  if (!hb.gamma_auto) return portable::hypothesis_update_body(hb, D, k, choice, scale);
  if (k == 2) return hypothesis_pair(hb, D, choice, scale);
  hypothesis_tuple(hb, D, k, choice, scale);
}

}  // namespace avx2
}  // namespace simd
}  // namespace tripletsearch

#endif  // TS_SIMD_X86
