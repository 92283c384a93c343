// Continuous search (Section 3): find a target point in a hypercube Omega from gamma-CKL
// answers to queries (a, b), "is the target closer to a or to b?".
//
// Methods
//   HypothesisTest: Algorithm 1 with Algorithm 2's decider: per stage, the binomial test
//     of every cell of the tiling T(S, r_c); proceed to the child holding the bounding box
//     of the non-rejected cells; backtrack when it misses X, when no child holds it or
//     when no cell survives.
//   Posterior: Section 3.3: per stage, a posterior over the parent domain u(X) (particles:
//     a grid for d <= 3, uniform draws for d >= 4, resample-move when the effective
//     sample size halves), discarded at each new stage. After every answer, the heaviest
//     half-edge box on the quarter lattice decides once its mass exceeds alpha: a child
//     of X means proceed, any other box means backtrack; the per-stage query cap
//     backtracks too.
//   Global: one posterior over Omega kept across all queries (particles with
//     resample-move), no stages.
// Queries (Posterior, Global): the candidate pair with the largest expected information
// (the variance of the answer probability over posterior draws, i.e. the quadratic-
// entropy information gain) among pairs of posterior draws and their mirror images.
// Every answer model has a lapse rate: p -> lapse/2 + (1 - lapse) p.
// python/tripletsearch/_reference/continuous.py is the NumPy twin.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "hyptest.hpp"
#include "mathutil.hpp"
#include "parallel.hpp"
#include "region.hpp"
#include "rng.hpp"

namespace tripletsearch {

enum class ContinuousMethod : int { HypothesisTest = 0, Posterior = 1, Global = 2 };

struct ContinuousConfig {
  std::int64_t d = 2;
  double gamma = 3.0;
  double low = -1.0, high = 1.0;
  ContinuousMethod method = ContinuousMethod::Posterior;
  double alpha = 0.7;           // posterior decider threshold
  double lapse = 0.0;           // lapse rate assumed by the likelihood
  std::int64_t stage_cap = 40;  // posterior decider: queries per stage
  std::int64_t particles = 2048;
  int mh_sweeps = 2;          // Metropolis-Hastings sweeps per resample-move
  int threads = 1;            // for the particle passes of one searcher
  double resample_ess = 0.5;  // resample-move when ESS < this fraction of the particles
  // hypothesis test plan
  std::int64_t cells_per_axis = 0, n_obs = 0, tau = 0;
};

// P(the user names a | target z) for squared distances Da, Db: gamma-CKL with a lapse.
struct AnswerModel {
  double half_gamma, lapse;
  int int_gamma;
  AnswerModel(double gamma, double lapse_)
      : half_gamma(0.5 * gamma),
        lapse(lapse_),
        int_gamma((gamma == std::floor(gamma) && gamma >= 1.0 && gamma <= 256.0) ? int(gamma)
                                                                                 : -1) {}

  double pow_half_gamma(double s) const {  // s^(gamma/2), s in [0, 1]
    if (int_gamma > 0) {
      double pw = (int_gamma & 1) ? std::sqrt(s) : 1.0;
      for (int e = int_gamma >> 1; e > 0; e >>= 1) {
        if (e & 1) pw *= s;
        s *= s;
      }
      return pw;
    }
    return std::exp(half_gamma * std::log(s));
  }
  // probability that a is named (before the lapse)
  double raw(double Da, double Db) const {
    Da = std::max(Da, kTinyDistance);
    Db = std::max(Db, kTinyDistance);
    const double s = std::min(Da, Db) / std::max(Da, Db);
    const double pw = pow_half_gamma(s);
    return (Da <= Db ? 1.0 : pw) / (1.0 + pw);
  }
  double prob(double Da, double Db) const { return 0.5 * lapse + (1.0 - lapse) * raw(Da, Db); }
  // P(answer) in linear space (the answer being "a" when a_closer)
  double prob_of(double Da, double Db, bool a_closer) const {
    const double p = prob(Da, Db);
    return a_closer ? p : 1.0 - p;
  }

  // log P(answer), the answer being "a" when a_closer
  double log_prob(double Da, double Db, bool a_closer) const {
    if (lapse > 0.0) {
      const double p = prob(Da, Db);
      return std::log(a_closer ? p : 1.0 - p);
    }
    Da = std::max(Da, kTinyDistance);
    Db = std::max(Db, kTinyDistance);
    const double Dw = a_closer ? Da : Db, Dl = a_closer ? Db : Da;  // named, other
    const double s = std::min(Dw, Dl) / std::max(Dw, Dl);
    const double pw = pow_half_gamma(s);
    return Dw <= Dl ? -std::log1p(pw) : half_gamma * std::log(s) - std::log1p(pw);
  }
};

inline double sqdist(const double* x, const double* y, std::int64_t d) {
  double s = 0.0;
  for (std::int64_t a = 0; a < d; ++a) s += (x[a] - y[a]) * (x[a] - y[a]);
  return s;
}

// ---------------------------------------------------------------- particle posterior

class Particles {
 public:
  std::int64_t d = 0, P = 0;
  std::vector<double> z, lw, ll;  // positions (P x d), log-weights, cumulative log-lik
  std::vector<double> lo, hi;     // the prior's box

  // Uniform prior on the box [lo, hi]: a grid of floor(P^(1/d))^d cell centers for d <= 3,
  // else P uniform draws from rng.
  void init(const std::vector<double>& lo_, const std::vector<double>& hi_, std::int64_t target_P,
            Rng& rng) {
    lo = lo_;
    hi = hi_;
    d = static_cast<std::int64_t>(lo.size());
    if (d <= 3) {
      const std::int64_t G = std::max<std::int64_t>(
          1, static_cast<std::int64_t>(std::floor(std::pow(double(target_P), 1.0 / d) + 1e-9)));
      P = 1;
      for (std::int64_t a = 0; a < d; ++a) P *= G;
      z.assign(static_cast<std::size_t>(P * d), 0.0);
      for (std::int64_t p = 0; p < P; ++p) {
        std::int64_t r = p;
        for (std::int64_t a = 0; a < d; ++a) {
          const std::int64_t i = r % G;
          r /= G;
          z[p * d + a] = lo[a] + (double(i) + 0.5) * (hi[a] - lo[a]) / double(G);
        }
      }
    } else {
      P = target_P;
      z.assign(static_cast<std::size_t>(P * d), 0.0);
      for (std::int64_t p = 0; p < P; ++p)
        for (std::int64_t a = 0; a < d; ++a) z[p * d + a] = lo[a] + rng.uniform() * (hi[a] - lo[a]);
    }
    lw.assign(static_cast<std::size_t>(P), 0.0);
    ll.assign(static_cast<std::size_t>(P), 0.0);
  }

  void observe(const double* a, const double* b, bool a_closer, const AnswerModel& m, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads) if (P >= 8192)
    for (std::int64_t p = 0; p < P; ++p) {
      const double* x = z.data() + p * d;
      const double l = m.log_prob(sqdist(a, x, d), sqdist(b, x, d), a_closer);
      lw[p] += l;
      ll[p] += l;
    }
  }

  // normalized weights into w; returns the effective sample size
  double weights(std::vector<double>& w) const {
    double mx = -std::numeric_limits<double>::infinity();
    for (double v : lw) mx = std::max(mx, v);
    w.resize(static_cast<std::size_t>(P));
    double s = 0.0;
    for (std::int64_t p = 0; p < P; ++p)
      s += (w[p] = std::isfinite(lw[p]) ? std::exp(lw[p] - mx) : 0.0);
    double s2 = 0.0;
    for (std::int64_t p = 0; p < P; ++p) {
      w[p] = s > 0.0 ? w[p] / s : 1.0 / double(P);
      s2 += w[p] * w[p];
    }
    return 1.0 / s2;
  }

  // (coordinate a, index) of every particle (unordered; quantiles select in this order).
  void axis_pairs(std::int64_t a, std::vector<std::pair<double, std::int64_t>>& v) const {
    v.resize(static_cast<std::size_t>(P));
    for (std::int64_t p = 0; p < P; ++p) v[p] = {z[p * d + a], p};
  }

  // Weighted quantiles qs[0..nq) of one axis: the smallest coordinate (in (value, index)
  // order) whose cumulative weight reaches q. Weighted quickselect: expected O(P) each.
  static void quantiles(std::vector<std::pair<double, std::int64_t>>& v,
                        const std::vector<double>& w, const double* qs, int nq, double* out) {
    for (int j = 0; j < nq; ++j) out[j] = weighted_select(v, w, qs[j]);
  }

  // A cumulative weight within 1e-9 of q counts as reaching it: with equal weights the
  // boundary is hit exactly, and summation order must not decide.
  static double weighted_select(std::vector<std::pair<double, std::int64_t>>& v,
                                const std::vector<double>& w, double q) {
    q -= 1e-9;
    std::size_t lo = 0, hi = v.size();
    double below = 0.0;  // weight before position lo in sorted order
    while (hi - lo > 32) {
      const std::size_t mid = lo + (hi - lo) / 2;
      auto a = v[lo], b = v[mid], c = v[hi - 1];  // median of three
      const auto pivot = std::max(std::min(a, b), std::min(std::max(a, b), c));
      const auto split =
          std::partition(v.begin() + lo, v.begin() + hi,
                         [&](const std::pair<double, std::int64_t>& x) { return x < pivot; });
      const std::size_t s = static_cast<std::size_t>(split - v.begin());
      double wl = 0.0;
      for (std::size_t k = lo; k < s; ++k) wl += w[v[k].second];
      if (below + wl >= q) {
        hi = s;
        continue;
      }
      const double wp = w[pivot.second];
      if (below + wl + wp >= q) return pivot.first;
      // move the pivot to position s, continue right of it
      const auto pv = std::find(v.begin() + s, v.begin() + hi, pivot);
      std::iter_swap(v.begin() + s, pv);
      below += wl + wp;
      lo = s + 1;
    }
    std::sort(v.begin() + lo, v.begin() + hi);
    double cum = below;
    for (std::size_t k = lo; k < hi; ++k) {
      cum += w[v[k].second];
      if (cum >= q) return v[k].first;
    }
    return hi > lo ? v[hi - 1].first : v.back().first;
  }

  // Coordinate-wise weighted median (the point estimate: robust to the slowly decaying
  // tails of the gamma-CKL posterior, which drag the mean) and the largest interquartile
  // range over the axes.
  double median(const std::vector<double>& w, double* out) const {
    std::vector<std::pair<double, std::int64_t>> v;
    static const double qs[3] = {0.25, 0.5, 0.75};
    double q[3], spread = 0.0;
    for (std::int64_t a = 0; a < d; ++a) {
      axis_pairs(a, v);
      quantiles(v, w, qs, 3, q);
      out[a] = q[1];
      spread = std::max(spread, q[2] - q[0]);
    }
    return spread;
  }

  void mean(const std::vector<double>& w, double* out) const {
    for (std::int64_t a = 0; a < d; ++a) out[a] = 0.0;
    for (std::int64_t p = 0; p < P; ++p)
      for (std::int64_t a = 0; a < d; ++a) out[a] += w[p] * z[p * d + a];
  }

  // Systematic resampling: n indices drawn with probabilities w, sorted by particle.
  static std::vector<std::int64_t> systematic(const std::vector<double>& w, std::int64_t n,
                                              double u0) {
    std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
    const double step = 1.0 / double(n);
    double cum = 0.0, next = u0 * step;
    std::int64_t p = 0, last = 0;
    const std::int64_t P = static_cast<std::int64_t>(w.size());
    for (std::int64_t k = 0; k < n; ++k) {
      while (p < P && cum + w[p] <= next) {
        cum += w[p];
        if (w[p] > 0.0) last = p;
        ++p;
      }
      idx[k] = p < P ? p : last;
      next += step;
    }
    return idx;
  }

  // Resample, then `sweeps` Metropolis-Hastings moves targeting prior x all answers
  // (answers: n x (2d + 1): a, b, a_closer). Proposal: Gaussian with the weighted
  // covariance of the cloud, scaled by 2.38/sqrt(d)/2.
  // Shrinks the prior box to the central 1 - 2 eps of the weighted particles per axis,
  // widened by half its width on each side (the global method's zooming: tails below eps
  // are dropped, the price of exponential convergence without stages).
  void focus(double eps) {
    std::vector<double> w;
    weights(w);
    std::vector<std::pair<double, std::int64_t>> v;
    const double qs[2] = {eps, 1.0 - eps};
    double q[2];
    for (std::int64_t a = 0; a < d; ++a) {
      axis_pairs(a, v);
      quantiles(v, w, qs, 2, q);
      const double margin = 0.5 * (q[1] - q[0]);
      lo[a] = std::max(lo[a], q[0] - margin);
      hi[a] = std::min(hi[a], q[1] + margin);
    }
    for (std::int64_t p = 0; p < P; ++p)
      for (std::int64_t a = 0; a < d; ++a)
        if (z[p * d + a] < lo[a] || z[p * d + a] > hi[a])
          lw[p] = -std::numeric_limits<double>::infinity();
  }

  // Weighted quantile of coordinate a (the smallest value whose cumulative weight >= q).

  // Resample, then `sweeps` Metropolis-Hastings moves targeting prior x all answers
  // (answers: n x (2d + 1): a, b, a_closer). Proposal: independent Gaussian steps per
  // axis, scaled by the axis' interquartile range (robust to heavy posterior tails).
  // Random streams: stream P gives the resampling offset, stream p particle p's moves,
  // so the result does not depend on the number of threads.
  void resample_move(const std::vector<double>& answers, std::int64_t n_answers,
                     const AnswerModel& m, std::uint64_t stream_seed, int sweeps, int threads) {
    std::vector<double> w;
    weights(w);
    std::vector<std::pair<double, std::int64_t>> v;
    std::vector<double> step(static_cast<std::size_t>(d));
    const double qs[2] = {0.25, 0.75};
    double q[2];
    for (std::int64_t a = 0; a < d; ++a) {
      axis_pairs(a, v);
      quantiles(v, w, qs, 2, q);
      step[a] = std::max(0.5 * (q[1] - q[0]) / 1.349, 1e-15 * (hi[a] - lo[a]));
    }
    Rng offset(stream_seed, static_cast<std::uint64_t>(P));
    const std::vector<std::int64_t> idx = systematic(w, P, offset.uniform());
    std::vector<double> nz(static_cast<std::size_t>(P * d)), nll(static_cast<std::size_t>(P));
    for (std::int64_t k = 0; k < P; ++k) {
      for (std::int64_t a = 0; a < d; ++a) nz[k * d + a] = z[idx[k] * d + a];
      nll[k] = ll[idx[k]];
    }
    z.swap(nz);
    ll.swap(nll);
    std::fill(lw.begin(), lw.end(), 0.0);
    const std::int64_t stride = 2 * d + 1;
#pragma omp parallel for schedule(static) num_threads(threads) if (P * n_answers > 20000)
    for (std::int64_t p = 0; p < P; ++p) {
      Rng rng(stream_seed, static_cast<std::uint64_t>(p));
      std::vector<double> prop(static_cast<std::size_t>(d));
      for (int s = 0; s < sweeps; ++s) {
        bool inside = true;
        for (std::int64_t a = 0; a < d; ++a) {
          prop[a] = z[p * d + a] + step[a] * rng.normal();
          inside = inside && prop[a] >= lo[a] && prop[a] <= hi[a];
        }
        const double u = rng.uniform();
        if (!inside) continue;
        // log-likelihood of all answers as a running product, logged only when it gets
        // small (one log per ~dozens of answers instead of one per answer)
        double lp = 0.0, prod = 1.0;
        for (std::int64_t q = 0; q < n_answers; ++q) {
          const double* A = answers.data() + q * stride;
          prod *=
              m.prob_of(sqdist(A, prop.data(), d), sqdist(A + d, prop.data(), d), A[2 * d] > 0.5);
          if (prod < 1e-250) {
            lp += std::log(prod);
            prod = 1.0;
          }
        }
        lp += std::log(prod);
        if (u < std::exp(lp - ll[p])) {  // also accepts from a -inf state
          for (std::int64_t a = 0; a < d; ++a) z[p * d + a] = prop[a];
          ll[p] = lp;
        }
      }
    }
  }
};

// ---------------------------------------------------------------- the searcher

class ContinuousSearcher {
 public:
  ContinuousSearcher(const ContinuousConfig& cfg, std::uint64_t seed)
      : cfg_(cfg), d_(cfg.d), seed_(seed), model_(cfg.gamma, cfg.lapse) {
    region_.center.assign(static_cast<std::size_t>(d_), 0.5 * (cfg.low + cfg.high));
    region_.edge = cfg.high - cfg.low;
    region_.depth = 0;
    if (cfg_.method == ContinuousMethod::HypothesisTest) {
      if (cfg_.cells_per_axis < 1 || cfg_.n_obs < 1)
        throw std::invalid_argument("hypothesis test: cells_per_axis and n_obs must be >= 1");
      n_cells_ = 1;
      for (std::int64_t a = 0; a < d_; ++a) n_cells_ *= cfg_.cells_per_axis;
      begin_hyptest_stage();
    } else {
      begin_particle_stage();
    }
  }

  const Region& region() const { return region_; }
  std::int64_t n_queries() const { return n_queries_; }
  std::int64_t n_stages() const { return n_stages_; }
  std::int64_t stage_queries() const { return stage_queries_; }
  std::int64_t n_cells() const { return n_cells_; }

  // Point estimate: the region's center (hypothesis test) or the posterior median
  // (Posterior: the median of the more concentrated of this stage's posterior and the
  // last stage's final one, which proceeded here; the decisions never see it).
  void estimate(double* out) const {
    if (cfg_.method == ContinuousMethod::HypothesisTest) {
      std::copy(region_.center.begin(), region_.center.end(), out);
      return;
    }
    std::vector<double> w;
    particles_.weights(w);
    const double spread = particles_.median(w, out);
    if (cfg_.method == ContinuousMethod::Posterior && !anchor_.empty() && anchor_spread_ < spread)
      std::copy(anchor_.begin(), anchor_.end(), out);
  }

  // The pending query (computed once, then repeated until told).
  void ask(double* a, double* b) {
    if (!pending_) {
      if (cfg_.method == ContinuousMethod::HypothesisTest)
        cell_query(cell_, qa_.data(), qb_.data());
      else
        select_query();
      pending_ = true;
    }
    std::copy(qa_.begin(), qa_.end(), a);
    std::copy(qb_.begin(), qb_.end(), b);
  }

  // Records the answer to the pending query; returns true when a stage ended.
  bool tell(bool a_closer) {
    if (!pending_) throw std::logic_error("tell before ask");
    pending_ = false;
    ++n_queries_;
    ++stage_queries_;
    if (cfg_.method == ContinuousMethod::HypothesisTest) {
      wins_ += a_closer ? 1 : 0;
      if (++rep_ == cfg_.n_obs) {
        finish_cell(wins_ >= cfg_.tau);
        if (++cell_ == n_cells_) {
          decide_hyptest();
          return true;
        }
      }
      return false;
    }
    for (std::int64_t a = 0; a < d_; ++a) answers_.push_back(qa_[a]);
    for (std::int64_t a = 0; a < d_; ++a) answers_.push_back(qb_[a]);
    answers_.push_back(a_closer ? 1.0 : 0.0);
    ++n_answers_;
    particles_.observe(qa_.data(), qb_.data(), a_closer, model_, cfg_.threads);
    std::vector<double> w;
    const double ess = particles_.weights(w);
    if (cfg_.method == ContinuousMethod::Posterior) {
      if (decide_posterior(w)) return true;
      if (stage_queries_ >= cfg_.stage_cap) {
        backtrack();
        return true;
      }
    }
    if (ess < cfg_.resample_ess * double(particles_.P)) {
      std::uint64_t mix = seed_ ^ 0x632BE59BD9B4E019ULL;
      const std::uint64_t stream_seed = splitmix64(mix) + static_cast<std::uint64_t>(n_queries_);
      if (cfg_.method == ContinuousMethod::Global) particles_.focus(kFocusTail);
      particles_.resample_move(answers_, n_answers_, model_, stream_seed, cfg_.mh_sweeps,
                               cfg_.threads);
    }
    if (cfg_.method == ContinuousMethod::Global) {
      // the region: the cube around the posterior median whose edge L 2^-depth is the
      // smallest such edge >= 4 x the largest interquartile range
      particles_.weights(w);
      const double spread = particles_.median(w, region_.center.data());
      const double L = cfg_.high - cfg_.low;
      std::int64_t depth = 0;
      while (depth < 1000 && L * std::ldexp(1.0, -(depth + 1)) >= 4.0 * spread) ++depth;
      region_.depth = depth;
      region_.edge = L * std::ldexp(1.0, -depth);
      ++n_stages_;
    }
    return cfg_.method == ContinuousMethod::Global;
  }

  // Simulation shortcut for the hypothesis test: the rest of the current stage against a
  // known target, each cell's test outcome drawn from the exact law of its count
  // (Binomial(n_obs, p)); the queries are counted as asked (n_obs per cell).
  void simulate_hyptest_stage(const double* target, const AnswerModel& user, int threads) {
    const std::int64_t start = cell_;
    const std::int64_t K = n_cells_, d = d_;
    std::vector<std::int64_t> lo(static_cast<std::size_t>(d),
                                 std::numeric_limits<std::int64_t>::max()),
        hi(static_cast<std::size_t>(d), -1);
    const std::uint64_t stream_seed =
        seed_ ^ (0xA24BAED4963EE407ULL * static_cast<std::uint64_t>(n_stages_ + 1));
    const std::int64_t C = balanced_chunks(std::max<std::int64_t>(1, (K - start) / 4096));
    std::vector<std::int64_t> clo(static_cast<std::size_t>(C * d),
                                  std::numeric_limits<std::int64_t>::max()),
        chi(static_cast<std::size_t>(C * d), -1);
    std::vector<std::uint8_t> cany(static_cast<std::size_t>(C), 0);
#pragma omp parallel num_threads(threads)
    {
      std::vector<double> a(static_cast<std::size_t>(d)), b(a.size());
      std::vector<std::int64_t> idx(static_cast<std::size_t>(d));
#pragma omp for schedule(static)
      for (std::int64_t c = 0; c < C; ++c) {
        const std::int64_t k1 = start + chunk_begin(K - start, C, c + 1);
        for (std::int64_t k = start + chunk_begin(K - start, C, c); k < k1; ++k) {
          cell_query(k, a.data(), b.data());
          const double p = user.prob(sqdist(a.data(), target, d), sqdist(b.data(), target, d));
          Rng rng(stream_seed, static_cast<std::uint64_t>(k));
          if (!(rng.uniform() < binomial_upper_tail(cfg_.n_obs, p, cfg_.tau))) continue;
          cell_index(k, idx.data());
          cany[c] = 1;
          for (std::int64_t t = 0; t < d; ++t) {
            clo[c * d + t] = std::min(clo[c * d + t], idx[t]);
            chi[c * d + t] = std::max(chi[c * d + t], idx[t]);
          }
        }
      }
    }
    for (std::int64_t c = 0; c < C; ++c) {
      if (!cany[c]) continue;
      any_ = true;
      for (std::int64_t t = 0; t < d; ++t) {
        box_lo_[t] = std::min(box_lo_[t], clo[c * d + t]);
        box_hi_[t] = std::max(box_hi_[t], chi[c * d + t]);
      }
    }
    const std::int64_t asked = (K - start) * cfg_.n_obs - rep_;
    n_queries_ += asked;
    stage_queries_ += asked;
    cell_ = K;
    decide_hyptest();
  }

 private:
  // ------------------------------------------------------------ hypothesis test
  void begin_hyptest_stage() {
    cell_ = 0;
    rep_ = 0;
    wins_ = 0;
    any_ = false;
    box_lo_.assign(static_cast<std::size_t>(d_), std::numeric_limits<std::int64_t>::max());
    box_hi_.assign(static_cast<std::size_t>(d_), -1);
    stage_queries_ = 0;
    qa_.assign(static_cast<std::size_t>(d_), 0.0);
    qb_.assign(static_cast<std::size_t>(d_), 0.0);
  }

  void cell_index(std::int64_t k, std::int64_t* idx) const {
    for (std::int64_t a = 0; a < d_; ++a) {
      idx[a] = k % cfg_.cells_per_axis;
      k /= cfg_.cells_per_axis;
    }
  }

  // Cell k's query: its center x_c and x_c + (r_c/2)(1 + d) e_1, r_c the cell edge.
  void cell_query(std::int64_t k, double* a, double* b) const {
    const double rc = 1.5 * region_.edge / double(cfg_.cells_per_axis);
    for (std::int64_t t = 0; t < d_; ++t) {
      const std::int64_t i = k % cfg_.cells_per_axis;
      k /= cfg_.cells_per_axis;
      a[t] = region_.center[t] - 0.75 * region_.edge + (double(i) + 0.5) * rc;
      b[t] = a[t];
    }
    b[0] += 0.5 * rc * (1.0 + double(d_));
  }

  void finish_cell(bool accepted) {
    if (accepted) {
      std::vector<std::int64_t> idx(static_cast<std::size_t>(d_));
      cell_index(cell_, idx.data());
      any_ = true;
      for (std::int64_t t = 0; t < d_; ++t) {
        box_lo_[t] = std::min(box_lo_[t], idx[t]);
        box_hi_[t] = std::max(box_hi_[t], idx[t]);
      }
    }
    rep_ = 0;
    wins_ = 0;
  }

  // Proceed to the child holding the bounding box of the accepted cells; otherwise
  // (box misses X, no child holds it, no cell accepted) backtrack.
  void decide_hyptest() {
    bool proceed = any_;
    std::vector<int> m(static_cast<std::size_t>(d_), 2);
    const double rc = 1.5 / double(cfg_.cells_per_axis);  // relative to the edge
    const double tol = 1e-9;
    for (std::int64_t t = 0; t < d_ && proceed; ++t) {
      const double L = -0.75 + double(box_lo_[t]) * rc, H = -0.75 + double(box_hi_[t] + 1) * rc;
      if (!(L < 0.5 && H > -0.5)) {
        proceed = false;  // misses X
        break;
      }
      // child m spans [m/4 - 3/4, m/4 - 1/4]: need m >= 4H + 1 and m <= 4L + 3
      const int mlo = static_cast<int>(std::ceil(4.0 * H + 1.0 - tol));
      const int mhi = static_cast<int>(std::floor(4.0 * L + 3.0 + tol));
      const int a = std::max(mlo, 0), b = std::min(mhi, 4);
      if (a > b) {
        proceed = false;
        break;
      }
      const double want = 2.0 * (L + H) + 2.0;  // the m centering the box
      int best = a;
      for (int c = a; c <= b; ++c)
        if (std::fabs(c - want) < std::fabs(best - want)) best = c;
      m[static_cast<std::size_t>(t)] = best;
    }
    if (proceed)
      region_ = region_.child(m.data());
    else
      region_ = region_.parent();
    ++n_stages_;
    begin_hyptest_stage();
  }

  // ------------------------------------------------------------ particle methods
  void begin_particle_stage() {
    std::vector<double> lo(static_cast<std::size_t>(d_)), hi(lo.size());
    for (std::int64_t a = 0; a < d_; ++a) {
      if (cfg_.method == ContinuousMethod::Global) {
        lo[a] = cfg_.low;
        hi[a] = cfg_.high;
      } else {  // the parent domain u(X) (edge 4e) within Omega, where the target lies
        lo[a] = std::max(cfg_.low, region_.center[a] - 2.0 * region_.edge);
        hi[a] = std::min(cfg_.high, region_.center[a] + 2.0 * region_.edge);
        if (!(lo[a] < hi[a])) {  // X has left Omega entirely: keep u(X)
          lo[a] = region_.center[a] - 2.0 * region_.edge;
          hi[a] = region_.center[a] + 2.0 * region_.edge;
        }
      }
    }
    Rng rng(seed_ ^ 0xD2B74407B1CE6E93ULL, static_cast<std::uint64_t>(n_stages_));
    particles_.init(lo, hi, cfg_.particles, rng);
    answers_.clear();
    n_answers_ = 0;
    stage_queries_ = 0;
    qa_.assign(static_cast<std::size_t>(d_), 0.0);
    qb_.assign(static_cast<std::size_t>(d_), 0.0);
  }

  void backtrack() {
    anchor_.clear();
    region_ = region_.parent();
    ++n_stages_;
    begin_particle_stage();
  }

  // The heaviest half-edge box on the quarter lattice of u(X); decides when its mass
  // exceeds alpha (a child of X: proceed; any other box: backtrack).
  bool decide_posterior(const std::vector<double>& w) {
    const double e = region_.edge, q = 0.25 * e;
    std::vector<std::pair<std::int64_t, double>> kw;  // (quarter cell key, weight)
    kw.reserve(static_cast<std::size_t>(particles_.P));
    for (std::int64_t p = 0; p < particles_.P; ++p) {
      if (w[p] == 0.0) continue;
      std::int64_t key = 0;
      for (std::int64_t a = d_ - 1; a >= 0; --a) {
        const double off = (particles_.z[p * d_ + a] - (region_.center[a] - 2.0 * e)) / q;
        const std::int64_t c = std::min<std::int64_t>(
            15, std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(off))));
        key = key * 16 + c;
      }
      kw.emplace_back(key, w[p]);
    }
    std::sort(kw.begin(), kw.end());
    std::vector<std::int64_t> keys;  // distinct cells, ascending, with their masses
    std::vector<double> mass_of;
    for (const auto& x : kw) {
      if (keys.empty() || keys.back() != x.first) {
        keys.push_back(x.first);
        mass_of.push_back(0.0);
      }
      mass_of.back() += x.second;
    }
    auto cell_mass = [&](std::int64_t key) {
      const auto f = std::lower_bound(keys.begin(), keys.end(), key);
      return (f != keys.end() && *f == key) ? mass_of[static_cast<std::size_t>(f - keys.begin())]
                                            : 0.0;
    };
    const double need = cfg_.alpha / double(std::int64_t(1) << d_);
    std::vector<std::int64_t> heavy;
    for (std::size_t k = 0; k < keys.size(); ++k)
      if (mass_of[k] >= need) heavy.push_back(keys[k]);
    double best_mass = -1.0;
    std::int64_t best_box = -1;
    std::vector<std::int64_t> cell(static_cast<std::size_t>(d_)), box(cell.size());
    for (std::int64_t h : heavy) {
      std::int64_t r = h;
      for (std::int64_t a = 0; a < d_; ++a) {
        cell[a] = r % 16;
        r /= 16;
      }
      for (std::int64_t corner = 0; corner < (std::int64_t(1) << d_); ++corner) {
        bool ok = true;  // box lower corner = cell - bit
        std::int64_t bkey = 0;
        for (std::int64_t a = d_ - 1; a >= 0; --a) {
          box[a] = cell[a] - ((corner >> a) & 1);
          ok = ok && box[a] >= 0 && box[a] <= 14;
          bkey = bkey * 16 + box[a];
        }
        if (!ok) continue;
        double mass = 0.0;
        for (std::int64_t sub = 0; sub < (std::int64_t(1) << d_); ++sub) {
          std::int64_t k2 = 0;
          for (std::int64_t a = d_ - 1; a >= 0; --a) k2 = k2 * 16 + box[a] + ((sub >> a) & 1);
          mass += cell_mass(k2);
        }
        if (mass > best_mass || (mass == best_mass && bkey < best_box)) {
          best_mass = mass;
          best_box = bkey;
        }
      }
    }
    if (!(best_mass > cfg_.alpha)) return false;
    std::vector<int> m(static_cast<std::size_t>(d_));
    bool is_child = true;
    std::int64_t r = best_box;
    for (std::int64_t a = 0; a < d_; ++a) {
      const std::int64_t b = r % 16;  // box center offset (b - 7) e/4
      r /= 16;
      m[a] = static_cast<int>(b - 7 + 2);
      is_child = is_child && b >= 5 && b <= 9;
    }
    if (!is_child) {
      backtrack();
      return true;
    }
    anchor_.assign(static_cast<std::size_t>(d_), 0.0);
    anchor_spread_ = particles_.median(w, anchor_.data());
    region_ = region_.child(m.data());
    // the same posterior may already single out a child of the child: descend while one
    // holds mass > alpha (each level is a decision of Algorithm 1 on the same evidence)
    for (int level = 0; level < 8; ++level) {
      std::vector<int> bm;
      if (!(heaviest_child(w, bm) > cfg_.alpha)) break;
      region_ = region_.child(bm.data());
    }
    ++n_stages_;
    begin_particle_stage();
    return true;
  }

  // Mass of the heaviest child of the current region under weights w (its position in
  // m): each particle lies in at most two children per axis, so O(P 2^d) work.
  double heaviest_child(const std::vector<double>& w, std::vector<int>& m) const {
    const double e = region_.edge, q = 0.25 * e;
    std::vector<std::pair<std::int64_t, double>> kw;
    std::vector<int> lo(static_cast<std::size_t>(d_)), nm(lo.size()), digit(lo.size());
    for (std::int64_t p = 0; p < particles_.P; ++p) {
      if (w[p] == 0.0) continue;
      bool any = true;
      for (std::int64_t a = 0; a < d_ && any; ++a) {
        // child m covers [c + (m - 3) q, c + (m - 1) q]
        const double t = (particles_.z[p * d_ + a] - region_.center[a]) / q;
        const int mlo = std::max(0, static_cast<int>(std::ceil(t + 1.0)));
        const int mhi = std::min(4, static_cast<int>(std::floor(t + 3.0)));
        lo[a] = mlo;
        nm[a] = mhi - mlo + 1;
        any = nm[a] > 0;
      }
      if (!any) continue;
      std::int64_t combos = 1;
      for (std::int64_t a = 0; a < d_; ++a) combos *= nm[a];
      for (std::int64_t c = 0; c < combos; ++c) {
        std::int64_t rr = c;
        for (std::int64_t a = 0; a < d_; ++a) {  // axis 0 varies fastest
          digit[a] = lo[a] + static_cast<int>(rr % nm[a]);
          rr /= nm[a];
        }
        std::int64_t key = 0;  // base-5 code, axis 0 least significant
        for (std::int64_t a = d_ - 1; a >= 0; --a) key = key * 5 + digit[a];
        kw.emplace_back(key, w[p]);
      }
    }
    if (kw.empty()) return 0.0;
    std::sort(kw.begin(), kw.end());
    double best = -1.0, cur = 0.0;
    std::int64_t best_key = 0;
    for (std::size_t k = 0; k < kw.size(); ++k) {
      cur += kw[k].second;
      if (k + 1 == kw.size() || kw[k + 1].first != kw[k].first) {
        if (cur > best) {
          best = cur;
          best_key = kw[k].first;
        }
        cur = 0.0;
      }
    }
    m.assign(static_cast<std::size_t>(d_), 2);
    for (std::int64_t a = 0; a < d_; ++a) {
      m[a] = static_cast<int>(best_key % 5);
      best_key /= 5;
    }
    return best;
  }

  // Candidate pairs: M posterior draws and their mirror images through the weighted
  // mean; pairs (draw, mirror) and all pairs of draws. Score: variance over S posterior
  // draws of P(a named | z).
  static constexpr double kFocusTail = 1e-3;
  static constexpr int kDraws = 12;
  static constexpr int kEval = 256;

  void select_query() {
    std::vector<double> w;
    particles_.weights(w);
    std::vector<double> mu(static_cast<std::size_t>(d_));
    particles_.mean(w, mu.data());
    Rng rng(seed_ ^ 0x94D049BB133111EBULL, static_cast<std::uint64_t>(n_queries_));
    const std::vector<std::int64_t> cand = Particles::systematic(w, kDraws, rng.uniform());
    const std::vector<std::int64_t> eval = Particles::systematic(w, kEval, rng.uniform());
    std::vector<double> pts(static_cast<std::size_t>(2 * kDraws * d_));
    for (int i = 0; i < kDraws; ++i)
      for (std::int64_t a = 0; a < d_; ++a) {
        const double x = particles_.z[cand[i] * d_ + a];
        pts[i * d_ + a] = x;
        pts[(kDraws + i) * d_ + a] = 2.0 * mu[a] - x;
      }
    std::vector<std::pair<int, int>> pairs;
    for (int i = 0; i < kDraws; ++i) pairs.emplace_back(i, kDraws + i);
    for (int i = 0; i < kDraws; ++i)
      for (int j = i + 1; j < kDraws; ++j) pairs.emplace_back(i, j);
    // squared distances from every evaluation draw to every candidate point
    std::vector<double> D(static_cast<std::size_t>(2 * kDraws * kEval));
    for (int c = 0; c < 2 * kDraws; ++c)
      for (int s = 0; s < kEval; ++s)
        D[c * kEval + s] = sqdist(pts.data() + c * d_, particles_.z.data() + eval[s] * d_, d_);
    double best = -1.0;
    std::size_t arg = 0;
    for (std::size_t t = 0; t < pairs.size(); ++t) {
      const double* Da = D.data() + pairs[t].first * kEval;
      const double* Db = D.data() + pairs[t].second * kEval;
      double s1 = 0.0, s2 = 0.0;
      for (int s = 0; s < kEval; ++s) {
        const double p = model_.prob(Da[s], Db[s]);
        s1 += p;
        s2 += p * p;
      }
      const double var = s2 / kEval - (s1 / kEval) * (s1 / kEval);
      if (var > best) {
        best = var;
        arg = t;
      }
    }
    for (std::int64_t a = 0; a < d_; ++a) {
      qa_[a] = pts[pairs[arg].first * d_ + a];
      qb_[a] = pts[pairs[arg].second * d_ + a];
    }
    if (sqdist(qa_.data(), qb_.data(), d_) == 0.0) qb_[0] += 1e-9 * region_.edge;  // distinct
  }

  ContinuousConfig cfg_;
  std::int64_t d_;
  std::uint64_t seed_;
  AnswerModel model_;
  Region region_;
  std::int64_t n_queries_ = 0, n_stages_ = 0, stage_queries_ = 0;
  bool pending_ = false;
  std::vector<double> qa_, qb_;
  // hypothesis test
  std::int64_t n_cells_ = 0, cell_ = 0, rep_ = 0, wins_ = 0;
  bool any_ = false;
  std::vector<std::int64_t> box_lo_, box_hi_;
  // particles
  Particles particles_;
  std::vector<double> answers_;
  std::int64_t n_answers_ = 0;
  std::vector<double> anchor_;  // Posterior: the last stage's final median (empty: none)
  double anchor_spread_ = 0.0;
};

// ---------------------------------------------------------------- simulation

struct ContinuousSimulation {
  std::vector<double> errors;        // runs x (max_queries + 1), or empty
  std::vector<double> stage_errors;  // runs x (max_stages + 1), NaN-padded
  std::vector<double> stage_queries;
  std::vector<std::int64_t> depths, queries;
  std::vector<double> targets;         // runs x d
  std::vector<double> centers, edges;  // final regions
};

// Runs in parallel over runs (the hypothesis test: over cells); run r draws its target
// and answers from its own streams, so results do not depend on the thread count.
inline ContinuousSimulation simulate_continuous(const ContinuousConfig& cfg, std::int64_t runs,
                                                std::int64_t max_queries, std::int64_t max_stages,
                                                double oracle_gamma, double oracle_lapse,
                                                std::uint64_t seed, int threads) {
  const std::int64_t d = cfg.d;
  const bool hyp = cfg.method == ContinuousMethod::HypothesisTest;
  if (hyp && max_queries >= 0)
    throw std::invalid_argument(
        "max_queries: per-query errors are not recorded for the "
        "hypothesis test (billions of queries); use max_stages");
  if (max_queries < 0 && max_stages < 0)
    throw std::invalid_argument("max_queries, max_stages: give at least one");
  ContinuousSimulation res;
  const std::int64_t S = max_stages >= 0 ? max_stages : max_queries;  // stage rows bound
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (max_queries >= 0) res.errors.assign(static_cast<std::size_t>(runs * (max_queries + 1)), nan);
  res.stage_errors.assign(static_cast<std::size_t>(runs * (S + 1)), nan);
  res.stage_queries.assign(res.stage_errors.size(), nan);
  res.depths.assign(static_cast<std::size_t>(runs), 0);
  res.queries.assign(static_cast<std::size_t>(runs), 0);
  res.targets.assign(static_cast<std::size_t>(runs * d), 0.0);
  res.centers.assign(static_cast<std::size_t>(runs * d), 0.0);
  res.edges.assign(static_cast<std::size_t>(runs), 0.0);
  const AnswerModel user(oracle_gamma, oracle_lapse);
  auto run_one = [&](std::int64_t r, int inner_threads) {
    Rng rng(seed, static_cast<std::uint64_t>(r));
    double* t = res.targets.data() + r * d;
    for (std::int64_t a = 0; a < d; ++a) t[a] = cfg.low + rng.uniform() * (cfg.high - cfg.low);
    std::uint64_t s = seed ^ 0x2545F4914F6CDD1DULL;
    ContinuousConfig run_cfg = cfg;
    run_cfg.threads = inner_threads;
    ContinuousSearcher srch(run_cfg, splitmix64(s) + static_cast<std::uint64_t>(r));
    std::vector<double> est(static_cast<std::size_t>(d)), qa(est.size()), qb(est.size());
    auto error = [&]() {
      srch.estimate(est.data());
      return std::sqrt(sqdist(est.data(), t, d));
    };
    const double e0 = error();
    if (max_queries >= 0) res.errors[static_cast<std::size_t>(r * (max_queries + 1))] = e0;
    res.stage_errors[static_cast<std::size_t>(r * (S + 1))] = e0;
    res.stage_queries[static_cast<std::size_t>(r * (S + 1))] = 0.0;
    std::int64_t stage = 0;
    while (true) {
      if (max_stages >= 0 && stage >= max_stages) break;
      if (max_queries >= 0 && srch.n_queries() >= max_queries) break;
      bool ended;
      if (hyp) {
        srch.simulate_hyptest_stage(t, user, inner_threads);
        ended = true;
      } else {
        srch.ask(qa.data(), qb.data());
        const double p = user.prob(sqdist(qa.data(), t, d), sqdist(qb.data(), t, d));
        ended = srch.tell(rng.uniform() < p);
        if (max_queries >= 0)
          res.errors[static_cast<std::size_t>(r * (max_queries + 1) + srch.n_queries())] = error();
      }
      if (ended) {
        ++stage;
        if (stage <= S) {
          res.stage_errors[static_cast<std::size_t>(r * (S + 1) + stage)] = error();
          res.stage_queries[static_cast<std::size_t>(r * (S + 1) + stage)] =
              double(srch.n_queries());
        }
      }
    }
    res.depths[r] = srch.region().depth;
    res.queries[r] = srch.n_queries();
    res.edges[r] = srch.region().edge;
    for (std::int64_t a = 0; a < d; ++a) res.centers[r * d + a] = srch.region().center[a];
  };
  if (hyp) {
    for (std::int64_t r = 0; r < runs; ++r) run_one(r, threads);
  } else {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t r = 0; r < runs; ++r) run_one(r, 1);
  }
  return res;
}

}  // namespace tripletsearch
