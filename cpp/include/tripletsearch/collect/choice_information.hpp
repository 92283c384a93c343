// The sampler's scoring past pairs (tripletsearch.collect): a head's weights given its ranked
// answers, and how much the ranked answer to a screen of k candidates would tell about it.
//
// The table F (K x M) is information.hpp's log_odds_table: F[i][m] = f(||s_m - x_i||^2), the
// model's log-odds term, so that the model's choice among candidates C with the head at s_m is
//   P(c | C, s_m) = exp(-F[c][m]) / sum_{c' in C} exp(-F[c'][m])
// (gamma-CKL: d(h, c)^-gamma normalized; CKL, t-STE, STE by their own kernels; k = 2 is the
// pair's sigmoid). A ranked answer (c_1, ..., c_r) of r picks among k candidates is the
// successive choice among those left (Plackett-Luce), each pick mixed with a lapse (a pick
// uniform among those left):
//   P(c_1..c_r | s_m) = prod_j [lapse / (k - j) + (1 - lapse) P(c_j | C \ {c_1..c_{j-1}}, s_m)].
// An odd-one-out trial {h, a, b} is a choice of this kind with a row that does not depend on
// the head's position (the caller's constant row): P(odd = a) proportional to exp(-f(D_hb)).
//
// choice_log_weights: log w_m = log prior_m + sum over answers of log P(answer | s_m); an
// answer is a row of k table rows, the r picks first in order, then the others.
// choice_information: the mutual information (nats) between the ranked answer to a set of k
// candidates and the head's position, by enumerating the k! / (k - r)! ordered outcomes:
//   I = H(sum_m w_m P_m) - sum_m w_m H(P_m),  w normalized;
// k = 2, r = 1 is pair_information's. Outcomes at most kMaxOutcomes (a clear error beyond).
//
// Threads: OpenMP over support points (weights) and candidate sets (information), each output
// entry computed by one thread in a fixed order: bitwise identical for any thread count.
// Inputs checked before any parallel region. NumPy twin: python/tripletsearch/_reference/
// collect.py (choice_log_weights, choice_information).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "../core/errors.hpp"
#include "../core/interrupt.hpp"
#include "../core/parallel.hpp"
#include "../oracle/choice.hpp"  // kMaxChoices

namespace tripletsearch {

constexpr std::int64_t kMaxOutcomes = 1 << 16;

// k! / (k - r)!, or -1 beyond kMaxOutcomes.
inline std::int64_t ranked_outcomes(std::int64_t k, std::int64_t r) {
  std::int64_t o = 1;
  for (std::int64_t j = 0; j < r; ++j) {
    o *= k - j;
    if (o > kMaxOutcomes) return -1;
  }
  return o;
}

namespace detail {

inline void check_choice_shape(std::int64_t k, std::int64_t r) {
  if (k < 2 || k > kMaxChoices)
    throw std::invalid_argument("sets: between 2 and " + std::to_string(kMaxChoices) +
                                " candidates a row, got " + std::to_string(k));
  if (r < 1 || r >= k)
    throw std::invalid_argument("picks: between 1 and k - 1 = " + std::to_string(k - 1) +
                                ", got " + std::to_string(r));
}

// Rows (count x k) of the table: in [0, K), no row naming a table row twice.
inline void check_choice_rows(const std::int64_t* s, std::int64_t count, std::int64_t k,
                              std::int64_t K, const char* name) {
  require_in_range(s, count * k, K, k, name);
  for (std::int64_t c = 0; c < count; ++c)
    for (std::int64_t i = 0; i < k; ++i)
      for (std::int64_t j = i + 1; j < k; ++j)
        if (s[c * k + i] == s[c * k + j])
          throw std::invalid_argument(std::string(name) + ": row " + std::to_string(c) +
                                      " names row " + std::to_string(s[c * k + i]) + " twice");
}

inline void check_log_prior(const double* lw, std::int64_t count, const char* name) {
  for (std::int64_t m = 0; m < count; ++m)
    if (std::isnan(lw[m]) || lw[m] == std::numeric_limits<double>::infinity())
      throw std::invalid_argument(std::string(name) + ": contains NaN or +inf");
}

// The probabilities of the ordered outcomes of r successive picks among k options of
// weights e (unnormalized, >= 0), in lexicographic order of the picks' positions (Python's
// itertools.permutations(range(k), r)); each pick mixed with the lapse.
class RankedEnumerator {
 public:
  RankedEnumerator(std::int64_t k, std::int64_t r, double lapse) : k_(k), r_(r), lapse_(lapse) {
    used_.assign(static_cast<std::size_t>(k), 0);
  }
  // out: k!/(k-r)! probabilities
  void run(const double* e, double* out) {
    e_ = e;
    out_ = out;
    at_ = 0;
    descend(0, 1.0);
  }

 private:
  void descend(std::int64_t depth, double p) {
    double rest = 0.0;  // the weights of those left, summed afresh (no cancellation)
    for (std::int64_t i = 0; i < k_; ++i)
      if (!used_[static_cast<std::size_t>(i)]) rest += e_[i];
    const double uniform = lapse_ / static_cast<double>(k_ - depth);
    for (std::int64_t i = 0; i < k_; ++i) {
      if (used_[static_cast<std::size_t>(i)]) continue;
      const double q = uniform + (1.0 - lapse_) * (rest > 0.0 ? e_[i] / rest : 0.0);
      if (depth + 1 == r_) {
        out_[at_++] = p * q;
      } else {
        used_[static_cast<std::size_t>(i)] = 1;
        descend(depth + 1, p * q);
        used_[static_cast<std::size_t>(i)] = 0;
      }
    }
  }
  std::int64_t k_, r_;
  double lapse_;
  std::vector<char> used_;
  const double* e_ = nullptr;
  double* out_ = nullptr;
  std::int64_t at_ = 0;
};

inline double xlogx(double p) { return p > 0.0 ? p * std::log(p) : 0.0; }

}  // namespace detail

// log_w[m] = log_prior[m] + sum_a log P(answer a | head at S_m), answers (R x k) rows of F
// (K x M), the r picks first in order, then the candidates not picked.
inline void choice_log_weights(double lapse, const double* F, std::int64_t K, std::int64_t M,
                               const std::int64_t* answers, std::int64_t R, std::int64_t k,
                               std::int64_t r, const double* log_prior, double* log_w,
                               int threads, Cancel& cancel) {
  require_half_open(lapse, 0.0, 1.0, "lapse");
  require_at_least<std::int64_t>(M, 1, "log_odds");
  detail::check_choice_shape(k, r);
  detail::check_choice_rows(answers, R, k, K, "answers");
  detail::check_log_prior(log_prior, M, "log_prior");
  ProbingBarrier done;
#pragma omp parallel num_threads(threads) if (threads > 1 && M * R * k >= 16384)
  {
    std::vector<double> v(static_cast<std::size_t>(k));
#pragma omp for schedule(static) nowait
    for (std::int64_t m = 0; m < M; ++m) {
      if ((m & 63) == 0 && cancel.checkpoint()) continue;
      double acc = log_prior[m];
      for (std::int64_t a = 0; a < R; ++a) {
        const std::int64_t* row = answers + a * k;
        for (std::int64_t i = 0; i < k; ++i) v[static_cast<std::size_t>(i)] = -F[row[i] * M + m];
        for (std::int64_t j = 0; j < r; ++j) {  // pick j among v[j..k)
          double top = -std::numeric_limits<double>::infinity();
          for (std::int64_t i = j; i < k; ++i) top = std::max(top, v[static_cast<std::size_t>(i)]);
          double s = 0.0;
          for (std::int64_t i = j; i < k; ++i) s += std::exp(v[static_cast<std::size_t>(i)] - top);
          const double log_p = v[static_cast<std::size_t>(j)] - top - std::log(s);
          acc += lapse > 0.0 ? std::log(lapse / static_cast<double>(k - j) +
                                        (1.0 - lapse) * std::exp(log_p))
                             : log_p;
        }
      }
      log_w[m] = acc;
    }
    done.arrive(cancel);
#pragma omp barrier
  }
  cancel.throw_if_stopped();
  for (std::int64_t m = 0; m < M; ++m)
    if (std::isnan(log_w[m])) throw std::invalid_argument("log_odds: contains NaN");
}

// info[c] = I(the ranked answer of r picks among sets[c]) in nats, sets (C x k) rows of F
// (K x M), log_w the head's log weights (M, unnormalized; -inf: an impossible point).
inline void choice_information(double lapse, const double* F, std::int64_t K, std::int64_t M,
                               const double* log_w, const std::int64_t* sets, std::int64_t C,
                               std::int64_t k, std::int64_t r, double* info, int threads,
                               Cancel& cancel) {
  require_half_open(lapse, 0.0, 1.0, "lapse");
  require_at_least<std::int64_t>(M, 1, "log_odds");
  detail::check_choice_shape(k, r);
  const std::int64_t O = ranked_outcomes(k, r);
  if (O < 0)
    throw std::invalid_argument("picks: " + std::to_string(r) + " ranked picks among " +
                                std::to_string(k) + " have more than " +
                                std::to_string(kMaxOutcomes) + " outcomes");
  detail::check_choice_rows(sets, C, k, K, "sets");
  detail::check_log_prior(log_w, M, "log_weights");
  const double top = *std::max_element(log_w, log_w + M);
  if (top == -std::numeric_limits<double>::infinity())
    throw std::invalid_argument("log_weights: every support point is impossible (-inf)");
  std::vector<double> w(static_cast<std::size_t>(M));  // normalized, max-subtracted
  double total = 0.0;
  for (std::int64_t m = 0; m < M; ++m)
    total += (w[static_cast<std::size_t>(m)] = std::exp(log_w[m] - top));
  for (double& x : w) x /= total;
  ProbingBarrier done;
#pragma omp parallel num_threads(threads) if (threads > 1 && C * M * O >= 16384)
  {
    std::vector<double> e(static_cast<std::size_t>(k)), p(static_cast<std::size_t>(O)),
        pbar(static_cast<std::size_t>(O));
    detail::RankedEnumerator ranked(k, r, lapse);
#pragma omp for schedule(static) nowait
    for (std::int64_t c = 0; c < C; ++c) {
      if (cancel.checkpoint()) continue;
      const std::int64_t* row = sets + c * k;
      std::fill(pbar.begin(), pbar.end(), 0.0);
      double h = 0.0;  // sum_m w_m sum_o P log P
      for (std::int64_t m = 0; m < M; ++m) {
        const double wm = w[static_cast<std::size_t>(m)];
        if (wm == 0.0) continue;
        double lo = std::numeric_limits<double>::infinity();
        for (std::int64_t i = 0; i < k; ++i) lo = std::min(lo, F[row[i] * M + m]);
        bool nan = false;
        for (std::int64_t i = 0; i < k; ++i) {
          const double f = F[row[i] * M + m];
          nan = nan || std::isnan(f);
          e[static_cast<std::size_t>(i)] = std::exp(lo - f);
        }
        if (nan) {  // a NaN in F: keep it visible (the probabilities would hide it)
          h = std::numeric_limits<double>::quiet_NaN();
          break;
        }
        ranked.run(e.data(), p.data());
        double hm = 0.0;
        for (std::int64_t o = 0; o < O; ++o) {
          const double po = p[static_cast<std::size_t>(o)];
          pbar[static_cast<std::size_t>(o)] += wm * po;
          hm += detail::xlogx(po);
        }
        h += wm * hm;
      }
      double hbar = 0.0;
      for (std::int64_t o = 0; o < O; ++o) hbar += detail::xlogx(pbar[static_cast<std::size_t>(o)]);
      info[c] = h - hbar;  // H(pbar) - sum_m w_m H(P_m)
    }
    done.arrive(cancel);
#pragma omp barrier
  }
  cancel.throw_if_stopped();
  // I >= 0 (H is concave): a rounding below 0 is clamped; NaN only from a NaN in F
  for (std::int64_t c = 0; c < C; ++c) {
    if (std::isnan(info[c])) throw std::invalid_argument("log_odds: contains NaN");
    info[c] = std::max(0.0, info[c]);
  }
}

}  // namespace tripletsearch
