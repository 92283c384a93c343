// Triplet oracle likelihoods: gamma-CKL, CKL, t-STE, STE and Probit.
//
// A triplet row (t, i, j) states "item i was judged closer to head t than item j".
// Di = ||x_i - x_t||^2, Dj = ||x_j - x_t||^2. Four models have the form
//     p = sigmoid(z),  z = f(Dj) - f(Di)
// with f(D) = (gamma/2) log D (gamma-CKL), log(mu + D) (CKL), D (STE) and
// ((alpha+1)/2) log(1 + D/alpha) (t-STE). Probit is p = Phi((Dj - Di) / (2 sigma ||x_i - x_j||)).
//
// Conventions (mirrored exactly by python/tripletsearch/_reference/oracles.py):
//  * index rule: t == i gives p = 1 (log p = 0); otherwise t == j gives p = 0
//    (log p = -inf). Both have zero gradient.
//  * coincident points: a squared distance below DBL_MIN enters a logarithm as DBL_MIN,
//    so every answer is finite; its derivative there is taken as 0.
//  * Probit with x_i == x_j: p = 1/2 and zero gradient.
//  * i == j (t != i): the query offers one item twice, p = 1/2 in every model.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "mathutil.hpp"
#include "parallel.hpp"

namespace tripletsearch {

enum class ModelKind : int { GammaCKL = 0, CKL = 1, TSTE = 2, STE = 3, Probit = 4 };

// One model with its single parameter (gamma, mu, alpha, unused, sigma).
struct OracleSpec {
  ModelKind kind;
  double param;
};

// ---------------------------------------------------------------- kernels
// "Difference of f" models. z(Di, Dj) = f(Dj) - f(Di); fprime = f'; log_weight = -f,
// the log of the Luce weight of a candidate at squared distance D (choice models).

struct GammaCKLKernel {
  static constexpr bool kHasIntPath = true;
  double half_gamma;
  // gamma a positive integer <= 256: the power (min(Di,Dj)/max(Di,Dj))^(gamma/2) by
  // multiplications (one sqrt for odd gamma) replaces logs and exps; -1 otherwise.
  int int_gamma;

  explicit GammaCKLKernel(double gamma)
      : half_gamma(0.5 * gamma),
        int_gamma((gamma == std::floor(gamma) && gamma >= 1.0 && gamma <= 256.0) ? int(gamma)
                                                                                 : -1) {}

  double z(double Di, double Dj) const { return half_gamma * (safe_log(Dj) - safe_log(Di)); }
  double fprime(double D) const { return D > kTinyDistance ? half_gamma / D : 0.0; }
  double log_weight(double D) const { return -half_gamma * safe_log(D); }

  // x^(gamma/2) for integer gamma.
  double int_pow(double x) const {
    double pw = (int_gamma & 1) ? std::sqrt(x) : 1.0;
    for (int e = int_gamma >> 1; e > 0; e >>= 1) {
      if (e & 1) pw *= x;
      x *= x;
    }
    return pw;
  }
};

struct CKLKernel {
  static constexpr bool kHasIntPath = false;
  double mu;
  double z(double Di, double Dj) const { return safe_log(mu + Dj) - safe_log(mu + Di); }
  double fprime(double D) const { return mu + D > kTinyDistance ? 1.0 / (mu + D) : 0.0; }
  double log_weight(double D) const { return -safe_log(mu + D); }
};

struct TSTEKernel {
  static constexpr bool kHasIntPath = false;
  double alpha, half_ap1;  // half_ap1 = (alpha + 1) / 2
  double f(double D) const { return half_ap1 * std::log1p(D / alpha); }
  double z(double Di, double Dj) const { return f(Dj) - f(Di); }
  double fprime(double D) const { return half_ap1 / (alpha + D); }
  double log_weight(double D) const { return -f(D); }
};

struct STEKernel {
  static constexpr bool kHasIntPath = false;
  double z(double Di, double Dj) const { return Dj - Di; }
  double fprime(double) const { return 1.0; }
  double log_weight(double D) const { return -D; }
};

// Per-row distance summary. N = Dj - Di and S2 = ||x_i - x_j||^2 only for Probit.
struct RowDist {
  double Di, Dj, N, S2;
};

// One row's log p and its gradient, as coefficients on di = x_i - x_t, dj = x_j - x_t and
// e = x_i - x_j:  g_i = a di + c e,  g_j = b dj - c e,  g_t = -(a di + b dj);
// dlg = d log p / d log gamma (gamma-CKL only).
struct RowEval {
  double logp, a, b, c, dlg;
};

template <class K>
struct DiffModel {
  K k;
  static constexpr bool kPairTerms = false;

  // Integer-gamma path (gamma-CKL): s = min(Di,Dj)/max(Di,Dj) <= 1 never overflows,
  // pw = s^(gamma/2) in [0, 1], and p = 1/(1+pw) when Di <= Dj, pw/(1+pw) otherwise.
  bool int_path() const {
    if constexpr (K::kHasIntPath) return k.int_gamma >= 0;
    return false;
  }
  struct Ratio {
    double ri, rj, s, pw, inv;  // 1/Di, 1/Dj (floored), base, power, 1/(1+pw)
    bool closer_i;              // Di <= Dj: p >= 1/2
  };
  Ratio ratio(const RowDist& r) const {
    Ratio q{};
    const double Di = std::max(r.Di, kTinyDistance), Dj = std::max(r.Dj, kTinyDistance);
    q.ri = 1.0 / Di;
    q.rj = 1.0 / Dj;
    q.s = std::min(Dj * q.ri, Di * q.rj);
    if constexpr (K::kHasIntPath) q.pw = k.int_pow(q.s);
    q.inv = 1.0 / (1.0 + q.pw);
    q.closer_i = Di <= Dj;
    return q;
  }

  double prob(const RowDist& r) const {
    if (int_path()) {
      const Ratio q = ratio(r);
      const double num[2] = {q.pw, 1.0};
      return num[q.closer_i] * q.inv;
    }
    return sigmoid(k.z(r.Di, r.Dj));
  }

  double log_prob(const RowDist& r) const {
    if (int_path()) {
      const Ratio q = ratio(r);
      return q.closer_i ? -std::log1p(q.pw) : half_gamma() * std::log(q.s) - std::log1p(q.pw);
    }
    return log_sigmoid(k.z(r.Di, r.Dj));
  }

  double half_gamma() const {
    if constexpr (K::kHasIntPath) return k.half_gamma;
    return 0.0;
  }

  template <bool kLoss, bool kDG>
  RowEval eval(const RowDist& r) const {
    RowEval e{0.0, 0.0, 0.0, 0.0, 0.0};
    if (!kDG && int_path()) {
      const Ratio q = ratio(r);
      // 1 - p; picked by index: the comparison is a coin flip, a branch would mispredict
      const double num[2] = {1.0, q.pw};
      const double qq = num[q.closer_i] * q.inv;
      if constexpr (kLoss) {
        // log p to absolute accuracy (what a sum of log-likelihoods needs) with one log;
        // log_prob() is the version accurate to relative precision.
        const double pp[2] = {q.pw * q.inv, q.inv};
        const double pv = pp[q.closer_i];
        e.logp = pv > 1e-300 ? std::log(pv) : half_gamma() * std::log(q.s) - std::log1p(q.pw);
      }
      const double c = 2.0 * half_gamma() * qq;
      e.a = r.Di > kTinyDistance ? -c * q.ri : 0.0;  // f'(D) = 0 below the floor
      e.b = r.Dj > kTinyDistance ? c * q.rj : 0.0;
      return e;
    }
    const double z = k.z(r.Di, r.Dj);
    const double qq = sigmoid(-z);  // d log sigmoid(z) / dz
    if constexpr (kLoss) e.logp = log_sigmoid(z);
    e.a = -2.0 * qq * k.fprime(r.Di);
    e.b = 2.0 * qq * k.fprime(r.Dj);
    if constexpr (kDG) e.dlg = qq * z;  // z is proportional to gamma
    return e;
  }
};

struct ProbitModel {
  double sigma;
  static constexpr bool kPairTerms = true;
  double zval(const RowDist& r) const { return r.N / (2.0 * sigma * std::sqrt(r.S2)); }
  double prob(const RowDist& r) const { return r.S2 > 0.0 ? normal_tail(zval(r)).cdf : 0.5; }
  double log_prob(const RowDist& r) const {
    return r.S2 > 0.0 ? normal_tail(zval(r)).log_cdf : -0.69314718055994530942;
  }
  template <bool kLoss, bool kDG>
  RowEval eval(const RowDist& r) const {
    if (!(r.S2 > 0.0)) return {-0.69314718055994530942, 0.0, 0.0, 0.0, 0.0};
    const double s = std::sqrt(r.S2);
    const double z = r.N / (2.0 * sigma * s);
    const NormalTail nt = normal_tail(z);
    const double B = nt.mills / (sigma * s);
    return {kLoss ? nt.log_cdf : 0.0, -B, B, -nt.mills * z / r.S2, 0.0};
  }
};

// Calls fn(model) with the concrete model type of spec (d resolves nothing here: the
// Python layer passes t-STE's alpha already resolved).
template <class Fn>
auto with_model(const OracleSpec& spec, Fn&& fn) {
  switch (spec.kind) {
    case ModelKind::GammaCKL:
      return fn(DiffModel<GammaCKLKernel>{GammaCKLKernel(spec.param)});
    case ModelKind::CKL:
      return fn(DiffModel<CKLKernel>{CKLKernel{spec.param}});
    case ModelKind::TSTE:
      return fn(DiffModel<TSTEKernel>{TSTEKernel{spec.param, 0.5 * (spec.param + 1.0)}});
    case ModelKind::STE:
      return fn(DiffModel<STEKernel>{STEKernel{}});
    case ModelKind::Probit:
      return fn(ProbitModel{spec.param});
  }
  throw std::invalid_argument("unknown oracle model");
}

// ---------------------------------------------------------------- row helpers

// Squared distances of one row, accumulated in two interleaved partial sums (even and odd
// coordinates): this halves the latency chain of the reduction and maps onto one SIMD
// register. The order depends on d only, so results stay deterministic.
template <bool kPair>
inline RowDist row_dist(const double* xt, const double* xi, const double* xj, std::int64_t d) {
  double Di0 = 0.0, Di1 = 0.0, Dj0 = 0.0, Dj1 = 0.0;
  double N0 = 0.0, N1 = 0.0, S0 = 0.0, S1 = 0.0;
  std::int64_t a = 0;
  for (; a + 2 <= d; a += 2) {
    const double di0 = xi[a] - xt[a], di1 = xi[a + 1] - xt[a + 1];
    const double dj0 = xj[a] - xt[a], dj1 = xj[a + 1] - xt[a + 1];
    Di0 += di0 * di0;
    Di1 += di1 * di1;
    Dj0 += dj0 * dj0;
    Dj1 += dj1 * dj1;
    if constexpr (kPair) {
      const double e0 = di0 - dj0, e1 = di1 - dj1;
      S0 += e0 * e0;
      S1 += e1 * e1;
      N0 += (dj0 - di0) * (dj0 + di0);
      N1 += (dj1 - di1) * (dj1 + di1);
    }
  }
  if (a < d) {
    const double di = xi[a] - xt[a], dj = xj[a] - xt[a];
    Di0 += di * di;
    Dj0 += dj * dj;
    if constexpr (kPair) {
      const double e = di - dj;
      S0 += e * e;
      N0 += (dj - di) * (dj + di);
    }
  }
  return {Di0 + Di1, Dj0 + Dj1, N0 + N1, S0 + S1};
}

// Index rule: +1 when t == i (certain), -1 when t == j != i (impossible), 0 otherwise.
inline int index_rule(std::int64_t t, std::int64_t i, std::int64_t j) {
  if (t == i) return 1;
  if (t == j) return -1;
  return 0;
}

// ---------------------------------------------------------------- kernels over rows
// Index ranges are checked inside the kernels' own pass over the rows (a separate scan
// would cost as much as the kernel's memory traffic): a row with an index outside [0, n)
// is skipped and flagged, and after the parallel region the kernel throws
// std::invalid_argument naming the first offending entry (nothing throws inside OpenMP).

struct Problem {
  const double* X;  // (n, d) row-major
  std::int64_t n, d;
  const std::int64_t* T;  // (m, 3) row-major
  std::int64_t m;
};

inline bool row_in_range(std::int64_t t, std::int64_t i, std::int64_t j, std::int64_t n) {
  const auto un = static_cast<std::uint64_t>(n);
  return (static_cast<std::uint64_t>(t) < un) & (static_cast<std::uint64_t>(i) < un) &
         (static_cast<std::uint64_t>(j) < un);
}

// Position of the first entry outside [0, n) in a[0..count), or -1.
inline std::int64_t first_out_of_range(const std::int64_t* a, std::int64_t count, std::int64_t n) {
  for (std::int64_t k = 0; k < count; ++k)
    if (static_cast<std::uint64_t>(a[k]) >= static_cast<std::uint64_t>(n)) return k;
  return -1;
}

[[noreturn]] inline void throw_out_of_range(const std::int64_t* a, std::int64_t count,
                                            std::int64_t n, std::int64_t cols, const char* name) {
  const std::int64_t k = first_out_of_range(a, count, n);
  const std::string where =
      cols == 1 ? std::to_string(k) : std::to_string(k / cols) + ", " + std::to_string(k % cols);
  throw std::invalid_argument(std::string(name) + ": index " + std::to_string(k >= 0 ? a[k] : -1) +
                              " at position (" + where + ") is out of range for " +
                              std::to_string(n) + " items (valid: 0.." + std::to_string(n - 1) +
                              ")");
}

inline void throw_bad_triplets(const Problem& P) {
  throw_out_of_range(P.T, 3 * P.m, P.n, 3, "triplets");
}

template <class Model>
void prob_rows(const Model& model, const Problem& P, double* out, bool log_space, int threads) {
  bool bad = false;
#pragma omp parallel for schedule(static) reduction(|| : bad) num_threads(threads)
  for (std::int64_t r = 0; r < P.m; ++r) {
    const std::int64_t t = P.T[3 * r], i = P.T[3 * r + 1], j = P.T[3 * r + 2];
    if (!row_in_range(t, i, j, P.n)) {
      bad = true;
      continue;
    }
    const int rule = index_rule(t, i, j);
    if (rule != 0) {
      const bool certain = rule > 0;
      out[r] = log_space ? (certain ? 0.0 : -std::numeric_limits<double>::infinity())
                         : (certain ? 1.0 : 0.0);
      continue;
    }
    const RowDist rd =
        row_dist<Model::kPairTerms>(P.X + t * P.d, P.X + i * P.d, P.X + j * P.d, P.d);
    out[r] = log_space ? model.log_prob(rd) : model.prob(rd);
  }
  if (bad) throw_bad_triplets(P);
}

inline void prob(const OracleSpec& spec, const Problem& P, double* out, int threads) {
  with_model(spec, [&](const auto& model) { prob_rows(model, P, out, false, threads); });
}

inline void log_prob(const OracleSpec& spec, const Problem& P, double* out, int threads) {
  with_model(spec, [&](const auto& model) { prob_rows(model, P, out, true, threads); });
}

// Sum of log p over rows; partial sums over fixed 4096-row chunks, added in order.
inline double log_likelihood(const OracleSpec& spec, const Problem& P, int threads) {
  constexpr std::int64_t kChunk = 4096;
  const std::int64_t n_chunks = (P.m + kChunk - 1) / kChunk;
  std::vector<double> partial(static_cast<std::size_t>(n_chunks), 0.0);
  bool bad = false;
  with_model(spec, [&](const auto& model) {
    using Model = std::decay_t<decltype(model)>;
#pragma omp parallel for schedule(static) reduction(|| : bad) num_threads(threads)
    for (std::int64_t c = 0; c < n_chunks; ++c) {
      const std::int64_t r1 = std::min(P.m, (c + 1) * kChunk);
      double s = 0.0;
      for (std::int64_t r = c * kChunk; r < r1; ++r) {
        const std::int64_t t = P.T[3 * r], i = P.T[3 * r + 1], j = P.T[3 * r + 2];
        if (!row_in_range(t, i, j, P.n)) {
          bad = true;
          continue;
        }
        const int rule = index_rule(t, i, j);
        if (rule > 0) continue;
        if (rule < 0) {
          s = -std::numeric_limits<double>::infinity();
          continue;
        }
        s += model.log_prob(
            row_dist<Model::kPairTerms>(P.X + t * P.d, P.X + i * P.d, P.X + j * P.d, P.d));
      }
      partial[static_cast<std::size_t>(c)] = s;
    }
  });
  if (bad) throw_bad_triplets(P);
  double total = 0.0;
  for (double s : partial) total += s;
  return total;
}

// g_i += a di + c e, g_j += b dj - c e, g_t -= a di + b dj for one row whose three items
// are distinct (restrict: the compiler may vectorize).
template <bool kPair>
inline void scatter_row(const RowEval& g, const double* __restrict xt, const double* __restrict xi,
                        const double* __restrict xj, double* __restrict gt, double* __restrict gi,
                        double* __restrict gj, std::int64_t d) {
  for (std::int64_t a = 0; a < d; ++a) {
    const double di = xi[a] - xt[a];
    const double dj = xj[a] - xt[a];
    const double vi = g.a * di;
    const double vj = g.b * dj;
    if constexpr (kPair) {
      const double ve = g.c * (di - dj);
      gi[a] += vi + ve;
      gj[a] += vj - ve;
    } else {
      gi[a] += vi;
      gj[a] += vj;
    }
    gt[a] -= vi + vj;
  }
}

// Sums over the rows of one call: sum of log p and of d log p / d log gamma.
struct LossGrad {
  double logp = 0.0, dlg = 0.0;
};

// Buffers of the gradient kernels, kept between calls (the trainer calls them once per
// step): no allocation after the first call of a given size.
struct GradWorkspace {
  std::vector<double> acc;      // row path: private gradients, or pairwise: pair weights
  std::vector<double> dist;     // pairwise path: squared distances of all item pairs
  std::vector<double> partial;  // per chunk: sum log p, sum dlg
};

template <class T>
T* sized(std::vector<T>& v, std::size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

// Row path over rows [r0, r1): adds gradients into G and returns the row sums. Rows
// naming the head (index rule) and rows with i == j (p = 1/2 whatever X) contribute zero
// gradient; the index rule's log p (0 or -inf) enters the sum. `ok` is cleared when a row
// has an index out of range (that row is skipped). Coefficients first for a block of rows
// (independent rows: the divisions overlap), then the scatter.
template <bool kLoss, bool kDG, class Model>
LossGrad rows_loss_grad(const Model& model, const Problem& P, std::int64_t r0, std::int64_t r1,
                        double* G, bool& ok) {
  constexpr std::int64_t kBlock = 64;
  const std::int64_t d = P.d;
  LossGrad sum;
  RowEval ev[kBlock];
  for (std::int64_t b0 = r0; b0 < r1; b0 += kBlock) {
    const std::int64_t nb = std::min(kBlock, r1 - b0);
    const std::int64_t* T = P.T + 3 * b0;
    for (std::int64_t k = 0; k < nb; ++k) {
      const std::int64_t t = T[3 * k], i = T[3 * k + 1], j = T[3 * k + 2];
      ev[k] = RowEval{0.0, 0.0, 0.0, 0.0, 0.0};
      if (!row_in_range(t, i, j, P.n)) {
        ok = false;
        continue;
      }
      const int rule = index_rule(t, i, j);
      if (rule != 0) {
        if (kLoss && rule < 0) ev[k].logp = -std::numeric_limits<double>::infinity();
        continue;
      }
      ev[k] = model.template eval<kLoss, kDG>(
          row_dist<Model::kPairTerms>(P.X + t * d, P.X + i * d, P.X + j * d, d));
    }
    for (std::int64_t k = 0; k < nb; ++k) {
      if constexpr (kLoss) sum.logp += ev[k].logp;
      if constexpr (kDG) sum.dlg += ev[k].dlg;
      const std::int64_t t = T[3 * k], i = T[3 * k + 1], j = T[3 * k + 2];
      if (t == i || t == j || i == j || !row_in_range(t, i, j, P.n)) continue;
      scatter_row<Model::kPairTerms>(ev[k], P.X + t * d, P.X + i * d, P.X + j * d, G + t * d,
                                     G + i * d, G + j * d, d);
    }
  }
  return sum;
}

// Number of private accumulators for the row path: a function of (m, n, d) only, so the
// summation order, and hence every bit of the result, is the same for any thread count.
inline std::int64_t grad_chunks(std::int64_t m, std::int64_t n, std::int64_t d) {
  constexpr std::int64_t kBudget = std::int64_t(1) << 23;  // doubles in all accumulators
  const std::int64_t nd = std::max<std::int64_t>(1, n * d);
  return balanced_chunks(std::min(m / std::max<std::int64_t>(1, 2 * n), kBudget / nd));
}

// Dense triplet sets (m >> n^2, e.g. 190k triplets on 100 items) take the pairwise path:
// squared distances of all item pairs once (n^2 d), then per row two table lookups and two
// additions into a pair-weight matrix W, then G = L X with the Laplacian of W + W^T (n^2 d).
// Difference-form models only (Probit's third pair term stays on the row path).
inline bool use_pairwise(std::int64_t m, std::int64_t n) { return n * n <= m / 4 && n <= 4096; }

// Private pair-weight matrices for the pairwise path: a function of (m, n) only.
inline std::int64_t pair_chunks(std::int64_t m, std::int64_t n) {
  const std::int64_t nn = std::max<std::int64_t>(1, n * n);
  return balanced_chunks(std::min(m / nn, (std::int64_t(1) << 24) / nn));
}

template <bool kLoss, bool kDG, class Model>
LossGrad pairwise_loss_grad(const Model& model, const Problem& P, double* G, GradWorkspace& ws,
                            int threads) {
  const std::int64_t n = P.n, d = P.d, nn = n * n;
  const std::int64_t C = pair_chunks(P.m, n);
  double* D = sized(ws.dist, static_cast<std::size_t>(nn));
  double* W = sized(ws.acc, static_cast<std::size_t>(C * nn));
  double* part = sized(ws.partial, static_cast<std::size_t>(2 * C));
  bool bad = false;
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static)
    for (std::int64_t t = 0; t < n; ++t) {
      const double* xt = P.X + t * d;
      for (std::int64_t k = 0; k < n; ++k) {
        const double* xk = P.X + k * d;
        double s = 0.0;
        for (std::int64_t a = 0; a < d; ++a) {
          const double diff = xk[a] - xt[a];
          s += diff * diff;
        }
        D[t * n + k] = s;
      }
    }
#pragma omp for schedule(static) reduction(|| : bad)
    for (std::int64_t c = 0; c < C; ++c) {
      double* Wc = W + c * nn;
      std::fill(Wc, Wc + nn, 0.0);
      double lp = 0.0, dg = 0.0;
      const std::int64_t r1 = chunk_begin(P.m, C, c + 1);
      for (std::int64_t r = chunk_begin(P.m, C, c); r < r1; ++r) {
        const std::int64_t t = P.T[3 * r], i = P.T[3 * r + 1], j = P.T[3 * r + 2];
        if (!row_in_range(t, i, j, P.n)) {
          bad = true;
          continue;
        }
        const int rule = index_rule(t, i, j);
        if (rule != 0) {
          if (kLoss && rule < 0) lp = -std::numeric_limits<double>::infinity();
          continue;
        }
        if (i == j) {  // p = 1/2, no gradient
          if constexpr (kLoss) lp += -0.69314718055994530942;
          continue;
        }
        const RowEval e =
            model.template eval<kLoss, kDG>(RowDist{D[t * n + i], D[t * n + j], 0.0, 0.0});
        if constexpr (kLoss) lp += e.logp;
        if constexpr (kDG) dg += e.dlg;
        Wc[t * n + i] += e.a;
        Wc[t * n + j] += e.b;
      }
      part[2 * c] = lp;
      part[2 * c + 1] = dg;
    }
#pragma omp for schedule(static)
    for (std::int64_t k = 0; k < nn; ++k) {
      double s = W[k];
      for (std::int64_t c = 1; c < C; ++c) s += W[c * nn + k];
      W[k] = s;
    }
    // g_k = sum_t (W[t,k] + W[k,t]) (x_k - x_t): row t's item k moved with weight W[t,k].
#pragma omp for schedule(static)
    for (std::int64_t k = 0; k < n; ++k) {
      double* gk = G + k * d;
      const double* xk = P.X + k * d;
      std::fill(gk, gk + d, 0.0);
      for (std::int64_t t = 0; t < n; ++t) {
        const double w = W[t * n + k] + W[k * n + t];
        if (w == 0.0) continue;
        const double* xt = P.X + t * d;
        for (std::int64_t a = 0; a < d; ++a) gk[a] += w * (xk[a] - xt[a]);
      }
    }
  }
  if (bad) throw_bad_triplets(P);
  LossGrad sum;
  for (std::int64_t c = 0; c < C; ++c) {
    sum.logp += part[2 * c];
    sum.dlg += part[2 * c + 1];
  }
  return sum;
}

// G (n, d) = gradient of sum_r log p_r with respect to X; returns the sums of log p (when
// kLoss) and of d log p / d log gamma (when kDG). Bitwise identical for any thread count.
template <bool kLoss, bool kDG, class Model>
LossGrad loss_grad(const Model& model, const Problem& P, double* G, GradWorkspace& ws,
                   int threads) {
  if constexpr (!Model::kPairTerms) {
    if (use_pairwise(P.m, P.n)) return pairwise_loss_grad<kLoss, kDG>(model, P, G, ws, threads);
  }
  const std::int64_t nd = P.n * P.d;
  const std::int64_t C = grad_chunks(P.m, P.n, P.d);
  bool ok = true;
  if (C == 1) {
    std::fill(G, G + nd, 0.0);
    const LossGrad sum = rows_loss_grad<kLoss, kDG>(model, P, 0, P.m, G, ok);
    if (!ok) throw_bad_triplets(P);
    return sum;
  }
  double* acc = sized(ws.acc, static_cast<std::size_t>(C * nd));
  double* part = sized(ws.partial, static_cast<std::size_t>(2 * C));
  bool bad = false;
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static) reduction(|| : bad)
    for (std::int64_t c = 0; c < C; ++c) {
      double* Gc = acc + c * nd;
      std::fill(Gc, Gc + nd, 0.0);
      bool chunk_ok = true;
      const LossGrad s = rows_loss_grad<kLoss, kDG>(model, P, chunk_begin(P.m, C, c),
                                                    chunk_begin(P.m, C, c + 1), Gc, chunk_ok);
      part[2 * c] = s.logp;
      part[2 * c + 1] = s.dlg;
      bad = bad || !chunk_ok;
    }
#pragma omp for schedule(static)
    for (std::int64_t k = 0; k < nd; ++k) {
      double s = 0.0;
      for (std::int64_t c = 0; c < C; ++c) s += acc[c * nd + k];
      G[k] = s;
    }
  }
  if (bad) throw_bad_triplets(P);
  LossGrad sum;
  for (std::int64_t c = 0; c < C; ++c) {
    sum.logp += part[2 * c];
    sum.dlg += part[2 * c + 1];
  }
  return sum;
}

inline void grad(const OracleSpec& spec, const Problem& P, double* G, int threads) {
  GradWorkspace ws;
  with_model(spec, [&](const auto& model) { loss_grad<false, false>(model, P, G, ws, threads); });
}

// k-alternative choice: P(c | t) proportional to exp(log_weight(D_c)), e.g. D_c^(-gamma/2).
// Candidates equal to the head share probability 1. Diff-form models only.
template <class K>
void choice_prob_kernel(const K& k, const double* X, std::int64_t d, const std::int64_t* heads,
                        const std::int64_t* cands, std::int64_t m, std::int64_t kc, double* out,
                        int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t r = 0; r < m; ++r) {
    const std::int64_t t = heads[r];
    const std::int64_t* c = cands + r * kc;
    double* o = out + r * kc;
    std::int64_t hits = 0;
    for (std::int64_t a = 0; a < kc; ++a) hits += (c[a] == t);
    if (hits > 0) {
      for (std::int64_t a = 0; a < kc; ++a) o[a] = (c[a] == t) ? 1.0 / double(hits) : 0.0;
      continue;
    }
    const double* xt = X + t * d;
    double wmax = -std::numeric_limits<double>::infinity();
    for (std::int64_t a = 0; a < kc; ++a) {
      const double* xc = X + c[a] * d;
      double D = 0.0;
      for (std::int64_t b = 0; b < d; ++b) {
        const double diff = xc[b] - xt[b];
        D += diff * diff;
      }
      o[a] = k.log_weight(D);
      wmax = std::max(wmax, o[a]);
    }
    double total = 0.0;
    for (std::int64_t a = 0; a < kc; ++a) {
      o[a] = std::exp(o[a] - wmax);
      total += o[a];
    }
    for (std::int64_t a = 0; a < kc; ++a) o[a] /= total;
  }
}

inline void choice_prob(const OracleSpec& spec, const double* X, std::int64_t n, std::int64_t d,
                        const std::int64_t* heads, const std::int64_t* cands, std::int64_t m,
                        std::int64_t kc, double* out, int threads) {
  if (first_out_of_range(heads, m, n) >= 0) throw_out_of_range(heads, m, n, 1, "heads");
  if (first_out_of_range(cands, m * kc, n) >= 0)
    throw_out_of_range(cands, m * kc, n, kc, "candidates");
  with_model(spec, [&](const auto& model) {
    using Model = std::decay_t<decltype(model)>;
    if constexpr (Model::kPairTerms) {
      throw std::invalid_argument("the Probit oracle has no k-alternative choice model");
    } else {
      choice_prob_kernel(model.k, X, d, heads, cands, m, kc, out, threads);
    }
  });
}

}  // namespace tripletsearch
