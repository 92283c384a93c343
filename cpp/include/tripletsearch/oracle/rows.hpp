// Oracle kernels over triplet rows: probabilities, log-probabilities, the log-likelihood
// and the k-alternative choice probabilities, OpenMP over rows, identical for any thread
// count.
//
// Index rule (mirrored by the NumPy reference): t == i gives p = 1 (log p = 0); otherwise
// t == j gives p = 0 (log p = -inf); i == j (t != i) offers one item twice, p = 1/2 in every
// model (which models.hpp gives by itself). Index ranges are checked inside the kernels' own
// pass (a separate scan would cost as much as the kernel's memory traffic): a row with an
// index outside [0, n) is skipped and flagged, and after the parallel region the kernel
// throws std::invalid_argument naming the first offending entry.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "../core/errors.hpp"
#include "../core/interrupt.hpp"
#include "../core/parallel.hpp"
#include "choice.hpp"
#include "models.hpp"
#include "row_dist.hpp"

namespace tripletsearch {

struct Problem {
  const double* X;  // (n, d) row-major
  std::int64_t n, d;
  const std::int64_t* T;  // (m, 3) row-major
  std::int64_t m;
  const std::int32_t* T32 = nullptr;  // the rows as int32 instead (then T is unused)
};

// Problem over int64 or int32 rows.
inline Problem make_problem(const double* X, std::int64_t n, std::int64_t d, const std::int64_t* T,
                            std::int64_t m) {
  return Problem{X, n, d, T, m, nullptr};
}
inline Problem make_problem(const double* X, std::int64_t n, std::int64_t d, const std::int32_t* T,
                            std::int64_t m) {
  return Problem{X, n, d, nullptr, m, T};
}

inline bool row_in_range(std::int64_t t, std::int64_t i, std::int64_t j, std::int64_t n) {
  const auto un = static_cast<std::uint64_t>(n);
  return (static_cast<std::uint64_t>(t) < un) & (static_cast<std::uint64_t>(i) < un) &
         (static_cast<std::uint64_t>(j) < un);
}

// What a row is: an index out of range, the index rule (t == i: certain, p = 1;
// otherwise t == j: impossible, p = 0), or a row for the model.
enum class RowKind { OutOfRange, Certain, Impossible, Live };

// Row r's items (t, i, j) and its kind.
inline RowKind classify_row(const Problem& P, std::int64_t r, std::int64_t& t, std::int64_t& i,
                            std::int64_t& j) {
  if (P.T32 != nullptr) {  // the same branch for every row: predicted
    t = P.T32[3 * r];
    i = P.T32[3 * r + 1];
    j = P.T32[3 * r + 2];
  } else {
    t = P.T[3 * r];
    i = P.T[3 * r + 1];
    j = P.T[3 * r + 2];
  }
  if (!row_in_range(t, i, j, P.n)) return RowKind::OutOfRange;
  if (t == i) return RowKind::Certain;
  if (t == j) return RowKind::Impossible;
  return RowKind::Live;
}

// log p of a row decided by the index rule: 0 (certain) or -inf (impossible).
inline double rule_log_prob(RowKind kind) {
  return kind == RowKind::Certain ? 0.0 : -std::numeric_limits<double>::infinity();
}

// The distances of a live row.
template <class Model>
RowDist live_row(const Problem& P, std::int64_t t, std::int64_t i, std::int64_t j) {
  return row_dist<Model::kPairTerms>(P.X + t * P.d, P.X + i * P.d, P.X + j * P.d, P.d);
}

[[noreturn]] inline void throw_bad_triplets(const Problem& P) {
  if (P.T32 != nullptr) throw_out_of_range(P.T32, 3 * P.m, P.n, 3, "triplets");
  throw_out_of_range(P.T, 3 * P.m, P.n, 3, "triplets");
}

template <class Model>
void prob_rows(const Model& model, const Problem& P, double* out, bool log_space, int threads) {
  bool bad = false;
#pragma omp parallel for schedule(static) reduction(|| : bad) num_threads(threads)
  for (std::int64_t r = 0; r < P.m; ++r) {
    std::int64_t t, i, j;
    const RowKind kind = classify_row(P, r, t, i, j);
    if (kind == RowKind::Live) {
      const RowDist rd = live_row<Model>(P, t, i, j);
      out[r] = log_space ? model.log_prob(rd) : model.prob(rd);
    } else if (kind == RowKind::OutOfRange) {
      bad = true;
    } else {
      out[r] = log_space ? rule_log_prob(kind) : (kind == RowKind::Certain ? 1.0 : 0.0);
    }
  }
  if (bad) throw_bad_triplets(P);
}

// Squared distances of an embedding overflow double precision once coordinates exceed
// sqrt(DBL_MAX / (4 d)), and underflow below sqrt(DBL_MIN). For a scale-free model the
// kernels run on X times a power of two that brings the largest coordinate near 1 (exact:
// every ratio of squared distances is unchanged); any other model raises instead of
// returning NaN.
class SafeScale {
 public:
  SafeScale(const OracleSpec& spec, const double* X, std::int64_t n, std::int64_t d) : X_(X) {
    double M = 0.0;
    for (std::int64_t k = 0; k < n * d; ++k) M = std::max(M, std::fabs(X[k]));
    const double high = std::sqrt(DBL_MAX / (4.0 * double(d))), low = 0x1p-500;
    if (M <= high && (M >= low || M == 0.0)) return;
    if (!spec.scale_free()) {
      if (M > high)
        throw std::invalid_argument(
            "X: coordinates up to " + format_number(M) +
            " overflow squared distances in double precision, and this model is not "
            "scale-free: rescale the embedding");
      return;  // tiny coordinates: distances floor at DBL_MIN, as documented
    }
    std::frexp(M, &exponent_);
    exponent_ = -exponent_;  // ldexp, not a factor: 2^-e overflows for subnormal M
    scaled_.resize(static_cast<std::size_t>(n * d));
    for (std::int64_t k = 0; k < n * d; ++k)
      scaled_[static_cast<std::size_t>(k)] = std::ldexp(X[k], exponent_);
  }
  const double* X() const { return scaled_.empty() ? X_ : scaled_.data(); }
  int exponent() const { return exponent_; }  // X() = 2^exponent X

 private:
  const double* X_;
  int exponent_ = 0;
  std::vector<double> scaled_;
};

// Checks a kernel call's model and thread count (index ranges are checked in the pass).
inline void check_call(const OracleSpec& spec, int threads) {
  spec.validate();
  require_at_least(threads, 1, "n_jobs");
}

// P with X replaced by the safely scaled copy.
inline Problem scaled(const Problem& P, const SafeScale& s) {
  return {s.X(), P.n, P.d, P.T, P.m, P.T32};
}

inline void prob(const OracleSpec& spec, const Problem& P, double* out, int threads) {
  check_call(spec, threads);
  const SafeScale s(spec, P.X, P.n, P.d);
  with_model(spec, [&](const auto& model) { prob_rows(model, scaled(P, s), out, false, threads); });
}

inline void log_prob(const OracleSpec& spec, const Problem& P, double* out, int threads) {
  check_call(spec, threads);
  const SafeScale s(spec, P.X, P.n, P.d);
  with_model(spec, [&](const auto& model) { prob_rows(model, scaled(P, s), out, true, threads); });
}

// Sum of log p over rows [r0, r1); `bad` is set when a row has an index out of range.
template <class Model>
double sum_log_prob(const Model& model, const Problem& P, std::int64_t r0, std::int64_t r1,
                    bool& bad) {
  double s = 0.0;
  for (std::int64_t r = r0; r < r1; ++r) {
    std::int64_t t, i, j;
    const RowKind kind = classify_row(P, r, t, i, j);
    if (kind == RowKind::Live)
      s += model.log_prob(live_row<Model>(P, t, i, j));
    else if (kind == RowKind::OutOfRange)
      bad = true;
    else
      s += rule_log_prob(kind);
  }
  return s;
}

// Sum of log p over rows; partial sums over fixed 4096-row chunks, added in order.
inline double log_likelihood(const OracleSpec& spec, const Problem& P0, int threads) {
  check_call(spec, threads);
  const SafeScale safe(spec, P0.X, P0.n, P0.d);
  const Problem P = scaled(P0, safe);
  constexpr std::int64_t kChunk = 4096;
  const std::int64_t n_chunks = (P.m + kChunk - 1) / kChunk;
  std::vector<double> partial(static_cast<std::size_t>(n_chunks), 0.0);
  bool bad = false;
  with_model(spec, [&](const auto& model) {
#pragma omp parallel for schedule(static) reduction(|| : bad) num_threads(threads)
    for (std::int64_t c = 0; c < n_chunks; ++c)
      partial[static_cast<std::size_t>(c)] =
          sum_log_prob(model, P, c * kChunk, std::min(P.m, (c + 1) * kChunk), bad);
  });
  if (bad) throw_bad_triplets(P);
  double total = 0.0;
  for (double s : partial) total += s;
  return total;
}

// The k-alternative choice of a model among candidates c[0..kc) for head xt (models with a
// Luce choice form): out[a] = P(c[a] named closest). Candidates equal to the head `t` share
// probability 1. D: kc doubles of scratch.
template <class Model>
void choice_row(const Model& model, const double* X, std::int64_t d, std::int64_t t,
                const std::int64_t* c, std::int64_t kc, double* D, double* out) {
  std::int64_t hits = 0;
  for (std::int64_t a = 0; a < kc; ++a) hits += (c[a] == t);
  if (hits > 0) {
    for (std::int64_t a = 0; a < kc; ++a) out[a] = (c[a] == t) ? 1.0 / double(hits) : 0.0;
    return;
  }
  for (std::int64_t a = 0; a < kc; ++a) D[a] = sqdist(X + c[a] * d, X + t * d, d);
  model.choice(D, static_cast<int>(kc), out);
}

inline void choice_prob(const OracleSpec& spec, const double* X, std::int64_t n, std::int64_t d,
                        const std::int64_t* heads, const std::int64_t* cands, std::int64_t m,
                        std::int64_t kc, double* out, int threads) {
  check_call(spec, threads);
  require_in_range(heads, m, n, 1, "heads");
  require_in_range(cands, m * kc, n, kc, "candidates");
  const SafeScale safe(spec, X, n, d);
  X = safe.X();
  with_model(spec, [&](const auto& model) {
    using Model = std::decay_t<decltype(model)>;
    if constexpr (!Model::kChoice) {
      throw std::invalid_argument("oracle: the Probit oracle has no k-alternative choice model");
    } else {
      ParallelErrors errors;
#pragma omp parallel num_threads(threads)
      {
        std::vector<double> D;
        errors.run([&] { D.resize(static_cast<std::size_t>(kc)); });
#pragma omp for schedule(static)
        for (std::int64_t r = 0; r < m; ++r)
          if (!errors.failed())
            choice_row(model, X, d, heads[r], cands + r * kc, kc, D.data(), out + r * kc);
      }
      errors.rethrow();
    }
  });
}

}  // namespace tripletsearch
