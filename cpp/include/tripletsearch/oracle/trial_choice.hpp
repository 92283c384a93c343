// One trial's choice maths (oracle/trials.hpp's kernels use it): the sets' layout, the
// models' log-weights w(D) = -f(D), and log p of an answer with its derivatives in w.
// Ordered answers: Plackett-Luce, in the probability domain from relative weights in
// (0, 1] (no exp for gamma-CKL), falling back to log space (log-sum-exp) when p underflows;
// unordered answers: log space, the sum over the r! orders of the picks. A lapse rate
// lambda (a set's `lapse`): each pick at random among the s alternatives left with
// probability lambda, p = (1 - lambda) q + lambda / s for the model's choice probability q.
// python/tripletsearch/_reference/trials.py is the NumPy twin.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "../core/errors.hpp"
#include "../core/mathutil.hpp"
#include "choice.hpp"
#include "models.hpp"

namespace tripletsearch {
enum class TrialKind : int { Ranked = 0, OddOneOut = 1 };

constexpr int kMaxUnorderedPicks = 4;  // an unordered answer sums r! orders: r <= 4

// One set of trials of one shape; rows (m, width) row-major, int64 item ids.
struct TrialSet {
  const std::int64_t* rows = nullptr;
  std::int64_t m = 0;
  TrialKind kind = TrialKind::Ranked;
  int k = 2;  // alternatives per trial (ranked: candidates; odd-one-out: 3 pairs)
  int r = 1;  // choices per trial (ranked: picks; odd-one-out: 1)
  bool ordered = true;
  double lapse = 0.0;  // the probability that a pick is at random among those left

  int width() const { return kind == TrialKind::Ranked ? k + 1 : 3; }

  // Alternative j of trial row R: the pair (u, v).
  void pair(const std::int64_t* R, int j, std::int64_t& u, std::int64_t& v) const {
    if (kind == TrialKind::Ranked) {
      u = R[0];
      v = R[1 + j];
    } else {
      u = R[j == 2 ? 1 : 0];
      v = R[j == 0 ? 1 : 2];
    }
  }

  // Throws std::invalid_argument naming the argument when the shape or an id is bad.
  void validate(std::int64_t n) const {
    if (m < 0) throw std::invalid_argument("trials: negative number of rows");
    if (kind == TrialKind::OddOneOut && (k != 3 || r != 1))
      throw std::invalid_argument("trials: an odd-one-out trial has 3 pairs and 1 choice");
    if (k < 2 || k > kMaxChoices)
      throw std::invalid_argument("candidates: between 2 and " + std::to_string(kMaxChoices) +
                                  " per trial, got " + std::to_string(k));
    if (r < 1 || r >= k)
      throw std::invalid_argument("picks: between 1 and k - 1 per trial, got " +
                                  std::to_string(r));
    if (!ordered && r > kMaxUnorderedPicks)
      throw std::invalid_argument(
          "picks: an unordered answer sums the orders of its picks, at most " +
          std::to_string(kMaxUnorderedPicks) + " picks (got " + std::to_string(r) +
          "); give them in order (ordered=True)");
    if (!(lapse >= 0.0 && lapse < 1.0))
      throw std::invalid_argument("lapse: a probability in [0, 1), got " + std::to_string(lapse));
    require_in_range(rows, m * width(), n, width(), "trials");
  }
};

// ||x - y||^2 in four interleaved partial sums (one SIMD register; the order depends on d
// only, so results stay deterministic).
TS_ALWAYS_INLINE double pair_sqdist(const double* __restrict x, const double* __restrict y,
                                    std::int64_t d) {
  double s[4] = {0.0, 0.0, 0.0, 0.0};
  std::int64_t a = 0;
  for (; a + 4 <= d; a += 4)
    for (int l = 0; l < 4; ++l) {
      const double u = x[a + l] - y[a + l];
      s[l] += u * u;
    }
  for (; a < d; ++a) {
    const double u = x[a] - y[a];
    s[0] += u * u;
  }
  return (s[0] + s[2]) + (s[1] + s[3]);
}

// Log-weights w(D) = -f(D) and their derivatives, per model.
template <class M>
struct LogWeight;

template <>
struct LogWeight<GammaCKLModel> {
  static constexpr bool kGamma = true;
  GammaPower g;
  explicit LogWeight(const GammaCKLModel& model) : g(model.g) {}
  // v[j] = exp(w_j - max w) = (Dmin / D_j)^(gamma/2) in (0, 1]; dw[j] = dw/dD_j.
  TS_ALWAYS_INLINE void weights(const double* D, int k, double* v, double* dw) const {
    double dmin = std::max(D[0], kTinyDistance);
    for (int j = 1; j < k; ++j) dmin = std::min(dmin, std::max(D[j], kTinyDistance));
    for (int j = 0; j < k; ++j) {
      const double Dj = std::max(D[j], kTinyDistance);
      v[j] = g(dmin * (1.0 / Dj));
      dw[j] = D[j] > kTinyDistance ? -g.half_gamma() / Dj : 0.0;
    }
  }
  // lw[j] = w_j - max w (the slow path and d/d log gamma need it).
  TS_ALWAYS_INLINE void log_weights(const double* D, int k, double* lw) const {
    double wmax = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < k; ++j) wmax = std::max(wmax, lw[j] = -g.half_gamma() * safe_log(D[j]));
    for (int j = 0; j < k; ++j) lw[j] -= wmax;
  }
};

template <class K>
struct LogWeight<DiffModel<K>> {
  static constexpr bool kGamma = false;
  K kern;
  explicit LogWeight(const DiffModel<K>& model) : kern(model.k) {}
  TS_ALWAYS_INLINE void weights(const double* D, int k, double* v, double* dw) const {
    log_weights(D, k, v);
    for (int j = 0; j < k; ++j) {
      v[j] = std::exp(v[j]);
      dw[j] = -kern.fprime(std::max(D[j], 0.0));
    }
  }
  TS_ALWAYS_INLINE void log_weights(const double* D, int k, double* lw) const {
    double wmax = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < k; ++j) wmax = std::max(wmax, lw[j] = -kern.f(std::max(D[j], 0.0)));
    for (int j = 0; j < k; ++j) lw[j] -= wmax;
  }
};

namespace detail {

inline double log_sum_exp(const double* a, const int* idx, int count) {
  double mx = -std::numeric_limits<double>::infinity();
  for (int t = 0; t < count; ++t) mx = std::max(mx, a[idx[t]]);
  double s = 0.0;
  for (int t = 0; t < count; ++t) s += std::exp(a[idx[t]] - mx);
  return mx + std::log(s);
}

// Plackett-Luce in log space from lw (any shift): log p of picking alternatives order[0..r)
// in that order among k (each pick at random among those left with probability lapse), and
// e[j] += scale * dlogp/dw_j. The slow, exact path.
inline double ordered_log(const double* lw, int k, const int* order, int r, double* e,
                          double scale, double lapse = 0.0) {
  int left[kMaxChoices];
  int nleft = 0;
  for (int j = 0; j < k; ++j) left[nleft++] = j;
  double logp = 0.0;
  const double keep = std::log1p(-lapse);
  for (int s = 0; s < r; ++s) {
    const double lse = log_sum_exp(lw, left, nleft);
    const int c = order[s];
    double lp = lw[c] - lse, rho = 1.0;  // rho = d log p / d log q of this pick
    if (lapse > 0.0) {
      const double a = keep + lp, b = std::log(lapse / nleft), mx = std::max(a, b);
      lp = mx + std::log(std::exp(a - mx) + std::exp(b - mx));
      rho = std::exp(a - lp);
    }
    logp += lp;
    if (e != nullptr) {
      e[c] += scale * rho;
      for (int t = 0; t < nleft; ++t) e[left[t]] -= scale * rho * std::exp(lw[left[t]] - lse);
    }
    nleft = static_cast<int>(std::remove(left, left + nleft, c) - left);
  }
  return logp;
}

// Unordered picks 0..r-1 in log space: log sum over the r! orders; e[j] = dlogp/dw_j.
inline double unordered_log(const double* lw, int k, int r, double* e, double lapse) {
  int order[kMaxUnorderedPicks];
  for (int s = 0; s < r; ++s) order[s] = s;
  double L[24];
  int np = 0;
  do {
    L[np++] = ordered_log(lw, k, order, r, nullptr, 0.0, lapse);
  } while (std::next_permutation(order, order + r));
  double mx = -std::numeric_limits<double>::infinity();
  for (int p = 0; p < np; ++p) mx = std::max(mx, L[p]);
  double s = 0.0;
  for (int p = 0; p < np; ++p) s += std::exp(L[p] - mx);
  const double logp = mx + std::log(s);
  std::fill(e, e + k, 0.0);
  for (int t = 0; t < r; ++t) order[t] = t;
  int p = 0;
  do {  // the same orders, in the same sequence
    ordered_log(lw, k, order, r, e, std::exp(L[p++] - logp), lapse);
  } while (std::next_permutation(order, order + r));
  return logp;
}

// The fast path of an ordered answer from relative weights v in (0, 1]: log p and
// e[j] = dlogp/dw_j; false (nothing written) when p underflows (then the log path).
TS_ALWAYS_INLINE bool ordered_fast(const double* v, int k, int r, double* e, double& logp) {
  double S[kMaxChoices + 1];
  S[k] = 0.0;
  for (int j = k - 1; j >= 0; --j) S[j] = S[j + 1] + v[j];
  double P = 1.0, acc = 0.0;
  for (int j = 0; j < k; ++j) {
    if (j < r) {
      const double inv = 1.0 / S[j];
      P *= v[j] * inv;
      acc += inv;
    }
    e[j] = (j < r ? 1.0 : 0.0) - v[j] * acc;
  }
  if (!(P > 1e-300)) return false;
  logp = std::log(P);
  return true;
}

// The fast path with a lapse rate: each pick's p = (1 - lapse) q + lapse / (k - s), where q
// = v_c / S_s; e[j] = sum over picks s of rho_s (1[j = s] - v_j / S_s 1[j >= s]), rho_s =
// (1 - lapse) q / p. False (nothing usable) when a pick's p underflows (then the log path).
TS_ALWAYS_INLINE bool ordered_fast_lapse(const double* v, int k, int r, double lapse, double* e,
                                         double& logp) {
  double S[kMaxChoices + 1];
  S[k] = 0.0;
  for (int j = k - 1; j >= 0; --j) S[j] = S[j + 1] + v[j];
  const double keep = 1.0 - lapse;
  double P = 1.0, acc = 0.0;
  for (int j = 0; j < k; ++j) {
    double rho = 0.0;
    if (j < r) {
      const double inv = 1.0 / S[j], q = keep * v[j] * inv, p = q + lapse / (k - j);
      P *= p;
      rho = q / p;
      acc += rho * inv;
    }
    e[j] = rho - v[j] * acc;
  }
  if (!(P > 1e-300)) return false;
  logp = std::log(P);
  return true;
}

}  // namespace detail

// log p of one trial and e[j] = dlogp/dw_j from its squared distances D; dw[j] = dw/dD_j;
// lw: scratch (k). Returns d log p / d log gamma in dlg when kDG (gamma-CKL).
template <bool kDG, class LW>
TS_ALWAYS_INLINE double trial_terms(const LW& lw, const TrialSet& S, const double* D, double* e,
                                    double* dw, double* lws, double& dlg) {
  double v[kMaxChoices];
  lw.weights(D, S.k, v, dw);
  double logp = 0.0;
  bool logs = false;
  if (!S.ordered) {
    lw.log_weights(D, S.k, lws);
    logs = true;
    logp = detail::unordered_log(lws, S.k, S.r, e, S.lapse);
  } else if (S.lapse > 0.0 ? !detail::ordered_fast_lapse(v, S.k, S.r, S.lapse, e, logp)
                           : !detail::ordered_fast(v, S.k, S.r, e, logp)) {
    lw.log_weights(D, S.k, lws);
    logs = true;
    int order[kMaxChoices];
    for (int s = 0; s < S.r; ++s) order[s] = s;
    std::fill(e, e + S.k, 0.0);
    logp = detail::ordered_log(lws, S.k, order, S.r, e, 1.0, S.lapse);
  }
  if constexpr (kDG) {  // w_j is proportional to gamma: d w_j / d log gamma = w_j
    if (!logs) lw.log_weights(D, S.k, lws);
    double s = 0.0;
    for (int j = 0; j < S.k; ++j) s += e[j] * lws[j];  // sum_j e_j = 0: the shift cancels
    dlg = s;
  }
  return logp;
}

}  // namespace tripletsearch
