// The gamma-CKL rows of the embedding's gradient, a block at a time: from each row's
// squared distances, log p, the gradient coefficients and d log p / d log gamma
// (oracle/choice.hpp's gammackl_row). The portable version is that function in a loop; the
// AVX2/FMA version runs four rows per instruction with its own exp and log
// (vmath_avx2.hpp), equal to the portable one to a few units in the last place.
#pragma once

#include <algorithm>

#include "../oracle/choice.hpp"
#include "dispatch.hpp"
#include "vmath_avx2.hpp"

namespace tripletsearch {
namespace simd {

constexpr int kRowBlock = 64;  // rows per block of the row path

// A block's per-row results (rows beyond the block's count are scratch).
struct RowCoefs {
  alignas(32) double a[kRowBlock];
  alignas(32) double b[kRowBlock];
  alignas(32) double logp[kRowBlock];
  alignas(32) double dlg[kRowBlock];
};

namespace portable {
template <bool kLoss, bool kDG>
inline void gammackl_rows(const GammaPower& g, const double* Di, const double* Dj, int n,
                          RowCoefs& out) {
  for (int k = 0; k < n; ++k)
    gammackl_row<kLoss, kDG>(g, Di[k], Dj[k], out.a[k], out.b[k], out.logp[k], out.dlg[k]);
}
}  // namespace portable

#ifdef TS_SIMD_X86
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
    const __m256d di = _mm256_max_pd(_mm256_loadu_pd(Di + k), tiny);
    const __m256d dj = _mm256_max_pd(_mm256_loadu_pd(Dj + k), tiny);
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
    const __m256d di = _mm256_max_pd(di0, tiny), dj = _mm256_max_pd(dj0, tiny);
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
}  // namespace avx2
#endif

// The rows of one block (n <= kRowBlock; Di and Dj readable up to n rounded up to 4).
template <bool kLoss, bool kDG>
inline void gammackl_rows(const GammaPower& g, const double* Di, const double* Dj, int n,
                          RowCoefs& out) {
#ifdef TS_SIMD_X86
  if (active_isa() == Isa::AVX2) return avx2::gammackl_rows<kLoss, kDG>(g, Di, Dj, n, out);
#endif
  portable::gammackl_rows<kLoss, kDG>(g, Di, Dj, n, out);
}

}  // namespace simd
}  // namespace tripletsearch
