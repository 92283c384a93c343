// Portable versions of the block kernels (plain C++, fixed summation orders), and the
// bodies that kernels_avx2.hpp compiles a second time for AVX2. See kernels.hpp for what
// each computes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "../core/mathutil.hpp"
#include "../oracle/choice.hpp"
#include "block.hpp"

namespace tripletsearch {
namespace simd {
namespace portable {

// out[j * kLanes + l] = ||x_l - z_j||^2 for the items of a block and NJ points z_j, eight
// lanes at a time with all sums in registers.
template <int NJ>
TS_ALWAYS_INLINE void sqdist_group(const StoreFloat* __restrict xb, std::int64_t d,
                                   const double* __restrict z, double* __restrict out) {
  constexpr int W = 8;
  for (int l0 = 0; l0 < kLanes; l0 += W) {
    double acc[NJ][W] = {};
    for (std::int64_t a = 0; a < d; ++a) {
      const StoreFloat* xa = xb + a * kLanes + l0;
      double x[W];
      for (int q = 0; q < W; ++q) x[q] = xa[q];
      for (int j = 0; j < NJ; ++j) {
        const double za = z[j * d + a];
        for (int q = 0; q < W; ++q) {
          const double u = x[q] - za;
          acc[j][q] += u * u;
        }
      }
    }
    for (int j = 0; j < NJ; ++j)
      for (int q = 0; q < W; ++q) out[j * kLanes + l0 + q] = acc[j][q];
  }
}

inline void block_sqdist(const StoreFloat* __restrict xb, std::int64_t d,
                         const double* __restrict z, int k, double* __restrict out) {
  int j = 0;  // points in groups of four, then one group of the 1..3 left
  for (; j + 4 <= k; j += 4) sqdist_group<4>(xb, d, z + j * d, out + j * kLanes);
  if (k - j == 3) sqdist_group<3>(xb, d, z + j * d, out + j * kLanes);
  if (k - j == 2) sqdist_group<2>(xb, d, z + j * d, out + j * kLanes);
  if (k - j == 1) sqdist_group<1>(xb, d, z + j * d, out + j * kLanes);
}

// y = x - c and wy = w y (d x kLanes scratch each), W and the first moment into acc.
TS_ALWAYS_INLINE void moments_prep(const StoreFloat* __restrict xb, const double* __restrict w,
                                   std::int64_t d, const double* __restrict c,
                                   double* __restrict acc, double* __restrict y,
                                   double* __restrict wy) {
  constexpr int Q = kAccLanes;
  for (std::int64_t a = 0; a < d; ++a)
    for (int l = 0; l < kLanes; ++l) {
      y[a * kLanes + l] = static_cast<double>(xb[a * kLanes + l]) - c[a];
      wy[a * kLanes + l] = w[l] * y[a * kLanes + l];
    }
  for (int l = 0; l < kLanes; l += Q)
    for (int q = 0; q < Q; ++q) acc[q] += w[l + q];
  double* m1 = acc + Q;
  for (std::int64_t a = 0; a < d; ++a)
    for (int l = 0; l < kLanes; l += Q)
      for (int q = 0; q < Q; ++q) m1[a * Q + q] += wy[a * kLanes + l + q];
}

inline void block_moments(const StoreFloat* __restrict xb, const double* __restrict w,
                          std::int64_t d, const double* __restrict c, double* __restrict acc,
                          double* __restrict y, double* __restrict wy) {
  moments_prep(xb, w, d, c, acc, y, wy);
  double* M = acc + kAccLanes * (1 + d);
  for (std::int64_t a = 0; a < d; ++a)
    for (std::int64_t b = a; b < d; ++b) {
      double t[4];
      for (int q = 0; q < 4; ++q) t[q] = M[(a * d + b) * 4 + q];
      for (int l = 0; l < kLanes; l += 4)
        for (int q = 0; q < 4; ++q) t[q] += wy[a * kLanes + l + q] * y[b * kLanes + l + q];
      for (int q = 0; q < 4; ++q) M[(a * d + b) * 4 + q] = t[q];
    }
}

inline std::uint64_t block_pretest(const double* __restrict D, const double* __restrict w,
                                   double thr, ScanRule rule) {
  std::uint64_t mask = 0;
  for (int l = 0; l < kLanes; ++l) {
    bool ok;
    if (rule == ScanRule::Weighted)  // D / w <= thr
      ok = D[l] <= thr * w[l];
    else if (rule == ScanRule::Paper)  // w sqrt(D) <= thr
      ok = w[l] * w[l] * D[l] <= thr * thr;
    else
      ok = D[l] <= thr;
    mask |= std::uint64_t(ok) << l;
  }
  return mask;
}

// Bit l set when a lower bound of lane l's squared Mahalanobis distance to the belief's mean
// (MirrorForm's) may be at most bar >= 0, from yy[l] = |x - mean|^2 and the distances D0,
// D1 to a mirrored pair (discrete/gauss_strip.hpp's MirrorBound).
inline std::uint64_t mirror_pretest(const double* __restrict D0, const double* __restrict D1,
                                    const double* __restrict yy, const MirrorForm& f, double bar) {
  double low = yy[0];
  for (int l = 1; l < kLanes; ++l) low = std::min(low, yy[l]);
  if (low - f.c1 * std::max(low, 0.0) - f.c0 > f.skip * bar) return 0;
  std::uint64_t mask = 0;
  for (int l = 0; l < kLanes; ++l) {
    const double ylow = yy[l] - f.c1 * std::max(yy[l], 0.0) - f.c0;
    const double th = std::abs(D1[l] - D0[l]) * f.i4s + f.ed * D0[l] + f.e1 * D1[l] + f.et;
    mask |= std::uint64_t(f.a * ylow - f.b * th * th <= bar) << l;
  }
  return mask;
}

// block_sqdist, and yy[l] = |x_l - c|^2 in single precision (c32: c rounded), summed over
// the coordinates in order: the strip's pre-test in the screen's pass.
inline void block_sqdist_yy(const StoreFloat* __restrict xb, std::int64_t d,
                            const double* __restrict z, int k, const float* __restrict c32,
                            double* __restrict out, double* __restrict yy) {
  block_sqdist(xb, d, z, k, out);
  float acc[kLanes] = {};
  for (std::int64_t a = 0; a < d; ++a)
    for (int l = 0; l < kLanes; ++l) {
      const float u = xb[a * kLanes + l] - c32[a];
      acc[l] += u * u;
    }
  for (int l = 0; l < kLanes; ++l) yy[l] = acc[l];
}

// For the principal axes beyond kJacobiMaxDim: the weight and first moment of block xb
// around c into acc (as moments_prep, in double: the mean is exact to rounding), and the
// block's weighted second moment around c applied to the p rows of Q32 (p x d) added to
// proj (p x d): proj[j * d + a] += sum_l w_l y_la (y_l . q_j), y = x - c, in single
// precision (8 lanes per instruction; the products steer a subspace iteration, where
// single precision is ample), each sum over the lanes in eight partial sums added in a
// fixed order and into proj in double. c32: c in single precision. y32: d x kLanes, s32:
// p x kLanes scratch.
inline void block_moment1_project(const StoreFloat* __restrict xb, const double* __restrict w,
                                  std::int64_t d, const double* __restrict c,
                                  const float* __restrict c32, const float* __restrict Q32, int p,
                                  double* __restrict acc, double* __restrict proj,
                                  float* __restrict y32, float* __restrict s32) {
  constexpr int Q = kAccLanes;
  for (int l = 0; l < kLanes; l += Q)
    for (int q = 0; q < Q; ++q) acc[q] += w[l + q];
  double* m1 = acc + Q;
  for (std::int64_t a = 0; a < d; ++a)
    for (int l = 0; l < kLanes; ++l) {
      const double y = static_cast<double>(xb[a * kLanes + l]) - c[a];
      m1[a * Q + l % Q] += w[l] * y;
      y32[a * kLanes + l] = xb[a * kLanes + l] - c32[a];
    }
  for (int j = 0; j < p; ++j)
    for (int l = 0; l < kLanes; ++l) {
      float t = 0.0f;
      for (std::int64_t a = 0; a < d; ++a) t += y32[a * kLanes + l] * Q32[j * d + a];
      s32[j * kLanes + l] = t * static_cast<float>(w[l]);
    }
  for (int j = 0; j < p; ++j)
    for (std::int64_t a = 0; a < d; ++a) {
      float t[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
      for (int l = 0; l < kLanes; l += 8)
        for (int q = 0; q < 8; ++q) t[q] += s32[j * kLanes + l + q] * y32[a * kLanes + l + q];
      proj[j * d + a] +=
          static_cast<double>(((t[0] + t[4]) + (t[2] + t[6])) + ((t[1] + t[5]) + (t[3] + t[7])));
    }
}

// ||x_l - z||^2 for lane l of block xb, summed over the coordinates in order: the value
// block_sqdist gives that lane (multiply and add here, fused in the AVX2 version).
inline double lane_sqdist(const StoreFloat* __restrict xb, std::int64_t d, int l,
                          const double* __restrict z) {
  double acc = 0.0;
  for (std::int64_t a = 0; a < d; ++a) {
    const double u = static_cast<double>(xb[a * kLanes + l]) - z[a];
    acc += u * u;
  }
  return acc;
}

// yy[l] = ||y_l||^2 and yv[e * kLanes + l] = y_l . v_e for y = x - c32 over the items of
// a block and the ne rows v_e of V32 (ne x d), in single precision (a pre-test's input:
// AxisProtos in discrete/scan.hpp bounds the rounding), each summed over the coordinates in
// order.
inline void block_axis_proj(const StoreFloat* __restrict xb, std::int64_t d,
                            const float* __restrict c32, const float* __restrict V32, int ne,
                            double* __restrict yy, double* __restrict yv) {
  for (int l = 0; l < kLanes; ++l) {
    float s = 0.0f;
    for (std::int64_t a = 0; a < d; ++a) {
      const float u = xb[a * kLanes + l] - c32[a];
      s += u * u;
    }
    yy[l] = s;
    for (int e = 0; e < ne; ++e) {
      float t = 0.0f;
      for (std::int64_t a = 0; a < d; ++a) t += (xb[a * kLanes + l] - c32[a]) * V32[e * d + a];
      yv[e * kLanes + l] = t;
    }
  }
}

// ---- bodies compiled once per ISA (here and in kernels_avx2.hpp)

// Dt[l] = yy - 2 s yv + s^2 - (g8 ((sy + 2|s|)^2 + cn (sy + 2|s|)) + 1e-9 ((sy + |s|)^2 +
// zz)): a lower bound of ||x_l - z||^2 for a proto z = center + s v (scan.hpp's AxisForm).
TS_ALWAYS_INLINE void axis_lower_bound_body(const double* __restrict yy,
                                            const double* __restrict sy,
                                            const double* __restrict yv, double s, double g8,
                                            double cn, double zz, double* __restrict Dt) {
  const double as = s < 0.0 ? -s : s;
  for (int l = 0; l < kLanes; ++l) {
    const double t1 = sy[l] + as, t2 = t1 + as;
    Dt[l] = yy[l] - 2.0 * s * yv[l] + s * s - (g8 * (t2 * t2 + cn * t2) + 1e-9 * (t1 * t1 + zz));
  }
}

TS_ALWAYS_INLINE void block_choice_lik_body(const GammaPower& g, const double* __restrict D, int k,
                                            int chosen, double* __restrict lik) {
  double scratch[4 * kLanes];
  choice_lik_lanes<double, kLanes>(g, D, k, chosen, lik, scratch);
}

TS_ALWAYS_INLINE void points_sqdist_body(const double* __restrict xc, const double* __restrict xsT,
                                         int S, std::int64_t d, double* __restrict D) {
  for (int s = 0; s < S; ++s) D[s] = 0.0;
  for (std::int64_t b = 0; b < d; ++b) {
    const double x = xc[b];
    const double* row = xsT + b * S;
    for (int s = 0; s < S; ++s) {
      const double t = row[s] - x;
      D[s] += t * t;
    }
  }
  for (int s = 0; s < S; ++s) D[s] = std::max(D[s], kTinyDistance);
}

TS_ALWAYS_INLINE void relative_weights_body(const GammaPower& g, const double* __restrict dmin,
                                            int S, double* __restrict u, double* __restrict base) {
  ::tripletsearch::relative_weights(g, dmin, S, u, base);
}

TS_ALWAYS_INLINE void pair_gini_body(const double* __restrict ui, const double* __restrict uj,
                                     const double* __restrict in, int S, double* a_out,
                                     double* cond_out) {
  constexpr int kChunk = 64;
  double ta[kChunk], tc[kChunk];
  double a[4] = {0.0, 0.0, 0.0, 0.0}, cond[4] = {0.0, 0.0, 0.0, 0.0};
  for (int s0 = 0; s0 < S; s0 += kChunk) {
    const int m = std::min(kChunk, S - s0);
    for (int s = 0; s < m; ++s) {
      const double den = ui[s0 + s] + uj[s0 + s];
      const double inv = 1.0 / den;  // inf when den = 0: not used then
      const double pr = ui[s0 + s] * inv, qr = uj[s0 + s] * inv;
      const double p = den > 0.0 ? pr : 0.5, q = den > 0.0 ? qr : 0.5;
      ta[s] = in[s0 + s] * p;
      tc[s] = in[s0 + s] * (2.0 * p * q);
    }
    int s = 0;  // kChunk is a multiple of 4: lane = (s0 + s) mod 4
    for (; s + 4 <= m; s += 4)
      for (int l = 0; l < 4; ++l) {
        a[l] += ta[s + l];
        cond[l] += tc[s + l];
      }
    for (int l = 0; s < m; ++s, ++l) {
      a[l] += ta[s];
      cond[l] += tc[s];
    }
  }
  *a_out = (a[0] + a[1]) + (a[2] + a[3]);
  *cond_out = (cond[0] + cond[1]) + (cond[2] + cond[3]);
}

inline void block_choice_lik(const GammaPower& g, const double* D, int k, int chosen, double* lik) {
  block_choice_lik_body(g, D, k, chosen, lik);
}
inline void axis_lower_bound(const double* yy, const double* sy, const double* yv, double s,
                             double g8, double cn, double zz, double* Dt) {
  axis_lower_bound_body(yy, sy, yv, s, g8, cn, zz, Dt);
}
inline void points_sqdist(const double* xc, const double* xsT, int S, std::int64_t d, double* D) {
  points_sqdist_body(xc, xsT, S, d, D);
}
inline void relative_weights(const GammaPower& g, const double* dmin, int S, double* u,
                             double* base) {
  relative_weights_body(g, dmin, S, u, base);
}
inline void pair_gini(const double* ui, const double* uj, const double* in, int S, double* a,
                      double* cond) {
  pair_gini_body(ui, uj, in, S, a, cond);
}

}  // namespace portable
}  // namespace simd
}  // namespace tripletsearch
