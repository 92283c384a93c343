// Database search: gamma-CKLSearch (the paper's appendix), GaussSearch (Chumbalov et al.
// 2020) and a random baseline, for a user looking for one of n items with known
// embedding. Each query shows k items; the user picks the one closest to the target,
// until the target itself is shown.
//
// Storage: items in blocks of 64 (coordinate a of item i at
// data[(i / 64) * d * 64 + a * 64 + i % 64]) so that every pass over the database runs
// SIMD across items. Per query two passes: tell() updates the posterior and its moments,
// ask() scans for the items nearest the proto-queries. Reductions go through per-chunk
// accumulators merged in chunk order (chunk boundaries depend on n only): results are
// identical for any thread count. python/tripletsearch/_reference/discrete.py is the
// NumPy twin.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "mathutil.hpp"
#include "oracle.hpp"
#include "parallel.hpp"
#include "rng.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) && \
    !defined(TRIPLETSEARCH_NO_SIMD_CLONES)
// AVX2 and baseline versions of the block kernels, picked at load time (no -march flag).
#define TS_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TS_SIMD_CLONES
#endif

namespace tripletsearch {

constexpr std::int64_t kLanes = 64;          // items per block
constexpr int kAccLanes = 8;                 // partial sums per moment (SIMD-friendly, fixed order)
constexpr std::int64_t kParallelBlocks = 8;  // below this many blocks a pass runs serially

// The database, stored in single precision (like FAISS): a pass over a million items in
// ten dimensions streams 40 MB instead of 80 MB, and memory bandwidth is what bounds a
// query. Arithmetic is in double precision.
using StoreFloat = float;

class ItemStore {
 public:
  ItemStore(const double* X, std::int64_t n, std::int64_t d)
      : n_(n),
        d_(d),
        nb_((n + kLanes - 1) / kLanes),
        data_(static_cast<std::size_t>(nb_ * d * kLanes), StoreFloat(0)) {
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t a = 0; a < d; ++a)
        data_[index(i, a)] = static_cast<StoreFloat>(X[i * d + a]);
  }
  std::int64_t n() const { return n_; }
  std::int64_t d() const { return d_; }
  std::int64_t blocks() const { return nb_; }
  const StoreFloat* block(std::int64_t b) const { return data_.data() + b * d_ * kLanes; }
  double coord(std::int64_t i, std::int64_t a) const { return data_[index(i, a)]; }
  void row(std::int64_t i, double* out) const {
    for (std::int64_t a = 0; a < d_; ++a) out[a] = coord(i, a);
  }

 private:
  std::size_t index(std::int64_t i, std::int64_t a) const {
    return static_cast<std::size_t>((i / kLanes) * d_ * kLanes + a * kLanes + i % kLanes);
  }
  std::int64_t n_, d_, nb_;
  std::vector<StoreFloat> data_;
};

// ---------------------------------------------------------------- block kernels

// out[j * 64 + l] = ||x_l - z_j||^2 for the 64 items of a block and NJ points z_j, eight
// lanes at a time with all sums in registers.
template <int NJ>
__attribute__((always_inline)) inline void sqdist_group(const StoreFloat* __restrict xb,
                                                        std::int64_t d, const double* __restrict z,
                                                        double* __restrict out) {
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

#if defined(__x86_64__) && defined(__GNUC__) && !defined(TRIPLETSEARCH_NO_SIMD_CLONES)
#define TS_HAVE_AVX2_SQDIST 1
// AVX2/FMA: eight lanes in two registers per point, up to four points at a time.
template <int NJ>
__attribute__((target("avx2,fma"), always_inline)) inline void sqdist_group_avx2(
    const StoreFloat* __restrict xb, std::int64_t d, const double* __restrict z,
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

__attribute__((target("avx2,fma"))) inline void block_sqdist_avx2(const StoreFloat* __restrict xb,
                                                                  std::int64_t d,
                                                                  const double* __restrict z, int k,
                                                                  double* __restrict out) {
  int j = 0;
  for (; j + 4 <= k; j += 4) sqdist_group_avx2<4>(xb, d, z + j * d, out + j * kLanes);
  switch (k - j) {
    case 3:
      sqdist_group_avx2<3>(xb, d, z + j * d, out + j * kLanes);
      break;
    case 2:
      sqdist_group_avx2<2>(xb, d, z + j * d, out + j * kLanes);
      break;
    case 1:
      sqdist_group_avx2<1>(xb, d, z + j * d, out + j * kLanes);
      break;
    default:
      break;
  }
}
#endif

inline void block_sqdist_portable(const StoreFloat* __restrict xb, std::int64_t d,
                                  const double* __restrict z, int k, double* __restrict out);

// out[j * 64 + l] = ||x_l - z_j||^2 for the 64 items of a block and k points z_j (k x d).
inline void block_sqdist(const StoreFloat* __restrict xb, std::int64_t d,
                         const double* __restrict z, int k, double* __restrict out) {
#ifdef TS_HAVE_AVX2_SQDIST
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return block_sqdist_avx2(xb, d, z, k, out);
#endif
  block_sqdist_portable(xb, d, z, k, out);
}

inline void block_sqdist_portable(const StoreFloat* __restrict xb, std::int64_t d,
                                  const double* __restrict z, int k, double* __restrict out) {
  int j = 0;
  for (; j + 4 <= k; j += 4) sqdist_group<4>(xb, d, z + j * d, out + j * kLanes);
  switch (k - j) {
    case 3:
      sqdist_group<3>(xb, d, z + j * d, out + j * kLanes);
      break;
    case 2:
      sqdist_group<2>(xb, d, z + j * d, out + j * kLanes);
      break;
    case 1:
      sqdist_group<1>(xb, d, z + j * d, out + j * kLanes);
      break;
    default:
      break;
  }
}

// Weighted moments of a block around c, accumulated in fixed partial sums:
// acc = [W (8 lanes) | sum w (x - c) (d x 8 lanes) | sum w (x - c)(x - c)^T (d x d x 4
// lanes, upper triangle used)]. Lane q of a pair sums the items l = q, q + 4, ... in order.
inline std::int64_t moment_size(std::int64_t d) { return kAccLanes * (1 + d) + 4 * d * d; }

// y = x - c, wy = w y (d x 64 scratch each), W and the first moment.
__attribute__((always_inline)) inline void moments_prep(const StoreFloat* __restrict xb,
                                                        const double* __restrict w, std::int64_t d,
                                                        const double* __restrict c,
                                                        double* __restrict acc,
                                                        double* __restrict y,
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

inline void block_moments_portable(const StoreFloat* __restrict xb, const double* __restrict w,
                                   std::int64_t d, const double* __restrict c,
                                   double* __restrict acc, double* __restrict y,
                                   double* __restrict wy) {
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

#if defined(__x86_64__) && defined(__GNUC__) && !defined(TRIPLETSEARCH_NO_SIMD_CLONES)
#define TS_HAVE_AVX2_MOMENTS 1
// AVX2/FMA version: the outer products in 3 x 3 register tiles (9 accumulators, 6 loads
// per 9 fused multiply-adds), picked at run time when the CPU has AVX2 and FMA.
template <int TA, int TB>
__attribute__((target("avx2,fma"), always_inline)) inline void moment_tile(
    const double* __restrict wy, const double* __restrict y, std::int64_t a0, std::int64_t b0,
    std::int64_t d, double* __restrict M) {
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

__attribute__((target("avx2,fma"))) inline void block_moments_avx2(
    const StoreFloat* __restrict xb, const double* __restrict w, std::int64_t d,
    const double* __restrict c, double* __restrict acc, double* __restrict y,
    double* __restrict wy) {
  moments_prep(xb, w, d, c, acc, y, wy);
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

inline bool cpu_has_avx2_fma() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}
#endif

inline void block_moments(const StoreFloat* __restrict xb, const double* __restrict w,
                          std::int64_t d, const double* __restrict c, double* __restrict acc,
                          double* __restrict y, double* __restrict wy) {
#ifdef TS_HAVE_AVX2_MOMENTS
  if (cpu_has_avx2_fma()) return block_moments_avx2(xb, w, d, c, acc, y, wy);
#endif
  block_moments_portable(xb, w, d, c, acc, y, wy);
}

// gamma-CKL choice likelihood of a block: P(user picks shown item c | target = item l)
// = 1 / sum_j (D_c / D_j)^(gamma/2), evaluated as (D_min/D_c)^(g/2) / sum_j (D_min/D_j)^(g/2)
// (every base <= 1: no overflow; squared distances floored at DBL_MIN).
struct ChoicePower {
  double half_gamma;
  int int_gamma;  // gamma as an integer in [1, 256], or -1 (then pow via log/exp)
  explicit ChoicePower(double gamma)
      : half_gamma(0.5 * gamma),
        int_gamma((gamma == std::floor(gamma) && gamma >= 1.0 && gamma <= 256.0) ? int(gamma)
                                                                                 : -1) {}
};

TS_SIMD_CLONES
inline void block_choice_lik(const double* __restrict D /* k x 64 */, int k, int chosen,
                             double half_gamma, int int_gamma, double* __restrict lik) {
  double dmin[kLanes], den[kLanes], s[kLanes], pw[kLanes], base[kLanes];
  auto power = [&]() {  // pw = s^(gamma/2), all lanes
    if (int_gamma > 0) {
      for (int l = 0; l < kLanes; ++l) {
        pw[l] = (int_gamma & 1) ? std::sqrt(s[l]) : 1.0;
        base[l] = s[l];
      }
      for (int e = int_gamma >> 1; e > 0; e >>= 1) {
        if (e & 1)
          for (int l = 0; l < kLanes; ++l) pw[l] *= base[l];
        for (int l = 0; l < kLanes; ++l) base[l] *= base[l];
      }
    } else {
      for (int l = 0; l < kLanes; ++l) pw[l] = std::exp(half_gamma * std::log(s[l]));
    }
  };
  if (k == 2) {  // 1 / (1 + (Dc/Do)^(g/2)) with the base min/max <= 1
    const double* Dc = D + chosen * kLanes;
    const double* Do = D + (1 - chosen) * kLanes;
    for (int l = 0; l < kLanes; ++l) {
      const double a = std::max(Dc[l], kTinyDistance), b = std::max(Do[l], kTinyDistance);
      s[l] = std::min(a, b) / std::max(a, b);
    }
    power();
    for (int l = 0; l < kLanes; ++l) {
      const double num = Dc[l] <= Do[l] ? 1.0 : pw[l];
      lik[l] = num / (1.0 + pw[l]);
    }
    return;
  }
  for (int l = 0; l < kLanes; ++l) {
    double m = std::max(D[l], kTinyDistance);
    for (int j = 1; j < k; ++j) m = std::min(m, std::max(D[j * kLanes + l], kTinyDistance));
    dmin[l] = m;
    den[l] = 0.0;
  }
  for (int j = 0; j < k; ++j) {
    for (int l = 0; l < kLanes; ++l) s[l] = dmin[l] / std::max(D[j * kLanes + l], kTinyDistance);
    power();
    for (int l = 0; l < kLanes; ++l) den[l] += pw[l];
    if (j == chosen)
      for (int l = 0; l < kLanes; ++l) lik[l] = pw[l];
  }
  for (int l = 0; l < kLanes; ++l) lik[l] /= den[l];
}

// Pre-test of a block's lanes against a proto's current k-th best score thr (slightly
// relaxed: the exact score decides later): bit l is set when lane l may enter the list.
inline std::uint64_t block_pretest_portable(const double* __restrict D, const double* __restrict w,
                                            double thr, int rule) {
  std::uint64_t mask = 0;
  for (int l = 0; l < kLanes; ++l) {
    bool ok;
    if (rule == 0)  // weighted: D / w <= thr
      ok = D[l] <= thr * w[l];
    else if (rule == 1)  // paper: w sqrt(D) <= thr
      ok = w[l] * w[l] * D[l] <= thr * thr;
    else
      ok = D[l] <= thr;
    mask |= std::uint64_t(ok) << l;
  }
  return mask;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(TRIPLETSEARCH_NO_SIMD_CLONES)
__attribute__((target("avx2,fma"))) inline std::uint64_t block_pretest_avx2(
    const double* __restrict D, const double* __restrict w, double thr, int rule) {
  const __m256d t = _mm256_set1_pd(thr), t2 = _mm256_set1_pd(thr * thr);
  std::uint64_t mask = 0;
  for (int l = 0; l < kLanes; l += 4) {
    const __m256d dv = _mm256_loadu_pd(D + l), wv = _mm256_loadu_pd(w + l);
    __m256d c;
    if (rule == 0)
      c = _mm256_cmp_pd(dv, _mm256_mul_pd(t, wv), _CMP_LE_OQ);
    else if (rule == 1)
      c = _mm256_cmp_pd(_mm256_mul_pd(_mm256_mul_pd(wv, wv), dv), t2, _CMP_LE_OQ);
    else
      c = _mm256_cmp_pd(dv, t, _CMP_LE_OQ);
    mask |= std::uint64_t(_mm256_movemask_pd(c)) << l;
  }
  return mask;
}
#endif

inline int ctz64(std::uint64_t x) {
#if defined(__GNUC__)
  return __builtin_ctzll(x);
#else
  int n = 0;
  while (!(x & 1)) {
    x >>= 1;
    ++n;
  }
  return n;
#endif
}

inline std::uint64_t block_pretest(const double* __restrict D, const double* __restrict w,
                                   double thr, int rule) {
  if (!(thr < std::numeric_limits<double>::infinity())) return ~std::uint64_t(0);
#ifdef TS_HAVE_AVX2_SQDIST
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return block_pretest_avx2(D, w, thr, rule);
#endif
  return block_pretest_portable(D, w, thr, rule);
}

// Squared distances from one point xs (d) to nc points stored dimension-major
// (xcT[b * nc + c]): out[c].
TS_SIMD_CLONES
inline void sqdist_transposed(const double* __restrict xcT, int nc, std::int64_t d,
                              const double* __restrict xs, double* __restrict out) {
  for (int c = 0; c < nc; ++c) out[c] = 0.0;
  for (std::int64_t b = 0; b < d; ++b) {
    const double* row = xcT + b * nc;
    const double x = xs[b];
    for (int c = 0; c < nc; ++c) {
      const double u = row[c] - x;
      out[c] += u * u;
    }
  }
}

// Relative choice weights of candidates for S posterior draws, in two steps:
// draw_sqdist gives D[s] = ||draw s - candidate||^2 (floored) for one candidate (xc, d),
// draws dimension-major (xsT: d x S); draw_power turns it into
// u[s] = (dmin[s] / D[s])^(gamma/2), dmin[s] the minimum over all candidates.
TS_SIMD_CLONES
inline void draw_sqdist(const double* __restrict xc, const double* __restrict xsT, int S,
                        std::int64_t d, double* __restrict D) {
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

TS_SIMD_CLONES
inline void draw_power(const double* __restrict dmin, int S, double half_gamma, int int_gamma,
                       double* __restrict u /* in: D, out: weights */,
                       double* __restrict base /* S scratch */) {
  for (int s = 0; s < S; ++s) u[s] = dmin[s] / u[s];
  if (int_gamma > 0) {
    for (int s = 0; s < S; ++s) {
      base[s] = u[s];
      u[s] = (int_gamma & 1) ? std::sqrt(u[s]) : 1.0;
    }
    for (int e = int_gamma >> 1; e > 0; e >>= 1) {
      if (e & 1)
        for (int s = 0; s < S; ++s) u[s] *= base[s];
      for (int s = 0; s < S; ++s) base[s] *= base[s];
    }
  } else {
    for (int s = 0; s < S; ++s) u[s] = std::exp(half_gamma * std::log(u[s]));
  }
}

// For a pair with relative choice weights ui, uj over S posterior draws (mask in[s] = 1 for
// draws other than the pair's items): sum of P(i | s) and of 1 - P(i|s)^2 - P(j|s)^2 =
// 2 P(i|s) P(j|s). Per-draw terms in chunks (a branch-free loop that vectorizes), summed
// in four interleaved partial sums (draw s into sum s mod 4) added in a fixed order, so the
// result is the same on every machine and build.
TS_SIMD_CLONES
inline void pair_gini(const double* __restrict ui, const double* __restrict uj,
                      const double* __restrict in, int S, double* a_out, double* cond_out) {
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

// ---------------------------------------------------------------- small dense algebra

// Top `count` eigenpairs of a symmetric d x d matrix, largest first, by cyclic Jacobi
// rotations (exact to rounding, quadratic convergence, robust to repeated eigenvalues,
// where power iteration stalls). Each eigenvector's sign is fixed so that its entry of
// largest magnitude (the first such) is positive. Mirrored by the NumPy twin.
inline void top_eigenpairs(std::vector<double> A, std::int64_t d, int count, double* values,
                           double* vectors /* count x d */) {
  std::vector<double> V(static_cast<std::size_t>(d * d), 0.0);
  for (std::int64_t a = 0; a < d; ++a) V[a * d + a] = 1.0;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0.0, diag = 0.0;
    for (std::int64_t p = 0; p < d; ++p) {
      diag += A[p * d + p] * A[p * d + p];
      for (std::int64_t q = p + 1; q < d; ++q) off += A[p * d + q] * A[p * d + q];
    }
    if (off <= 1e-22 * diag || off == 0.0) break;
    for (std::int64_t p = 0; p < d; ++p)
      for (std::int64_t q = p + 1; q < d; ++q) {
        const double apq = A[p * d + q];
        if (apq == 0.0) continue;
        const double theta = (A[q * d + q] - A[p * d + p]) / (2.0 * apq);
        const double t =
            (theta >= 0.0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0), sn = t * c;
        for (std::int64_t r = 0; r < d; ++r) {  // A <- A J (columns p, q)
          const double arp = A[r * d + p], arq = A[r * d + q];
          A[r * d + p] = c * arp - sn * arq;
          A[r * d + q] = sn * arp + c * arq;
        }
        for (std::int64_t r = 0; r < d; ++r) {  // A <- J^T A (rows p, q)
          const double apr = A[p * d + r], aqr = A[q * d + r];
          A[p * d + r] = c * apr - sn * aqr;
          A[q * d + r] = sn * apr + c * aqr;
        }
        for (std::int64_t r = 0; r < d; ++r) {  // V <- V J
          const double vrp = V[r * d + p], vrq = V[r * d + q];
          V[r * d + p] = c * vrp - sn * vrq;
          V[r * d + q] = sn * vrp + c * vrq;
        }
      }
  }
  std::vector<std::int64_t> order(static_cast<std::size_t>(d));
  for (std::int64_t a = 0; a < d; ++a) order[a] = a;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t x, std::int64_t y) { return A[x * d + x] > A[y * d + y]; });
  for (int e = 0; e < count; ++e) {
    const std::int64_t col = order[static_cast<std::size_t>(e)];
    values[e] = std::max(A[col * d + col], 0.0);
    std::int64_t big = 0;
    for (std::int64_t a = 1; a < d; ++a)
      if (std::fabs(V[a * d + col]) > std::fabs(V[big * d + col])) big = a;
    const double sign = V[big * d + col] < 0.0 ? -1.0 : 1.0;
    for (std::int64_t a = 0; a < d; ++a) vectors[e * d + a] = sign * V[a * d + col];
  }
}

// ---------------------------------------------------------------- the searcher

enum class SearchMethod : int { GammaCKL = 0, Gauss = 1, Random = 2 };
enum class Selection : int { Weighted = 0, Paper = 1, Nearest = 2, InfoGain = 3 };

struct SearchConfig {
  SearchMethod method = SearchMethod::GammaCKL;
  double gamma = 3.0;  // gamma-CKL likelihood
  double r = 2.0;      // proto-queries at mean +- r sqrt(lambda) v
  double sigma = 0.1;  // GaussSearch probit noise
  int n_choices = 2;
  Selection selection = Selection::Weighted;
};

struct Cand {
  double score;
  std::int64_t index;
};
inline bool better(const Cand& a, const Cand& b) {
  return a.score < b.score || (a.score == b.score && a.index < b.index);
}

class DiscreteSearcher {
 public:
  DiscreteSearcher(std::shared_ptr<const ItemStore> store, const SearchConfig& cfg,
                   std::uint64_t seed, int threads)
      : store_(std::move(store)),
        cfg_(cfg),
        seed_(seed),
        threads_(threads),
        n_(store_->n()),
        d_(store_->d()),
        shown_(static_cast<std::size_t>(n_), 0),
        chunks_(balanced_chunks(store_->blocks() / 4)) {
    if (cfg_.n_choices < 2) throw std::invalid_argument("n_choices: must be >= 2");
    mean_.assign(static_cast<std::size_t>(d_), 0.0);
    cov_.assign(static_cast<std::size_t>(d_ * d_), 0.0);
    if (cfg_.method == SearchMethod::GammaCKL) {
      w_.assign(static_cast<std::size_t>(store_->blocks() * kLanes), 0.0);
      std::fill(w_.begin(), w_.begin() + n_, 1.0 / double(n_));
      compute_moments();  // around 0
      compute_moments();  // around the mean, for accuracy
    } else if (cfg_.method == SearchMethod::Gauss) {
      // prior: the mean and covariance of the items (the uniform prior, moment-matched)
      w_.assign(static_cast<std::size_t>(store_->blocks() * kLanes), 0.0);
      std::fill(w_.begin(), w_.begin() + n_, 1.0 / double(n_));
      compute_moments();
      compute_moments();
      w_.clear();
      w_.shrink_to_fit();
    }
  }

  std::int64_t n_queries() const { return n_queries_; }
  std::int64_t n_unshown() const { return n_ - n_shown_; }
  bool is_shown(std::int64_t i) const { return shown_[static_cast<std::size_t>(i)] != 0; }
  const std::vector<double>& mean() const { return mean_; }
  const std::vector<double>& cov() const { return cov_; }

  // Up to n_choices unshown items for the next query; returns how many (0: none left).
  int select(std::int64_t* q) {
    const int k = static_cast<int>(std::min<std::int64_t>(cfg_.n_choices, n_unshown()));
    if (k == 0) return 0;
    if (cfg_.method == SearchMethod::Random) return select_random(q, k);
    if (cfg_.method == SearchMethod::GammaCKL && cfg_.selection == Selection::InfoGain)
      return select_infogain(q, k);
    std::vector<double> protos(static_cast<std::size_t>(k * d_));
    if (cfg_.method == SearchMethod::GammaCKL)
      gammackl_protos(k, cfg_.r, protos.data());
    else
      gauss_protos(k, protos.data());
    const Selection rule =
        cfg_.method == SearchMethod::GammaCKL ? cfg_.selection : Selection::Nearest;
    nearest(protos.data(), k, rule, q);
    return k;
  }

  // The user saw shown[0..k) and picked shown[choice] (choice < 0: no answer).
  void update(const std::int64_t* shown, int k, int choice) {
    for (int j = 0; j < k; ++j) {
      if (shown[j] < 0 || shown[j] >= n_) throw std::invalid_argument("shown: index out of range");
      if (!shown_[static_cast<std::size_t>(shown[j])]) {
        shown_[static_cast<std::size_t>(shown[j])] = 1;
        ++n_shown_;
      }
    }
    if (choice >= k) throw std::invalid_argument("choice: not among the shown items");
    if (cfg_.method == SearchMethod::GammaCKL) update_gammackl(shown, k, choice);
    if (cfg_.method == SearchMethod::Gauss && choice >= 0) update_gauss(shown, k, choice);
    ++n_queries_;
  }

  // Posterior probability of each item being the target (shown items: 0).
  void posterior(double* out) const {
    if (cfg_.method == SearchMethod::GammaCKL) {
      double total = 0.0;
      for (std::int64_t i = 0; i < n_; ++i) total += w_[static_cast<std::size_t>(i)];
      for (std::int64_t i = 0; i < n_; ++i)
        out[i] = total > 0.0 ? w_[static_cast<std::size_t>(i)] / total : 0.0;
      return;
    }
    if (cfg_.method == SearchMethod::Random) {
      const double p = n_unshown() > 0 ? 1.0 / double(n_unshown()) : 0.0;
      for (std::int64_t i = 0; i < n_; ++i) out[i] = shown_[static_cast<std::size_t>(i)] ? 0.0 : p;
      return;
    }
    gauss_posterior(out);
  }

 private:
  // ------------------------------------------------------------ gamma-CKL
  void compute_moments() { pass_update(nullptr, 0, -1); }

  // One pass: w *= P(choice | item) / W_prev (choice < 0: no likelihood), then moments.
  void pass_update(const std::int64_t* shown, int k, int choice) {
    const std::int64_t nb = store_->blocks(), d = d_;
    const std::int64_t msz = moment_size(d);
    const std::int64_t C = chunks_;
    std::vector<double> acc(static_cast<std::size_t>(C * msz), 0.0);
    std::vector<double> sh(static_cast<std::size_t>(std::max(k, 1) * d));
    for (int j = 0; j < k; ++j) store_->row(shown[j], sh.data() + j * d);
    const std::vector<double> c = mean_;
    const double scale = total_ > 0.0 ? 1.0 / total_ : 1.0;
    const ChoicePower cp(cfg_.gamma);
#pragma omp parallel num_threads(threads_) if (nb >= kParallelBlocks)
    {
      std::vector<double> y(static_cast<std::size_t>(d * kLanes)), wy(y.size());
      std::vector<double> D(static_cast<std::size_t>(std::max(k, 1) * kLanes));
      double lik[kLanes];
#pragma omp for schedule(static)
      for (std::int64_t ch = 0; ch < C; ++ch) {
        double* a = acc.data() + ch * msz;
        const std::int64_t b1 = chunk_begin(nb, C, ch + 1);
        for (std::int64_t b = chunk_begin(nb, C, ch); b < b1; ++b) {
          const StoreFloat* xb = store_->block(b);
          double* w = w_.data() + b * kLanes;
          if (choice >= 0) {
            block_sqdist(xb, d, sh.data(), k, D.data());
            block_choice_lik(D.data(), k, choice, cp.half_gamma, cp.int_gamma, lik);
            for (int l = 0; l < kLanes; ++l) w[l] *= lik[l] * scale;
          } else if (shown != nullptr || scale != 1.0) {
            for (int l = 0; l < kLanes; ++l) w[l] *= scale;
          }
          block_moments(xb, w, d, c.data(), a, y.data(), wy.data());
        }
      }
    }
    // merge chunk accumulators in order, then the lanes in order
    std::vector<double> m(static_cast<std::size_t>(msz), 0.0);
    for (std::int64_t ch = 0; ch < C; ++ch)
      for (std::int64_t t = 0; t < msz; ++t)
        m[static_cast<std::size_t>(t)] += acc[static_cast<std::size_t>(ch * msz + t)];
    auto lane_sum = [&](std::int64_t off) {
      double s = 0.0;
      for (int q = 0; q < kAccLanes; ++q) s += m[static_cast<std::size_t>(off + q)];
      return s;
    };
    const double W = lane_sum(0);
    total_ = W;
    if (!(W > 0.0)) return;  // no mass left: keep the previous moments
    std::vector<double> m1(static_cast<std::size_t>(d));
    for (std::int64_t a = 0; a < d; ++a) m1[a] = lane_sum(kAccLanes * (1 + a)) / W;
    const std::int64_t moff = kAccLanes * (1 + d);
    for (std::int64_t a = 0; a < d; ++a)
      for (std::int64_t b = a; b < d; ++b) {
        const double* mq = m.data() + moff + (a * d + b) * 4;
        const double v = ((mq[0] + mq[1]) + (mq[2] + mq[3])) / W - m1[a] * m1[b];
        cov_[a * d + b] = cov_[b * d + a] = v;
      }
    for (std::int64_t a = 0; a < d; ++a) mean_[a] = c[a] + m1[a];
  }

  void update_gammackl(const std::int64_t* shown, int k, int choice) {
    for (int j = 0; j < k; ++j) w_[static_cast<std::size_t>(shown[j])] = 0.0;
    pass_update(shown, k, choice);
    if (!(total_ > 0.0)) {
      // every remaining item was ruled out (e.g. answers inconsistent with coincident
      // items): restart from the uniform prior over the unshown items
      for (std::int64_t i = 0; i < n_; ++i)
        w_[static_cast<std::size_t>(i)] = shown_[static_cast<std::size_t>(i)] ? 0.0 : 1.0;
      total_ = 0.0;
      compute_moments();
    }
  }

  // Proto-query c uses eigen-direction floor(c/2) (mod d) with sign (-1)^c; beyond d
  // directions the radius grows by one r per round.
  void gammackl_protos(int k, double r, double* protos) const {
    const int ne = static_cast<int>(std::min<std::int64_t>((k + 1) / 2, d_));
    std::vector<double> vals(static_cast<std::size_t>(ne)), vecs(static_cast<std::size_t>(ne * d_));
    top_eigenpairs(cov_, d_, ne, vals.data(), vecs.data());
    protos_from(k, r, ne, vals.data(), vecs.data(), protos);
  }

  void protos_from(int k, double r, int ne, const double* vals, const double* vecs,
                   double* protos) const {
    for (int c = 0; c < k; ++c) {
      const int e = (c / 2) % ne;
      const double round = 1.0 + double((c / 2) / ne);
      const double step = (c % 2 == 0 ? 1.0 : -1.0) * round * r * std::sqrt(vals[e]);
      for (std::int64_t a = 0; a < d_; ++a) protos[c * d_ + a] = mean_[a] + step * vecs[e * d_ + a];
    }
  }

  // ------------------------------------------------------------ information gain
  // Candidates: the weighted-nearest items to proto-queries at five radii
  // r * {1/4, 1/2, 3/4, 1, 3/2} (pairs: along the top three eigen-directions, plus the
  // four most probable items, every pair of distinct candidates; k > 2: the k protos of
  // each radius). Each candidate tuple is scored by its expected one-step
  // information about the target in the quadratic (Gini) entropy, outcomes {target shown
  // as item c, user picks c}: G(Y) - E_t G(Y | t), G(P) = 1 - sum P^2, the expectation over
  // 128 items drawn from the posterior by systematic resampling.
  static constexpr int kRadii = 5;
  static constexpr int kSamples = 128;

  int select_infogain(std::int64_t* q, int k) {
    static const double rad[kRadii] = {0.25, 0.5, 0.75, 1.0, 1.5};
    const int ne = static_cast<int>(std::min<std::int64_t>(k == 2 ? 3 : (k + 1) / 2, d_));
    std::vector<double> vals(static_cast<std::size_t>(ne)), vecs(static_cast<std::size_t>(ne * d_));
    top_eigenpairs(cov_, d_, ne, vals.data(), vecs.data());
    // protos and candidate tuples (as positions into the proto list)
    const int P = k == 2 ? ne * kRadii * 2 : kRadii * k;
    std::vector<double> protos(static_cast<std::size_t>(P * d_));
    if (k == 2) {
      for (int e = 0; e < ne; ++e)
        for (int a = 0; a < kRadii; ++a)
          for (int sgn = 0; sgn < 2; ++sgn) {
            const double step = (sgn == 0 ? 1.0 : -1.0) * rad[a] * cfg_.r * std::sqrt(vals[e]);
            double* z = protos.data() + ((e * kRadii + a) * 2 + sgn) * d_;
            for (std::int64_t b = 0; b < d_; ++b) z[b] = mean_[b] + step * vecs[e * d_ + b];
          }
    } else {
      for (int a = 0; a < kRadii; ++a)
        protos_from(k, rad[a] * cfg_.r, ne, vals.data(), vecs.data(), protos.data() + a * k * d_);
    }
    const std::vector<Cand> top = scan_top(protos.data(), P, k, Selection::Weighted);
    std::vector<std::int64_t> tuples;  // n_tuples x k item indices
    if (k == 2) {
      // per direction, every plus-side item against every minus-side item; and every
      // pair involving one of the most probable items
      auto push = [&](std::int64_t i, std::int64_t j) {
        if (i < 0 || j < 0 || i == j) return;
        tuples.push_back(std::min(i, j));
        tuples.push_back(std::max(i, j));
      };
      std::vector<std::int64_t> items;
      for (int e = 0; e < ne; ++e)
        for (int a = 0; a < kRadii; ++a) {
          const std::int64_t i =
              top[static_cast<std::size_t>(((e * kRadii + a) * 2 + 0) * k)].index;
          items.push_back(i);
          items.push_back(top[static_cast<std::size_t>(((e * kRadii + a) * 2 + 1) * k)].index);
          for (int b = 0; b < kRadii; ++b)
            push(i, top[static_cast<std::size_t>(((e * kRadii + b) * 2 + 1) * k)].index);
        }
      const std::vector<std::int64_t> probable = most_probable(kTopItems);
      for (std::size_t a = 0; a < probable.size(); ++a) {
        for (std::size_t b = a + 1; b < probable.size(); ++b) push(probable[a], probable[b]);
        for (std::int64_t c : items) push(probable[a], c);
      }
    } else {
      for (int a = 0; a < kRadii; ++a) {
        std::vector<std::int64_t> t(static_cast<std::size_t>(k), -1);
        for (int c = 0; c < k; ++c)
          for (int u = 0; u < k; ++u) {
            const std::int64_t idx = top[static_cast<std::size_t>((a * k + c) * k + u)].index;
            bool used = idx < 0;
            for (int s2 = 0; s2 < c; ++s2) used = used || t[static_cast<std::size_t>(s2)] == idx;
            if (!used) {
              t[static_cast<std::size_t>(c)] = idx;
              break;
            }
          }
        if (std::find(t.begin(), t.end(), -1) == t.end())
          tuples.insert(tuples.end(), t.begin(), t.end());
      }
    }
    // the distinct candidate items (ascending) and the tuples as positions into them;
    // pairs are deduplicated, in ascending (first, second) item order
    // (mark_[item] = 1 + its position while this call runs, 0 otherwise)
    std::vector<std::int64_t> cands;
    if (mark_.size() != static_cast<std::size_t>(n_)) mark_.assign(static_cast<std::size_t>(n_), 0);
    struct ClearMarks {
      std::vector<std::int32_t>& mark;
      const std::vector<std::int64_t>& items;
      ~ClearMarks() {
        for (std::int64_t item : items) mark[static_cast<std::size_t>(item)] = 0;
      }
    } clear_marks{mark_, cands};
    for (std::int64_t item : tuples)
      if (!mark_[static_cast<std::size_t>(item)]) {
        mark_[static_cast<std::size_t>(item)] = 1;
        cands.push_back(item);
      }
    std::sort(cands.begin(), cands.end());
    const int nc = static_cast<int>(cands.size());
    for (int c = 0; c < nc; ++c)
      mark_[static_cast<std::size_t>(cands[static_cast<std::size_t>(c)])] = c + 1;
    const auto position = [&](std::int64_t item) {
      return mark_[static_cast<std::size_t>(item)] - 1;
    };
    std::vector<int> tpos;  // n_tuples x k
    tpos.reserve(tuples.size());
    if (k == 2) {
      std::vector<char> seen(static_cast<std::size_t>(nc) * static_cast<std::size_t>(nc), 0);
      for (std::size_t t = 0; t < tuples.size(); t += 2)
        seen[static_cast<std::size_t>(position(tuples[t]) * nc + position(tuples[t + 1]))] = 1;
      for (int i = 0; i < nc; ++i)
        for (int j = i + 1; j < nc; ++j)
          if (seen[static_cast<std::size_t>(i * nc + j)]) {
            tpos.push_back(i);
            tpos.push_back(j);
          }
    } else {
      for (std::int64_t item : tuples) tpos.push_back(position(item));
    }
    const std::int64_t nt = static_cast<std::int64_t>(tpos.size()) / k;
    if (nt == 0) {  // degenerate posterior: fall back to the plain weighted rule
      std::vector<double> pr(static_cast<std::size_t>(k * d_));
      gammackl_protos(k, cfg_.r, pr.data());
      nearest(pr.data(), k, Selection::Weighted, q);
      return k;
    }
    if (nt == 1) {
      for (int c = 0; c < k; ++c)
        q[c] = cands[static_cast<std::size_t>(tpos[static_cast<std::size_t>(c)])];
      return k;
    }
    std::vector<std::int64_t> sample = posterior_sample();
    // u[c][s] = (min_c' D_sc' / D_sc)^(gamma/2): relative choice weights, no overflow
    const ChoicePower cp(cfg_.gamma);
    std::vector<double> xc(static_cast<std::size_t>(nc * d_)),
        xsT(static_cast<std::size_t>(d_ * kSamples));
    for (int c = 0; c < nc; ++c)
      store_->row(cands[static_cast<std::size_t>(c)], xc.data() + c * d_);
    // which draws are candidate items themselves (to leave them out of a tuple's sums)
    std::vector<std::vector<int>> draws_of(static_cast<std::size_t>(nc));
    for (int s2 = 0; s2 < kSamples; ++s2) {
      const std::int64_t it = sample[static_cast<std::size_t>(s2)];
      for (std::int64_t b = 0; b < d_; ++b)
        xsT[static_cast<std::size_t>(b * kSamples + s2)] = store_->coord(it, b);
      if (mark_[static_cast<std::size_t>(it)])
        draws_of[static_cast<std::size_t>(position(it))].push_back(s2);
    }
    std::vector<double> u(static_cast<std::size_t>(kSamples * nc)), dmin(kSamples), base(kSamples);
    for (int c = 0; c < nc; ++c)
      draw_sqdist(xc.data() + c * d_, xsT.data(), kSamples, d_, u.data() + c * kSamples);
    for (int s2 = 0; s2 < kSamples; ++s2) dmin[s2] = u[s2];
    for (int c = 1; c < nc; ++c)
      for (int s2 = 0; s2 < kSamples; ++s2) dmin[s2] = std::min(dmin[s2], u[c * kSamples + s2]);
    for (int c = 0; c < nc; ++c)
      draw_power(dmin.data(), kSamples, cp.half_gamma, cp.int_gamma, u.data() + c * kSamples,
                 base.data());
    const double W = total_;
    std::vector<double> scores(static_cast<std::size_t>(nt));
    // tuples scored independently (in parallel when worthwhile), the argmax in order
#pragma omp parallel num_threads(threads_) if (nt * kSamples >= 8192 && threads_ > 1)
    {
      std::vector<double> A(static_cast<std::size_t>(k));
      double in[kSamples];  // 1 for draws other than the tuple's items (reset after each tuple)
      std::fill(in, in + kSamples, 1.0);
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < nt; ++t) {
        const int* pos = tpos.data() + t * k;
        double found_sq = 0.0, mass_in = 0.0;
        for (int c = 0; c < k; ++c) {
          const double pc =
              w_[static_cast<std::size_t>(cands[static_cast<std::size_t>(pos[c])])] / W;
          found_sq += pc * pc;
          mass_in += pc;
        }
        // draws equal to one of the tuple's items: outcome "found", not part of the sums
        int outside = kSamples;
        for (int c = 0; c < k; ++c)
          for (int s2 : draws_of[static_cast<std::size_t>(pos[c])]) {
            in[s2] = 0.0;
            --outside;
          }
        double cond = 0.0;  // sum over outside draws of 1 - sum_c P(c|s)^2
        if (k == 2) {
          double a0 = 0.0;
          pair_gini(u.data() + pos[0] * kSamples, u.data() + pos[1] * kSamples, in, kSamples, &a0,
                    &cond);
          A[0] = a0;
          A[1] = double(outside) - a0;
        } else {
          for (int c = 0; c < k; ++c) A[static_cast<std::size_t>(c)] = 0.0;
          for (int s2 = 0; s2 < kSamples; ++s2) {
            if (in[s2] == 0.0) continue;
            double den = 0.0;
            for (int c = 0; c < k; ++c) den += u[static_cast<std::size_t>(pos[c] * kSamples + s2)];
            double sq = 0.0;
            for (int c = 0; c < k; ++c) {
              const double uc = u[static_cast<std::size_t>(pos[c] * kSamples + s2)];
              const double pcs = den > 0.0 ? uc / den : 1.0 / k;
              A[static_cast<std::size_t>(c)] += pcs;
              sq += pcs * pcs;
            }
            cond += 1.0 - sq;
          }
        }
        const double wout = outside > 0 ? std::max(0.0, 1.0 - mass_in) / outside : 0.0;
        double asq = 0.0;
        for (int c = 0; c < k; ++c)
          asq += (A[static_cast<std::size_t>(c)] * wout) * (A[static_cast<std::size_t>(c)] * wout);
        scores[static_cast<std::size_t>(t)] = 1.0 - found_sq - asq - wout * cond;
        for (int c = 0; c < k; ++c)
          for (int s2 : draws_of[static_cast<std::size_t>(pos[c])]) in[s2] = 1.0;
      }
    }
    std::int64_t best = 0;
    for (std::int64_t t = 1; t < nt; ++t)
      if (scores[static_cast<std::size_t>(t)] > scores[static_cast<std::size_t>(best)]) best = t;
    for (int c = 0; c < k; ++c)
      q[c] = cands[static_cast<std::size_t>(tpos[static_cast<std::size_t>(best * k + c)])];
    return k;
  }

  static constexpr int kTopItems = 4;

  // The m unshown items of highest posterior weight (ties: lower index), w > 0 only.
  std::vector<std::int64_t> most_probable(int m) const {
    std::vector<Cand> best(static_cast<std::size_t>(m),
                           Cand{std::numeric_limits<double>::infinity(), -1});
    for (std::int64_t i = 0; i < n_; ++i) {
      const double w = w_[static_cast<std::size_t>(i)];
      if (!(w > 0.0)) continue;
      const Cand c{-w, i};
      if (!better(c, best[static_cast<std::size_t>(m - 1)])) continue;
      int pos = m - 1;
      while (pos > 0 && better(c, best[static_cast<std::size_t>(pos - 1)])) {
        best[static_cast<std::size_t>(pos)] = best[static_cast<std::size_t>(pos - 1)];
        --pos;
      }
      best[static_cast<std::size_t>(pos)] = c;
    }
    std::vector<std::int64_t> out;
    for (const Cand& c : best)
      if (c.index >= 0) out.push_back(c.index);
    return out;
  }

  static double choice_power(double s, const ChoicePower& cp) {
    if (cp.int_gamma > 0) {
      double pw = (cp.int_gamma & 1) ? std::sqrt(s) : 1.0;
      for (int e = cp.int_gamma >> 1; e > 0; e >>= 1) {
        if (e & 1) pw *= s;
        s *= s;
      }
      return pw;
    }
    return std::exp(cp.half_gamma * std::log(s));
  }

  // kSamples items drawn from the posterior by systematic resampling, offset from the
  // query's own stream (reproducible, and replayed identically by from_dict).
  std::vector<std::int64_t> posterior_sample() const {
    Rng rng(seed_ ^ 0x9E3779B97F4A7C15ULL, static_cast<std::uint64_t>(n_queries_));
    const double u0 = rng.uniform();
    std::vector<std::int64_t> out(static_cast<std::size_t>(kSamples));
    const double step = total_ / kSamples;
    double cum = 0.0, next = u0 * step;
    std::int64_t i = 0, last = 0;
    for (int m = 0; m < kSamples; ++m) {
      while (i < n_ && cum + w_[static_cast<std::size_t>(i)] <= next) {
        cum += w_[static_cast<std::size_t>(i)];
        if (w_[static_cast<std::size_t>(i)] > 0.0) last = i;
        ++i;
      }
      if (i >= n_) i = last;  // rounding at the end of the cumulative sum
      out[static_cast<std::size_t>(m)] = i;
      next += step;
    }
    return out;
  }

  // ------------------------------------------------------------ GaussSearch
  // Probit: P(i picked over j | x) = Phi((u.x - b) / sigma), u = (x_i - x_j)/||x_i - x_j||,
  // b = (||x_i||^2 - ||x_j||^2) / (2 ||x_i - x_j||). ADF (moment-matched) update per factor.
  void update_gauss(const std::int64_t* shown, int k, int choice) {
    std::vector<double> xi(static_cast<std::size_t>(d_)), xj(xi.size()), u(xi.size()),
        Su(xi.size());
    store_->row(shown[choice], xi.data());
    for (int j = 0; j < k; ++j) {
      if (j == choice) continue;
      store_->row(shown[j], xj.data());
      double s2 = 0.0, ni = 0.0, nj = 0.0;
      for (std::int64_t a = 0; a < d_; ++a) {
        u[a] = xi[a] - xj[a];
        s2 += u[a] * u[a];
        ni += xi[a] * xi[a];
        nj += xj[a] * xj[a];
      }
      if (!(s2 > 0.0)) continue;  // identical items: no information
      const double s = std::sqrt(s2);
      for (auto& x : u) x /= s;
      const double b = (ni - nj) / (2.0 * s);
      double um = 0.0, v = 0.0;
      for (std::int64_t a = 0; a < d_; ++a) {
        double t = 0.0;
        for (std::int64_t c = 0; c < d_; ++c) t += cov_[a * d_ + c] * u[c];
        Su[a] = t;
        um += u[a] * mean_[a];
        v += u[a] * t;
      }
      const double sd = std::sqrt(v + cfg_.sigma * cfg_.sigma);
      const double z = (um - b) / sd;
      const double lam = normal_tail(z).mills;
      const double gmean = lam / sd;
      const double gcov = lam * (lam + z) / (sd * sd);
      for (std::int64_t a = 0; a < d_; ++a) mean_[a] += gmean * Su[a];
      for (std::int64_t a = 0; a < d_; ++a)
        for (std::int64_t c = 0; c < d_; ++c) cov_[a * d_ + c] -= gcov * Su[a] * Su[c];
    }
  }

  // SampleMirror: z ~ N(mean, cov), its mirror across the hyperplane through the mean
  // orthogonal to the top eigenvector; k > 2: further pairs mirror across the hyperplanes
  // of the next eigenvectors.
  void gauss_protos(int k, double* protos) const {
    const int ne = static_cast<int>(std::min<std::int64_t>((k + 1) / 2, d_));
    std::vector<double> vals(static_cast<std::size_t>(ne)), vecs(static_cast<std::size_t>(ne * d_));
    top_eigenpairs(cov_, d_, ne, vals.data(), vecs.data());
    std::vector<double> L = cholesky(cov_, d_), g(static_cast<std::size_t>(d_)), z(g.size());
    Rng rng(seed_, static_cast<std::uint64_t>(n_queries_));
    for (int c = 0; c < k; c += 2) {
      for (auto& x : g) x = rng.normal();
      for (std::int64_t a = 0; a < d_; ++a) {
        double t = 0.0;
        for (std::int64_t b = 0; b <= a; ++b) t += L[a * d_ + b] * g[b];
        z[a] = mean_[a] + t;
      }
      const double* v = vecs.data() + ((c / 2) % ne) * d_;
      double proj = 0.0;
      for (std::int64_t a = 0; a < d_; ++a) proj += v[a] * (z[a] - mean_[a]);
      for (std::int64_t a = 0; a < d_; ++a) protos[c * d_ + a] = z[a];
      if (c + 1 < k)
        for (std::int64_t a = 0; a < d_; ++a) protos[(c + 1) * d_ + a] = z[a] - 2.0 * proj * v[a];
    }
  }

  // Lower Cholesky factor of a covariance (tiny negative pivots clamped to 0).
  static std::vector<double> cholesky(const std::vector<double>& S, std::int64_t d) {
    std::vector<double> L(static_cast<std::size_t>(d * d), 0.0);
    for (std::int64_t j = 0; j < d; ++j) {
      double s = S[j * d + j];
      for (std::int64_t k = 0; k < j; ++k) s -= L[j * d + k] * L[j * d + k];
      const double piv = s > 0.0 ? std::sqrt(s) : 0.0;
      L[j * d + j] = piv;
      for (std::int64_t i = j + 1; i < d; ++i) {
        double t = S[i * d + j];
        for (std::int64_t k = 0; k < j; ++k) t -= L[i * d + k] * L[j * d + k];
        L[i * d + j] = piv > 0.0 ? t / piv : 0.0;
      }
    }
    return L;
  }

  // Items weighted by the Gaussian belief's density (log-sum-exp normalized).
  void gauss_posterior(double* out) const {
    std::vector<double> L = cholesky(cov_, d_), y(static_cast<std::size_t>(d_)), x(y.size());
    double mx = -std::numeric_limits<double>::infinity();
    for (std::int64_t i = 0; i < n_; ++i) {
      if (shown_[static_cast<std::size_t>(i)]) {
        out[i] = -std::numeric_limits<double>::infinity();
        continue;
      }
      store_->row(i, x.data());
      double q = 0.0;  // solve L y = x - mean
      for (std::int64_t a = 0; a < d_; ++a) {
        double t = x[a] - mean_[a];
        for (std::int64_t b = 0; b < a; ++b) t -= L[a * d_ + b] * y[b];
        y[a] = L[a * d_ + a] > 0.0 ? t / L[a * d_ + a] : 0.0;
        q += y[a] * y[a];
      }
      out[i] = -0.5 * q;
      mx = std::max(mx, out[i]);
    }
    double total = 0.0;
    for (std::int64_t i = 0; i < n_; ++i) {
      out[i] = std::isfinite(out[i]) ? std::exp(out[i] - mx) : 0.0;
      total += out[i];
    }
    for (std::int64_t i = 0; i < n_; ++i) out[i] = total > 0.0 ? out[i] / total : 0.0;
  }

  // ------------------------------------------------------------ selection
  int select_random(std::int64_t* q, int k) {
    Rng rng(seed_, static_cast<std::uint64_t>(n_queries_));
    int got = 0;
    while (got < k) {
      // the r-th unshown item, r uniform: exact without rejection loops
      std::int64_t r =
          static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n_unshown() - got)));
      for (std::int64_t i = 0; i < n_; ++i) {
        if (shown_[static_cast<std::size_t>(i)]) continue;
        bool used = false;
        for (int t = 0; t < got; ++t) used = used || q[t] == i;
        if (used) continue;
        if (r-- == 0) {
          q[got++] = i;
          break;
        }
      }
    }
    return k;
  }

  // For each of P protos, the kb unshown items with the lowest scores, sorted (missing
  // entries have index -1). Scores: Weighted ||x - z||^2 / w, Paper w ||x - z||,
  // Nearest ||x - z||^2; ties go to the lower index.
  std::vector<Cand> scan_top(const double* protos, int P, int kb, Selection rule) const {
    const int k = kb;
    const std::int64_t nb = store_->blocks(), d = d_, C = chunks_;
    const Cand worst{std::numeric_limits<double>::infinity(),
                     std::numeric_limits<std::int64_t>::max()};
    std::vector<Cand> best(static_cast<std::size_t>(C * P * k), worst);
    const bool weighted = cfg_.method == SearchMethod::GammaCKL;
    // Seed every list with the k most probable items (real candidates, so the final lists
    // are unchanged): the pre-test then rejects most lanes from the first block on.
    if (weighted && rule == Selection::Weighted) {
      const std::vector<std::int64_t> seeds = most_probable(k);
      std::vector<double> x(static_cast<std::size_t>(d));
      for (std::int64_t i : seeds) {
        store_->row(i, x.data());
        const double wi = w_[static_cast<std::size_t>(i)];
        for (int c = 0; c < P; ++c) {
          const Cand cand{sqdist_row(x.data(), protos + c * d, d) / wi, i};
          for (std::int64_t ch = 0; ch < C; ++ch)
            insert_top(best.data() + (ch * P + c) * k, k, cand);
        }
      }
    }
#pragma omp parallel num_threads(threads_) if (nb >= kParallelBlocks)
    {
      std::vector<double> Dall(static_cast<std::size_t>(P * kLanes));
      std::vector<double> ones(static_cast<std::size_t>(kLanes), 1.0);
#pragma omp for schedule(static)
      for (std::int64_t ch = 0; ch < C; ++ch) {
        Cand* top = best.data() + ch * P * k;  // per proto: k best, sorted
        const std::int64_t b1 = chunk_begin(nb, C, ch + 1);
        for (std::int64_t b = chunk_begin(nb, C, ch); b < b1; ++b) {
          const StoreFloat* xb = store_->block(b);
          const double* w = weighted ? w_.data() + b * kLanes : ones.data();
          const std::int64_t lanes = std::min<std::int64_t>(kLanes, n_ - b * kLanes);
          block_sqdist(xb, d, protos, P, Dall.data());
          for (int c = 0; c < P; ++c) {
            const double* D = Dall.data() + c * kLanes;
            Cand* tc = top + c * k;
            // cheap vectorized pre-test against the current k-th best (slightly relaxed:
            // the exact score decides), then exact scores for the few lanes that pass
            std::uint64_t mask =
                block_pretest(D, w, tc[k - 1].score * (1.0 + 1e-12), static_cast<int>(rule));
            if (lanes < kLanes) mask &= (std::uint64_t(1) << lanes) - 1;
            while (mask) {
              const int l = ctz64(mask);
              mask &= mask - 1;
              double sc;
              if (rule == Selection::Weighted)
                sc = w[l] > 0.0 ? D[l] / w[l] : std::numeric_limits<double>::infinity();
              else if (rule == Selection::Paper)
                sc = w[l] * std::sqrt(D[l]);
              else
                sc = D[l];
              const Cand cand{sc, b * kLanes + l};
              if (!better(cand, tc[k - 1]) || shown_[static_cast<std::size_t>(cand.index)])
                continue;
              insert_top(tc, k, cand);
            }
          }
        }
      }
    }
    // merge chunks (any order gives the same set: strict total order on (score, index))
    std::vector<Cand> merged(static_cast<std::size_t>(P * k), worst);
    for (std::int64_t ch = 0; ch < C; ++ch)
      for (int c = 0; c < P; ++c)
        for (int t = 0; t < k; ++t) {
          insert_top(merged.data() + c * k, k,
                     best[static_cast<std::size_t>((ch * P + c) * k + t)]);
        }
    for (auto& c : merged)
      if (c.index == worst.index) c.index = -1;
    return merged;
  }

  // Inserts cand into the sorted list tc[0..k) (k best), unless it is not better than the
  // last entry or its item is already listed.
  static void insert_top(Cand* tc, int k, const Cand& cand) {
    if (!better(cand, tc[k - 1])) return;
    for (int t = 0; t < k; ++t)
      if (tc[t].index == cand.index) return;
    int pos = k - 1;
    while (pos > 0 && better(cand, tc[pos - 1])) {
      tc[pos] = tc[pos - 1];
      --pos;
    }
    tc[pos] = cand;
  }

  static double sqdist_row(const double* x, const double* z, std::int64_t d) {
    double s = 0.0;
    for (std::int64_t a = 0; a < d; ++a) s += (x[a] - z[a]) * (x[a] - z[a]);
    return s;
  }

  // For proto c (in order), the unshown item with the lowest score not taken by an
  // earlier proto.
  void nearest(const double* protos, int k, Selection rule, std::int64_t* q) const {
    const std::vector<Cand> merged = scan_top(protos, k, k, rule);
    for (int c = 0; c < k; ++c) {
      for (int t = 0; t < k; ++t) {
        const std::int64_t idx = merged[static_cast<std::size_t>(c * k + t)].index;
        bool used = idx < 0;
        for (int s = 0; s < c; ++s) used = used || q[s] == idx;
        if (!used) {
          q[c] = idx;
          break;
        }
      }
    }
  }

  std::shared_ptr<const ItemStore> store_;
  SearchConfig cfg_;
  std::uint64_t seed_;
  int threads_;
  std::int64_t n_, d_;
  std::vector<std::uint8_t> shown_;
  std::vector<std::int32_t> mark_;  // scratch for select_infogain, all zero between calls
  std::int64_t chunks_;
  std::vector<double> w_;  // gamma-CKL: unnormalized posterior (block-padded)
  double total_ = 0.0;     // sum of w_ after the last pass
  std::vector<double> mean_, cov_;
  std::int64_t n_shown_ = 0, n_queries_ = 0;
};

// ---------------------------------------------------------------- simulated users

// A simulated user who has item `target` in mind picks among shown[0..k) by the oracle's
// choice model at the oracle's positions: P(c) proportional to exp(log_weight(D_c)) for
// the kernel models (gamma-CKL: D_c^(-gamma/2)); Probit for pairs.
inline int user_choice(const OracleSpec& oracle, const ItemStore& ostore, std::int64_t target,
                       const std::int64_t* shown, int k, Rng& rng) {
  const std::int64_t d = ostore.d();
  std::vector<double> xt(static_cast<std::size_t>(d)), xc(xt.size()), xo(xt.size());
  ostore.row(target, xt.data());
  return with_model(oracle, [&](const auto& model) -> int {
    using Model = std::decay_t<decltype(model)>;
    if constexpr (Model::kPairTerms) {
      ostore.row(shown[0], xc.data());
      ostore.row(shown[1], xo.data());
      const double p = model.prob(row_dist<true>(xt.data(), xc.data(), xo.data(), d));
      return rng.uniform() < p ? 0 : 1;
    } else {
      double lw[64];
      double mx = -std::numeric_limits<double>::infinity();
      for (int c = 0; c < k; ++c) {
        ostore.row(shown[c], xc.data());
        double D = 0.0;
        for (std::int64_t a = 0; a < d; ++a) D += (xc[a] - xt[a]) * (xc[a] - xt[a]);
        lw[c] = model.k.log_weight(D);
        mx = std::max(mx, lw[c]);
      }
      double total = 0.0;
      for (int c = 0; c < k; ++c) total += (lw[c] = std::exp(lw[c] - mx));
      double u = rng.uniform() * total;
      for (int c = 0; c < k - 1; ++c) {
        if (u < lw[c]) return c;
        u -= lw[c];
      }
      return k - 1;
    }
  });
}

struct DiscreteSimulation {
  std::vector<std::int64_t> n_queries;  // queries until the target was shown (or the cap)
  std::vector<std::uint8_t> found;
};

// One search per target, in parallel over targets; run r uses its own streams (seed, r)
// for the searcher and the user, so results do not depend on the thread count.
inline DiscreteSimulation simulate_discrete(std::shared_ptr<const ItemStore> store,
                                            const SearchConfig& cfg, const OracleSpec& oracle,
                                            std::shared_ptr<const ItemStore> ostore,
                                            const std::int64_t* targets, std::int64_t runs,
                                            std::int64_t max_queries, std::uint64_t seed,
                                            int threads) {
  if (oracle.kind == ModelKind::Probit && cfg.n_choices != 2)
    throw std::invalid_argument("oracle: the Probit oracle answers pairs only (n_choices = 2)");
  if (cfg.n_choices > 64) throw std::invalid_argument("n_choices: at most 64");
  for (std::int64_t r = 0; r < runs; ++r)
    if (targets[r] < 0 || targets[r] >= store->n())
      throw std::invalid_argument("targets: index out of range");
  DiscreteSimulation res;
  res.n_queries.assign(static_cast<std::size_t>(runs), 0);
  res.found.assign(static_cast<std::size_t>(runs), 0);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t r = 0; r < runs; ++r) {
    std::uint64_t s = seed ^ 0x5851F42D4C957F2DULL;
    const std::uint64_t search_seed = splitmix64(s) + static_cast<std::uint64_t>(r);
    DiscreteSearcher searcher(store, cfg, search_seed, 1);
    Rng user(seed, static_cast<std::uint64_t>(r));
    std::vector<std::int64_t> q(static_cast<std::size_t>(cfg.n_choices));
    const std::int64_t t = targets[r];
    std::int64_t m = 0;
    bool found = false;
    while (m < max_queries) {
      const int k = searcher.select(q.data());
      if (k == 0) break;
      ++m;
      if (std::find(q.begin(), q.begin() + k, t) != q.begin() + k) {
        found = true;
        break;
      }
      searcher.update(q.data(), k, user_choice(oracle, *ostore, t, q.data(), k, user));
    }
    res.n_queries[static_cast<std::size_t>(r)] = m;
    res.found[static_cast<std::size_t>(r)] = found;
  }
  return res;
}

}  // namespace tripletsearch
