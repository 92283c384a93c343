// AVX2/FMA versions of the block kernels (x86-64, GCC or Clang): intrinsics for the
// distance scans, the moment tiles and the pre-test; the portable bodies compiled for AVX2
// for the rest. Called only when simd::active_isa() is AVX2 (kernels.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "dispatch.hpp"
#include "kernels_portable.hpp"

#ifdef TS_SIMD_X86
#include <immintrin.h>

namespace tripletsearch {
namespace simd {
namespace avx2 {

// A lane group's walk down the coordinates of a block reads one cache line per
// coordinate, kLanes floats apart, a stride the hardware prefetchers do not follow: a store
// of many dimensions then streams at a fraction of its bandwidth (d = 512: 41 ms per pass
// over 1e5 items where a sequential sum takes 18). So the first lane group of a block
// asks, per coordinate a, for row a of the next block (four lines): 29 ms.
TS_TARGET_AVX2 TS_ALWAYS_INLINE void prefetch_next_row(const StoreFloat* xb, std::int64_t d,
                                                       std::int64_t a) {
  // an address, not a pointer into the store: past the last block it names nothing, and a
  // prefetch of it is a no-op
  const std::uintptr_t row = reinterpret_cast<std::uintptr_t>(xb) +
                             static_cast<std::uintptr_t>((d + a) * kLanes) * sizeof(StoreFloat);
  for (std::uintptr_t q = 0; q < kLanes * sizeof(StoreFloat); q += 64)
    _mm_prefetch(reinterpret_cast<const char*>(row + q), _MM_HINT_T0);
}

// Eight single-precision lanes stored as doubles.
TS_TARGET_AVX2 TS_ALWAYS_INLINE void store_ps_as_pd(double* dst, __m256 v) {
  _mm256_storeu_pd(dst, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
  _mm256_storeu_pd(dst + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

// Eight lanes in two registers per point, NJ points at a time; with YY also the lanes'
// |x - c|^2 in single precision into yy (c32: c rounded; one fused multiply-add per
// coordinate, in order).
template <int NJ, bool YY = false>
TS_TARGET_AVX2 TS_ALWAYS_INLINE void sqdist_group(const StoreFloat* __restrict xb, std::int64_t d,
                                                  const double* __restrict z,
                                                  double* __restrict out,
                                                  const float* __restrict c32 = nullptr,
                                                  double* __restrict yy = nullptr) {
  for (int l0 = 0; l0 < kLanes; l0 += 8) {
    __m256d lo[NJ], hi[NJ];
    __m256 yf = _mm256_setzero_ps();
    for (int j = 0; j < NJ; ++j) lo[j] = hi[j] = _mm256_setzero_pd();
    for (std::int64_t a = 0; a < d; ++a) {
      if (l0 == 0) prefetch_next_row(xb, d, a);
      const __m256 x8 = _mm256_loadu_ps(xb + a * kLanes + l0);
      if constexpr (YY) {
        const __m256 u = _mm256_sub_ps(x8, _mm256_broadcast_ss(c32 + a));
        yf = _mm256_fmadd_ps(u, u, yf);
      }
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
    if constexpr (YY) store_ps_as_pd(yy + l0, yf);
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

// block_sqdist (the same groups, the same values) with |x - c|^2 in the first group's pass.
TS_TARGET_AVX2 inline void block_sqdist_yy(const StoreFloat* __restrict xb, std::int64_t d,
                                           const double* __restrict z, int k,
                                           const float* __restrict c32, double* __restrict out,
                                           double* __restrict yy) {
  const int first = k >= 4 ? 4 : k;
  if (first == 4) sqdist_group<4, true>(xb, d, z, out, c32, yy);
  if (first == 3) sqdist_group<3, true>(xb, d, z, out, c32, yy);
  if (first == 2) sqdist_group<2, true>(xb, d, z, out, c32, yy);
  if (first == 1) sqdist_group<1, true>(xb, d, z, out, c32, yy);
  if (k > first) block_sqdist(xb, d, z + first * d, k - first, out + first * kLanes);
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

// ((t0 + t4) + (t2 + t6)) + ((t1 + t5) + (t3 + t7)): the portable order.
TS_TARGET_AVX2 TS_ALWAYS_INLINE float hsum8(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 h = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}

// Coordinate a of a block: y32 = x - c32 stored, and the lanes of the first moment
// sum w (x - c) added to m0 (lanes 0-3 mod 8) and mh (4-7).
TS_TARGET_AVX2 TS_ALWAYS_INLINE void moment1_lanes(
    const StoreFloat* __restrict xb, const double* __restrict w, const double* __restrict c,
    const float* __restrict c32, std::int64_t a, float* __restrict y32, __m256d& m0, __m256d& mh) {
  const __m256d ca = _mm256_broadcast_sd(c + a);
  const __m256 c8 = _mm256_broadcast_ss(c32 + a);
  for (int r = 0; r < 8; ++r) {
    const __m256 x8 = _mm256_loadu_ps(xb + a * kLanes + 8 * r);
    _mm256_storeu_ps(y32 + a * kLanes + 8 * r, _mm256_sub_ps(x8, c8));
    const __m256d y0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(x8)), ca);
    const __m256d y1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(x8, 1)), ca);
    m0 = _mm256_fmadd_pd(_mm256_loadu_pd(w + 8 * r), y0, m0);
    mh = _mm256_fmadd_pd(_mm256_loadu_pd(w + 8 * r + 4), y1, mh);
  }
}

// portable::block_moment1_project with fused multiply-adds (the same sums in the same
// order, rounded once per multiply-add).
TS_TARGET_AVX2 inline void block_moment1_project(
    const StoreFloat* __restrict xb, const double* __restrict w, std::int64_t d,
    const double* __restrict c, const float* __restrict c32, const float* __restrict Q32, int p,
    double* __restrict acc, double* __restrict proj, float* __restrict y32, float* __restrict s32) {
  static_assert(kAccLanes == 8, "two registers of partial sums");
  __m256d W0 = _mm256_loadu_pd(acc), W1 = _mm256_loadu_pd(acc + 4);
  __m256 w32[8];
  for (int r = 0; r < 8; ++r) {
    const __m256d lo = _mm256_loadu_pd(w + 8 * r), hi = _mm256_loadu_pd(w + 8 * r + 4);
    W0 = _mm256_add_pd(W0, lo);
    W1 = _mm256_add_pd(W1, hi);
    w32[r] = _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
  }
  _mm256_storeu_pd(acc, W0);
  _mm256_storeu_pd(acc + 4, W1);
  double* m1 = acc + kAccLanes;
  std::int64_t a = 0;
  for (; a + 2 <= d; a += 2) {  // two coordinates interleaved: four independent chains
    __m256d m0 = _mm256_loadu_pd(m1 + a * 8), mh = _mm256_loadu_pd(m1 + a * 8 + 4);
    __m256d n0 = _mm256_loadu_pd(m1 + a * 8 + 8), nh = _mm256_loadu_pd(m1 + a * 8 + 12);
    moment1_lanes(xb, w, c, c32, a, y32, m0, mh);
    moment1_lanes(xb, w, c, c32, a + 1, y32, n0, nh);
    _mm256_storeu_pd(m1 + a * 8, m0);
    _mm256_storeu_pd(m1 + a * 8 + 4, mh);
    _mm256_storeu_pd(m1 + a * 8 + 8, n0);
    _mm256_storeu_pd(m1 + a * 8 + 12, nh);
  }
  if (a < d) {
    __m256d m0 = _mm256_loadu_pd(m1 + a * 8), mh = _mm256_loadu_pd(m1 + a * 8 + 4);
    moment1_lanes(xb, w, c, c32, a, y32, m0, mh);
    _mm256_storeu_pd(m1 + a * 8, m0);
    _mm256_storeu_pd(m1 + a * 8 + 4, mh);
  }
  for (int j = 0; j < p; ++j) {  // s_j = w (Y^T q_j)
    __m256 t[8];
    for (int r = 0; r < 8; ++r) t[r] = _mm256_setzero_ps();
    for (std::int64_t a = 0; a < d; ++a) {
      const __m256 q = _mm256_broadcast_ss(Q32 + j * d + a);
      for (int r = 0; r < 8; ++r)
        t[r] = _mm256_fmadd_ps(_mm256_loadu_ps(y32 + a * kLanes + 8 * r), q, t[r]);
    }
    for (int r = 0; r < 8; ++r)
      _mm256_storeu_ps(s32 + j * kLanes + 8 * r, _mm256_mul_ps(t[r], w32[r]));
  }
  for (std::int64_t a = 0; a < d; ++a)  // proj_j += sum_l s_jl y_l, four vectors at a time
    for (int j = 0; j < p; j += 4) {
      const int g = std::min(4, p - j);
      __m256 t[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                     _mm256_setzero_ps()};
      for (int r = 0; r < 8; ++r) {
        const __m256 yl = _mm256_loadu_ps(y32 + a * kLanes + 8 * r);
        for (int u = 0; u < g; ++u)
          t[u] = _mm256_fmadd_ps(_mm256_loadu_ps(s32 + (j + u) * kLanes + 8 * r), yl, t[u]);
      }
      for (int u = 0; u < g; ++u) proj[(j + u) * d + a] += static_cast<double>(hsum8(t[u]));
    }
}

TS_TARGET_AVX2 inline double lane_sqdist(const StoreFloat* __restrict xb, std::int64_t d, int l,
                                         const double* __restrict z) {
  double acc = 0.0;  // block_sqdist's lane: one fused multiply-add per coordinate, in order
  for (std::int64_t a = 0; a < d; ++a) {
    const double u = static_cast<double>(xb[a * kLanes + l]) - z[a];
    acc = std::fma(u, u, acc);
  }
  return acc;
}

// portable::block_axis_proj with fused multiply-adds, sixteen lanes and up to three
// vectors at a time.
TS_TARGET_AVX2 inline void block_axis_proj(const StoreFloat* __restrict xb, std::int64_t d,
                                           const float* __restrict c32, const float* __restrict V32,
                                           int ne, double* __restrict yy, double* __restrict yv) {
  for (int l0 = 0; l0 < kLanes; l0 += 16)
    for (int e0 = 0; e0 < std::max(ne, 1); e0 += 3) {
      const int g = std::min(3, ne - e0);
      __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
      __m256 p0[3], p1[3];
      for (int e = 0; e < 3; ++e) p0[e] = p1[e] = _mm256_setzero_ps();
      for (std::int64_t a = 0; a < d; ++a) {
        if (l0 == 0 && e0 == 0) prefetch_next_row(xb, d, a);
        const __m256 ca = _mm256_broadcast_ss(c32 + a);
        const __m256 u0 = _mm256_sub_ps(_mm256_loadu_ps(xb + a * kLanes + l0), ca);
        const __m256 u1 = _mm256_sub_ps(_mm256_loadu_ps(xb + a * kLanes + l0 + 8), ca);
        if (e0 == 0) {
          s0 = _mm256_fmadd_ps(u0, u0, s0);
          s1 = _mm256_fmadd_ps(u1, u1, s1);
        }
        for (int e = 0; e < g; ++e) {
          const __m256 v = _mm256_broadcast_ss(V32 + (e0 + e) * d + a);
          p0[e] = _mm256_fmadd_ps(u0, v, p0[e]);
          p1[e] = _mm256_fmadd_ps(u1, v, p1[e]);
        }
      }
      if (e0 == 0) {
        store_ps_as_pd(yy + l0, s0);
        store_ps_as_pd(yy + l0 + 8, s1);
      }
      for (int e = 0; e < g; ++e) {
        store_ps_as_pd(yv + (e0 + e) * kLanes + l0, p0[e]);
        store_ps_as_pd(yv + (e0 + e) * kLanes + l0 + 8, p1[e]);
      }
    }
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

// portable::mirror_pretest, four lanes at a time (the same bound; fused multiply-adds may
// round its last bits otherwise, within the bound's margins).
TS_TARGET_AVX2 inline std::uint64_t mirror_pretest(const double* __restrict D0,
                                                   const double* __restrict D1,
                                                   const double* __restrict yy,
                                                   const MirrorForm& f, double bar) {
  const __m256d zero = _mm256_setzero_pd(), sign = _mm256_set1_pd(-0.0);
  const __m256d c1 = _mm256_set1_pd(f.c1), c0 = _mm256_set1_pd(f.c0), i4s = _mm256_set1_pd(f.i4s);
  const __m256d ed = _mm256_set1_pd(f.ed), e1 = _mm256_set1_pd(f.e1), et = _mm256_set1_pd(f.et);
  const __m256d av = _mm256_set1_pd(f.a), bv = _mm256_set1_pd(f.b), barv = _mm256_set1_pd(bar);
  __m256d m4 = _mm256_loadu_pd(yy);  // the block's least |y|^2 first: most blocks stop here
  for (int l = 4; l < kLanes; l += 4) m4 = _mm256_min_pd(m4, _mm256_loadu_pd(yy + l));
  alignas(32) double m[4];
  _mm256_store_pd(m, m4);
  const double low = std::min(std::min(m[0], m[1]), std::min(m[2], m[3]));
  if (low - f.c1 * std::max(low, 0.0) - f.c0 > f.skip * bar) return 0;
  std::uint64_t mask = 0;
  for (int l = 0; l < kLanes; l += 4) {
    const __m256d y = _mm256_loadu_pd(yy + l);
    const __m256d ylow = _mm256_sub_pd(_mm256_fnmadd_pd(c1, _mm256_max_pd(y, zero), y), c0);
    const __m256d d0 = _mm256_loadu_pd(D0 + l), d1 = _mm256_loadu_pd(D1 + l);
    __m256d th = _mm256_fmadd_pd(ed, d0, _mm256_fmadd_pd(e1, d1, et));
    th = _mm256_fmadd_pd(_mm256_andnot_pd(sign, _mm256_sub_pd(d1, d0)), i4s, th);
    const __m256d lb = _mm256_fmsub_pd(av, ylow, _mm256_mul_pd(bv, _mm256_mul_pd(th, th)));
    mask |= std::uint64_t(_mm256_movemask_pd(_mm256_cmp_pd(lb, barv, _CMP_LE_OQ))) << l;
  }
  return mask;
}

TS_TARGET_AVX2 inline void axis_lower_bound(const double* yy, const double* sy, const double* yv,
                                            double s, double g8, double cn, double zz, double* Dt) {
  portable::axis_lower_bound_body(yy, sy, yv, s, g8, cn, zz, Dt);
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
