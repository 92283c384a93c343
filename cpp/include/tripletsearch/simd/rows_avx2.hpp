// AVX2/FMA versions of the gamma-CKL row kernels (x86-64, GCC or Clang): four rows per
// instruction with their own exp and log (vmath_avx2.hpp), equal to the portable ones to a
// few units in the last place. Called only when simd::active_isa() is AVX2 (rows.hpp).
#pragma once

#include <algorithm>
#include <cstdint>

#include "dispatch.hpp"
#include "rows_portable.hpp"
#include "vmath_avx2.hpp"

#ifdef TS_SIMD_X86
#include <immintrin.h>

namespace tripletsearch {
namespace simd {
namespace avx2 {

// Di, Dj: n rows, readable up to n rounded up to 4 (the caller pads).
template <bool kLoss, bool kDG>
TS_TARGET_AVX2 void gammackl_rows(const GammaPower& g, const double* Di, const double* Dj, int n,
                                  RowCoefs& out) {
  alignas(32) double s[kRowBlock], base[kRowBlock];
  const __m256d tiny = _mm256_set1_pd(kTinyDistance), one = _mm256_set1_pd(1.0);
  const __m256d hg = _mm256_set1_pd(g.half_gamma());
  const int n4 = (n + 3) & ~3;
  // s = min(Dj / Di, Di / Dj) as min(Dj (1/Di), Di (1/Dj)), the scalar path's arithmetic
  for (int k = 0; k < n4; k += 4) {
    // max(tiny, D): a NaN distance stays NaN (maxpd returns its second operand then)
    const __m256d di = _mm256_max_pd(tiny, _mm256_loadu_pd(Di + k));
    const __m256d dj = _mm256_max_pd(tiny, _mm256_loadu_pd(Dj + k));
    const __m256d ri = _mm256_div_pd(one, di), rj = _mm256_div_pd(one, dj);
    _mm256_store_pd(s + k, _mm256_min_pd(_mm256_mul_pd(dj, ri), _mm256_mul_pd(di, rj)));
    _mm256_store_pd(out.a + k, ri);  // kept for the second pass
    _mm256_store_pd(out.b + k, rj);
  }
  alignas(32) double pw[kRowBlock];
  std::copy(s, s + n4, pw);
  const bool integer = g.integer();
  if (integer) g.lanes(pw, n4, base);  // exactly the scalar path's powers
  for (int k = 0; k < n4; k += 4) {
    const __m256d di0 = _mm256_loadu_pd(Di + k), dj0 = _mm256_loadu_pd(Dj + k);
    const __m256d di = _mm256_max_pd(tiny, di0), dj = _mm256_max_pd(tiny, dj0);
    const __m256d ri = _mm256_load_pd(out.a + k), rj = _mm256_load_pd(out.b + k);
    const __m256d closer = _mm256_cmp_pd(di, dj, _CMP_LE_OQ);  // a_closer
    __m256d z = _mm256_setzero_pd();                           // (gamma/2) log s <= 0
    if (kLoss || kDG || !integer) z = _mm256_mul_pd(hg, log_pd(_mm256_load_pd(s + k)));
    const __m256d p = integer ? _mm256_load_pd(pw + k) : exp_pd(z);
    const __m256d inv = _mm256_div_pd(one, _mm256_add_pd(one, p));
    const __m256d q = _mm256_blendv_pd(inv, _mm256_mul_pd(p, inv), closer);  // prob_b
    if constexpr (kLoss) {
      const __m256d L = log_pd(_mm256_add_pd(one, p));  // log(1 + s^(gamma/2))
      _mm256_store_pd(
          out.logp + k,
          _mm256_blendv_pd(_mm256_sub_pd(z, L), _mm256_sub_pd(_mm256_setzero_pd(), L), closer));
    }
    const __m256d cq = _mm256_mul_pd(_mm256_add_pd(hg, hg), q);
    const __m256d live_i = _mm256_cmp_pd(di0, tiny, _CMP_GT_OQ);
    const __m256d live_j = _mm256_cmp_pd(dj0, tiny, _CMP_GT_OQ);
    _mm256_store_pd(out.a + k, _mm256_and_pd(live_i, _mm256_sub_pd(_mm256_setzero_pd(),
                                                                   _mm256_mul_pd(cq, ri))));
    _mm256_store_pd(out.b + k, _mm256_and_pd(live_j, _mm256_mul_pd(cq, rj)));
    if constexpr (kDG) {
      const __m256d odds = _mm256_blendv_pd(z, _mm256_sub_pd(_mm256_setzero_pd(), z), closer);
      _mm256_store_pd(out.dlg + k, _mm256_mul_pd(q, odds));
    }
  }
}

// Tail lanes: the first k of four (0 <= k < 4).
TS_TARGET_AVX2 TS_ALWAYS_INLINE __m256i tail_mask(std::int64_t k) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(k), _mm256_set_epi64x(3, 2, 1, 0));
}

// ((l0 + l2) + (l1 + l3)): a fixed order.
TS_TARGET_AVX2 TS_ALWAYS_INLINE double lane_sum(__m256d v) {
  const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}

// The squared distances of a row, Di = ||x_i - x_t||^2 and Dj = ||x_j - x_t||^2, in four
// partial sums (coordinate a in lane a % 4).
TS_TARGET_AVX2 TS_ALWAYS_INLINE void row_sqdist(const double* __restrict xt,
                                                const double* __restrict xi,
                                                const double* __restrict xj, std::int64_t d,
                                                double& Di, double& Dj) {
  __m256d si = _mm256_setzero_pd(), sj = _mm256_setzero_pd();
  std::int64_t a = 0;
  for (; a + 4 <= d; a += 4) {
    const __m256d t = _mm256_loadu_pd(xt + a);
    const __m256d u = _mm256_sub_pd(_mm256_loadu_pd(xi + a), t);
    const __m256d v = _mm256_sub_pd(_mm256_loadu_pd(xj + a), t);
    si = _mm256_fmadd_pd(u, u, si);
    sj = _mm256_fmadd_pd(v, v, sj);
  }
  if (a < d) {  // masked lanes read as 0 and add 0
    const __m256i mk = tail_mask(d - a);
    const __m256d t = _mm256_maskload_pd(xt + a, mk);
    const __m256d u = _mm256_sub_pd(_mm256_maskload_pd(xi + a, mk), t);
    const __m256d v = _mm256_sub_pd(_mm256_maskload_pd(xj + a, mk), t);
    si = _mm256_fmadd_pd(u, u, si);
    sj = _mm256_fmadd_pd(v, v, sj);
  }
  Di = lane_sum(si);
  Dj = lane_sum(sj);
}

// g_i += a (x_i - x_t), g_j += b (x_j - x_t), g_t -= both, for a row of three distinct items.
TS_TARGET_AVX2 TS_ALWAYS_INLINE void scatter_row(double a_, double b_, const double* __restrict xt,
                                                 const double* __restrict xi,
                                                 const double* __restrict xj, double* __restrict gt,
                                                 double* __restrict gi, double* __restrict gj,
                                                 std::int64_t d) {
  const __m256d A = _mm256_set1_pd(a_), B = _mm256_set1_pd(b_);
  std::int64_t a = 0;
  for (; a + 4 <= d; a += 4) {
    const __m256d t = _mm256_loadu_pd(xt + a);
    const __m256d vi = _mm256_mul_pd(A, _mm256_sub_pd(_mm256_loadu_pd(xi + a), t));
    const __m256d vj = _mm256_mul_pd(B, _mm256_sub_pd(_mm256_loadu_pd(xj + a), t));
    _mm256_storeu_pd(gi + a, _mm256_add_pd(_mm256_loadu_pd(gi + a), vi));
    _mm256_storeu_pd(gj + a, _mm256_add_pd(_mm256_loadu_pd(gj + a), vj));
    _mm256_storeu_pd(gt + a, _mm256_sub_pd(_mm256_loadu_pd(gt + a), _mm256_add_pd(vi, vj)));
  }
  if (a < d) {
    const __m256i mk = tail_mask(d - a);
    const __m256d t = _mm256_maskload_pd(xt + a, mk);
    const __m256d vi = _mm256_mul_pd(A, _mm256_sub_pd(_mm256_maskload_pd(xi + a, mk), t));
    const __m256d vj = _mm256_mul_pd(B, _mm256_sub_pd(_mm256_maskload_pd(xj + a, mk), t));
    _mm256_maskstore_pd(gi + a, mk, _mm256_add_pd(_mm256_maskload_pd(gi + a, mk), vi));
    _mm256_maskstore_pd(gj + a, mk, _mm256_add_pd(_mm256_maskload_pd(gj + a, mk), vj));
    _mm256_maskstore_pd(gt + a, mk,
                        _mm256_sub_pd(_mm256_maskload_pd(gt + a, mk), _mm256_add_pd(vi, vj)));
  }
}

// The row path's block with AVX2/FMA: the distances, the rows' coefficients and the
// scatter four coordinates or rows per instruction; the same rows in the same order as
// the portable version, only the rounding differs.
template <bool kLoss, bool kDG>
TS_TARGET_AVX2 void gammackl_row_block(const GammaPower& g, const double* X, std::int64_t d,
                                       const RowBlock& rows, double* G, RowCoefs& co) {
  alignas(32) double Di[kRowBlock], Dj[kRowBlock];
  const int n = rows.n;
  for (int k = 0; k < n; ++k) {
    Di[k] = Dj[k] = 1.0;
    if (rows.live[k])
      avx2::row_sqdist(X + rows.t[k] * d, X + rows.i[k] * d, X + rows.j[k] * d, d, Di[k], Dj[k]);
  }
  for (int k = n; k < ((n + 3) & ~3); ++k) Di[k] = Dj[k] = 1.0;
  avx2::gammackl_rows<kLoss, kDG>(g, Di, Dj, n, co);
  for (int k = 0; k < n; ++k) {
    if (!rows.live[k] || rows.i[k] == rows.j[k]) continue;  // p = 1/2 whatever X: no gradient
    const std::int64_t t = rows.t[k], i = rows.i[k], j = rows.j[k];
    avx2::scatter_row(co.a[k], co.b[k], X + t * d, X + i * d, X + j * d, G + t * d, G + i * d,
                      G + j * d, d);
  }
}

}  // namespace avx2
}  // namespace simd
}  // namespace tripletsearch

#endif  // TS_SIMD_X86
