// The triplet sampler's scoring (tripletsearch.collect): where a head lies given its
// answers, and how much the answer to a candidate pair would tell about it.
//
// A head h is asked "which of a and b is closer to h?". Its position is unknown: M support
// points s_1..s_M stand for where it might be (the n items' embedded positions for "arr",
// particles for "active"), with log weights
//   log w_m = log prior_m + sum over h's answers (c, f) of log P(c closer than f | h at s_m),
// P the sampler's model (OracleSpec: gamma-CKL, CKL, t-STE or STE) mixed with a lapse,
// P = lapse / 2 + (1 - lapse) p, through the models' own log_prob (models.hpp; gamma-CKL:
// choice.hpp) (head_log_weights). A candidate pair (a, b) is scored by the mutual
// information between its answer and the head's position (pair_information):
//   I(a, b) = H2(sum_m w_m q_m) - sum_m w_m H2(q_m),  q_m = P(a closer | h at s_m),
// H2 the binary entropy in nats and w normalized (max-subtracted): Tamuz et al.'s
// information gain, which salmon's adaptive score equals up to a constant per head.
//
// q_m comes from the model's log-odds, p(a closer) = sigmoid(f(Db) - f(Da)), with
// f(D) = (gamma/2) log D (gamma-CKL: choice.hpp's PairChoice::log_odds split per distance),
// log(mu + D) (CKL), ((alpha+1)/2) log(1 + D/alpha) (t-STE), D (STE), squared distances
// floored at DBL_MIN. The terms f(||s_m - x_i||^2) of the items a head's pairs use form a
// table (log_odds_table, K x M): the sampler keeps it while the support and the embedding
// stay (the particles of "active" live from one refit to the next), so an ask scores its
// pairs from the table alone. Probit has no log-odds form and is refused.
//
// Threads: OpenMP over support points (weights), items (table) and candidate pairs
// (information), each output entry computed by one thread in a fixed order: bitwise
// identical for any thread count. Inputs are checked before any parallel region
// (std::invalid_argument naming the argument); a Cancel stops a long call (Ctrl-C). The
// lanes are simd/information.hpp's. NumPy twin: python/tripletsearch/_reference/collect.py.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "../core/errors.hpp"
#include "../core/interrupt.hpp"
#include "../core/parallel.hpp"
#include "../oracle/choice.hpp"
#include "../oracle/models.hpp"
#include "../oracle/row_dist.hpp"
#include "../simd/information.hpp"

namespace tripletsearch {

// The sampler's model of a head's answers: the oracle mixed with a lapse.
struct HeadModel {
  OracleSpec spec;
  double lapse = 0.0;

  void validate() const {
    validate_log_odds_model(spec);
    require_half_open(lapse, 0.0, 1.0, "lapse");
  }
  static void validate_log_odds_model(const OracleSpec& spec) {
    spec.validate();
    if (spec.kind == ModelKind::Probit)
      throw std::invalid_argument("spec: Probit has no log-odds form; the sampler cannot use it");
  }
};

// f of the model's log-odds f(Db) - f(Da) (simd/information_portable.hpp).
inline simd::LogOdds log_odds_form(const OracleSpec& spec) {
  switch (spec.kind) {
    case ModelKind::GammaCKL:
      return {0.5 * spec.param, 0.0, 1.0, false};
    case ModelKind::CKL:
      return {1.0, spec.param, 1.0, false};
    case ModelKind::TSTE:
      return {0.5 * (spec.param + 1.0), 1.0, 1.0 / spec.param, false};
    default:
      return {1.0, 0.0, 1.0, true};
  }
}

// The items and the support points of one head.
struct HeadGeometry {
  const double* X;  // n x d item positions
  std::int64_t n, d;
  const double* S;  // M x d support points
  std::int64_t M;
};

namespace detail {

inline void require_finite_array(const double* a, std::int64_t count, const char* name) {
  for (std::int64_t k = 0; k < count; ++k)
    if (!std::isfinite(a[k]))
      throw std::invalid_argument(std::string(name) + ": contains NaN or inf");
}

inline void check_geometry(const HeadGeometry& g) {
  require_at_least<std::int64_t>(g.n, 1, "X");
  require_at_least<std::int64_t>(g.d, 1, "X");
  require_at_least<std::int64_t>(g.M, 1, "support");
  require_finite_array(g.X, g.n * g.d, "X");
  require_finite_array(g.S, g.M * g.d, "support");
}

// Item pairs (count x 2): in [0, n), two distinct items per row.
inline void check_pairs(const std::int64_t* p, std::int64_t count, std::int64_t n,
                        const char* name) {
  require_in_range(p, 2 * count, n, 2, name);
  for (std::int64_t r = 0; r < count; ++r)
    if (p[2 * r] == p[2 * r + 1])
      throw std::invalid_argument(std::string(name) + ": row " + std::to_string(r) +
                                  " names item " + std::to_string(p[2 * r]) + " twice");
}

// Log weights (count): no NaN, no +inf.
inline void check_log_weights(const double* lw, std::int64_t count, const char* name) {
  for (std::int64_t m = 0; m < count; ++m)
    if (std::isnan(lw[m]) || lw[m] == std::numeric_limits<double>::infinity())
      throw std::invalid_argument(std::string(name) + ": contains NaN or +inf");
}

}  // namespace detail

// log_w[m] = log_prior[m] + sum_r log P(answers[r] | head at S[m]) for m < M: answers is
// r x 2 item ids (closer, farther), added in order; P by the model's log_prob (lapse 0) or
// log(lapse / 2 + (1 - lapse) prob).
inline void head_log_weights(const HeadModel& model, const HeadGeometry& g,
                             const std::int64_t* answers, std::int64_t r, const double* log_prior,
                             double* log_w, int threads, Cancel& cancel) {
  model.validate();
  detail::check_geometry(g);
  detail::check_pairs(answers, r, g.n, "answers");
  detail::check_log_weights(log_prior, g.M, "log_prior");
  const double lapse = model.lapse;
  with_model(model.spec, [&](const auto& mdl) {
    using Model = std::decay_t<decltype(mdl)>;
    ProbingBarrier done;
#pragma omp parallel num_threads(threads) if (threads > 1 && g.M * (r + 1) >= 4096)
    {
#pragma omp for schedule(static) nowait
      for (std::int64_t m = 0; m < g.M; ++m) {
        if ((m & 63) == 0 && cancel.checkpoint()) continue;
        const double* s = g.S + m * g.d;
        double acc = log_prior[m];
        for (std::int64_t k = 0; k < r; ++k) {
          const RowDist rd = row_dist<Model::kPairTerms>(s, g.X + answers[2 * k] * g.d,
                                                         g.X + answers[2 * k + 1] * g.d, g.d);
          acc +=
              lapse > 0.0 ? std::log(0.5 * lapse + (1.0 - lapse) * mdl.prob(rd)) : mdl.log_prob(rd);
        }
        log_w[m] = acc;
      }
      done.arrive(cancel);
#pragma omp barrier
    }
    return 0;
  });
  cancel.throw_if_stopped();
}

// head_log_weights from a log-odds table instead of the geometry: log_w[m] = log_prior[m] +
// sum_r log P(c_r closer | head at S_m), the answers (r x 2) given as rows (closer, farther)
// of the table F (K x M) of log_odds_table over the same support, P = sigmoid(F[f][m] -
// F[c][m]) mixed with the lapse. Equal to head_log_weights up to rounding (the log-odds by
// one difference of the table's terms); no distance or model evaluated: what the sampler
// uses when its table holds every item of the head's answers. Support points in fixed
// blocks of 64 (bitwise identical for any thread count), each point's answers in order.
inline void table_log_weights(double lapse, const double* F, std::int64_t K, std::int64_t M,
                              const std::int64_t* answers, std::int64_t r, const double* log_prior,
                              double* log_w, int threads, Cancel& cancel) {
  require_half_open(lapse, 0.0, 1.0, "lapse");
  require_at_least<std::int64_t>(M, 1, "log_odds");
  detail::check_pairs(answers, r, K, "answers");
  detail::check_log_weights(log_prior, M, "log_prior");
  constexpr std::int64_t kBlock = 64;
  const std::int64_t blocks = (M + kBlock - 1) / kBlock;
  ProbingBarrier done;
#pragma omp parallel num_threads(threads) if (threads > 1 && M * r >= 8192)
  {
#pragma omp for schedule(static) nowait
    for (std::int64_t b = 0; b < blocks; ++b) {
      if (cancel.checkpoint()) continue;
      const std::int64_t m0 = b * kBlock, L = std::min(kBlock, M - m0);
      std::copy(log_prior + m0, log_prior + m0 + L, log_w + m0);
      for (std::int64_t k = 0; k < r; ++k)
        simd::add_answer_log_prob(F + answers[2 * k] * M + m0, F + answers[2 * k + 1] * M + m0,
                                  log_w + m0, L, lapse);
    }
    done.arrive(cancel);
#pragma omp barrier
  }
  cancel.throw_if_stopped();
  // the table is not scanned on every call: a NaN in the rows read shows here
  for (std::int64_t m = 0; m < M; ++m)
    if (std::isnan(log_w[m])) throw std::invalid_argument("log_odds: contains NaN");
}

// F[k][m] = f(||S_m - x_items[k]||^2) (K x M): the log-odds terms of K items for every support
// point. A pair (a, b) of them has log-odds F[b][m] - F[a][m] of "a closer" with the head at
// S_m.
inline void log_odds_table(const OracleSpec& spec, const HeadGeometry& g, const std::int64_t* items,
                           std::int64_t K, double* F, int threads, Cancel& cancel) {
  HeadModel::validate_log_odds_model(spec);
  detail::check_geometry(g);
  require_in_range(items, K, g.n, 1, "items");
  const simd::LogOdds f = log_odds_form(spec);
  std::vector<double> ST(static_cast<std::size_t>(g.M * g.d));  // the support, d x M
  for (std::int64_t m = 0; m < g.M; ++m)
    for (std::int64_t b = 0; b < g.d; ++b)
      ST[static_cast<std::size_t>(b * g.M + m)] = g.S[m * g.d + b];
  ProbingBarrier done;
#pragma omp parallel num_threads(threads) if (threads > 1 && K * g.M >= 8192)
  {
#pragma omp for schedule(static) nowait
    for (std::int64_t k = 0; k < K; ++k) {
      if ((k & 15) == 0 && cancel.checkpoint()) continue;
      simd::log_odds_lanes(f, ST.data(), g.M, g.d, g.X + items[k] * g.d, F + k * g.M);
    }
    done.arrive(cancel);
#pragma omp barrier
  }
  cancel.throw_if_stopped();
}

// info[c] = I(pairs[c]) (nats) for c < C: pairs (C x 2) are rows of the log-odds table F
// (K x M, finite), log_w the head's log weights (M, unnormalized; -inf: an impossible
// point).
inline void pair_information(double lapse, const double* F, std::int64_t K, std::int64_t M,
                             const double* log_w, const std::int64_t* pairs, std::int64_t C,
                             double* info, int threads, Cancel& cancel) {
  require_half_open(lapse, 0.0, 1.0, "lapse");
  require_at_least<std::int64_t>(M, 1, "log_odds");
  detail::check_pairs(pairs, C, K, "pairs");
  detail::check_log_weights(log_w, M, "log_weights");
  const double top = *std::max_element(log_w, log_w + M);
  if (top == -std::numeric_limits<double>::infinity())
    throw std::invalid_argument("log_weights: every support point is impossible (-inf)");
  std::vector<double> w(static_cast<std::size_t>(M));  // normalized, max-subtracted
  double total = 0.0;
  for (std::int64_t m = 0; m < M; ++m)
    total += (w[static_cast<std::size_t>(m)] = std::exp(log_w[m] - top));
  for (double& v : w) v /= total;
  std::vector<float> w32(static_cast<std::size_t>(M));  // the float lanes' (no subnormals)
  for (std::size_t m = 0; m < w.size(); ++m)
    w32[m] = w[m] < static_cast<double>(FLT_MIN) ? 0.0f : static_cast<float>(w[m]);
  ProbingBarrier done;
#pragma omp parallel num_threads(threads) if (threads > 1 && C * M >= 16384)
  {
#pragma omp for schedule(static) nowait
    for (std::int64_t c = 0; c < C; ++c) {
      if ((c & 15) == 0 && cancel.checkpoint()) continue;
      const simd::PairSums s = simd::pair_sums(F + pairs[2 * c] * M, F + pairs[2 * c + 1] * M,
                                               w.data(), w32.data(), M, lapse);
      // a NaN in F makes P NaN (binary_entropy reads a NaN as 0 log 0: keep it visible)
      info[c] = std::isnan(s.P) ? s.P : simd::binary_entropy(s.P, s.Pc) - s.H;
    }
    done.arrive(cancel);
#pragma omp barrier
  }
  cancel.throw_if_stopped();
  // I >= 0 (H2 is concave): a rounding below 0 is clamped; NaN only from a NaN in F (the
  // table is not scanned on every call: its NaN shows here)
  for (std::int64_t c = 0; c < C; ++c) {
    if (std::isnan(info[c])) throw std::invalid_argument("log_odds: contains NaN");
    info[c] = std::max(0.0, info[c]);
  }
}

}  // namespace tripletsearch
