// The triplet sampler's scoring lanes (collect/information.hpp), portable versions: a head's
// log-odds terms f(D) for its support points, and one candidate pair's weighted sums over
// them. simd/information.hpp dispatches; information_avx2.hpp has the AVX2/FMA versions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "../core/mathutil.hpp"

namespace tripletsearch {
namespace simd {

// The log-odds form of a difference model: P(a closer) = sigmoid(f(Db) - f(Da)) with
// f(D) = D (linear: STE) or a log(max(b + c D, DBL_MIN)) (gamma-CKL: a = gamma/2, b = 0,
// c = 1; CKL: 1, mu, 1; t-STE: (alpha+1)/2, 1, 1/alpha).
struct LogOdds {
  double a = 1.0, b = 0.0, c = 1.0;
  bool linear = false;

  TS_ALWAYS_INLINE double operator()(double D) const {
    return linear ? D : a * std::log(std::max(b + c * D, kTinyDistance));
  }
};

// A pair's sums over the support points: P = sum w q, Pc = sum w (1 - q), H = sum w H2(q).
struct PairSums {
  double P = 0.0, Pc = 0.0, H = 0.0;
};

// P(a closer) and its complement for a log-odds z, mixed with the lapse; each accurate
// where the other rounds to 1.
TS_ALWAYS_INLINE void lapse_outcome(double z, double lapse, double& q, double& qc) {
  const double e = std::exp(-std::abs(z));
  const double big = 1.0 / (1.0 + e), small = e * big;  // sigmoid(|z|), sigmoid(-|z|)
  q = z >= 0.0 ? big : small;
  qc = z >= 0.0 ? small : big;
  if (lapse > 0.0) {
    q = 0.5 * lapse + (1.0 - lapse) * q;
    qc = 0.5 * lapse + (1.0 - lapse) * qc;
  }
}

// Binary entropy (nats) from q and qc = 1 - q; 0 log 0 = 0.
TS_ALWAYS_INLINE double binary_entropy(double q, double qc) {
  double h = 0.0;
  if (q > 0.0) h -= q * std::log(q);
  if (qc > 0.0) h -= qc * std::log(qc);
  return h;
}

namespace portable {

// F[m] = f(||S_m - x||^2) for m < M; ST: the support points transposed (d x M).
inline void log_odds_lanes(const LogOdds& f, const double* __restrict ST, std::int64_t M,
                           std::int64_t d, const double* __restrict x, double* __restrict F) {
  std::fill(F, F + M, 0.0);
  for (std::int64_t b = 0; b < d; ++b)
    for (std::int64_t m = 0; m < M; ++m) {
      const double u = ST[b * M + m] - x[b];
      F[m] += u * u;
    }
  for (std::int64_t m = 0; m < M; ++m) F[m] = f(F[m]);
}

// The sums of a pair whose items have log-odds terms Fa, Fb (L points, weights w), in order
// (w32, the float weights of the AVX2 lanes, is not read).
inline PairSums pair_sums(const double* __restrict Fa, const double* __restrict Fb,
                          const double* __restrict w, const float* /*w32*/, std::int64_t L,
                          double lapse) {
  PairSums s;
  for (std::int64_t l = 0; l < L; ++l) {
    double q, qc;
    lapse_outcome(Fb[l] - Fa[l], lapse, q, qc);
    s.P += w[l] * q;
    s.Pc += w[l] * qc;
    s.H += w[l] * binary_entropy(q, qc);
  }
  return s;
}

// acc[l] += log P(c closer) for one answer (c, f) whose items have log-odds terms Fc, Ff at
// L support points: log sigmoid(Ff - Fc), with a lapse log(lapse / 2 + (1 - lapse) q).
inline void add_answer_log_prob(const double* __restrict Fc, const double* __restrict Ff,
                                double* __restrict acc, std::int64_t L, double lapse) {
  for (std::int64_t l = 0; l < L; ++l) {
    const double z = Ff[l] - Fc[l];
    if (lapse > 0.0) {
      double q, qc;
      lapse_outcome(z, lapse, q, qc);
      acc[l] += std::log(q);
    } else {
      acc[l] += std::min(z, 0.0) - std::log1p(std::exp(-std::abs(z)));
    }
  }
}

}  // namespace portable
}  // namespace simd
}  // namespace tripletsearch
