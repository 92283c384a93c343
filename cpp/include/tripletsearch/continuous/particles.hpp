// The particle posterior of the continuous search: particles z (P x d) with log-weights,
// a uniform prior on a box, gamma-CKL answers (oracle/choice.hpp), weighted quantiles, and
// resample-move (systematic resampling, core/resample.hpp, then Metropolis-Hastings).
// With gamma and/or lapse inferred (oracle/user_grid.hpp) each particle also carries a
// hypothesis (gamma index, lapse index) drawn from the grid prior, moved by a
// Metropolis-Hastings step to a neighbouring grid value after the moves of z.
// Random streams: stream P gives the resampling offset, stream p particle p's moves, so
// results do not depend on the number of threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "../core/linalg.hpp"
#include "../core/resample.hpp"
#include "../core/rng.hpp"
#include "../oracle/choice.hpp"
#include "../oracle/user_grid.hpp"

namespace tripletsearch {

// The particle methods keep quarter-lattice keys in 64 bits: 4 bits per axis.
constexpr std::int64_t kMaxParticleDim = 15;

// The Metropolis-Hastings moves of a refresh weigh the last kMoveWindow answers (the
// particle weights keep every answer): a refresh costs O(particles x kMoveWindow), so a
// session, and its replay, grows linearly with its length. Within the window (every
// session of the posterior method, whose stages end by 30 d <= 450 queries, and global
// sessions up to 512 answers) the moves target the exact posterior; beyond, the prior
// restricted to the focus box times the window's likelihood.
constexpr std::int64_t kMoveWindow = 512;

// Metropolis-Hastings proposals of z alternate two scales: even sweeps a step of
// kProposalScale / sqrt(d) times the Cholesky factor of the particles' covariance (moves
// along the posterior's ridges, out of a wrong mode: in d = 5 it cut the searches lost
// from 9.5 % to 3-4 %), odd sweeps half the interquartile range per axis (robust to the
// heavy tails: the local refinement that keeps the convergence exponential).
constexpr double kProposalScale = 1.0;

// The answers so far: per answer a (d), b (d) and 1 when a was named, else 0.
struct AnswerLog {
  std::int64_t d = 0, count = 0;
  std::vector<double> rows;  // count x (2d + 1)

  void clear() {
    rows.clear();
    count = 0;
  }
  void add(const double* a, const double* b, bool a_named) {
    rows.insert(rows.end(), a, a + d);
    rows.insert(rows.end(), b, b + d);
    rows.push_back(a_named ? 1.0 : 0.0);
    ++count;
  }
  // log P(answers first.. | target x, hypothesis (g, l)), as a running product logged only
  // when it gets small (one log per dozens of answers instead of one per answer).
  double log_likelihood(const UserModel& m, const double* x, int g, int l,
                        std::int64_t first = 0) const {
    const std::int64_t stride = 2 * d + 1;
    double lp = 0.0, prod = 1.0;
    for (std::int64_t q = first; q < count; ++q) {
      const double* A = rows.data() + q * stride;
      prod *= m.prob_of(g, l, sqdist(A, x, d), sqdist(A + d, x, d), A[2 * d] > 0.5);
      if (prod < 1e-250) {
        lp += std::log(prod);
        prod = 1.0;
      }
    }
    return lp + std::log(prod);
  }
};

class Particles {
 public:
  std::int64_t d = 0, P = 0;
  std::vector<double> z, lw, ll;  // positions (P x d), log-weights, cumulative log-lik
  std::vector<double> lo, hi;     // the prior's box
  std::vector<double> olo, ohi;   // the box of init (focus stays within it)
  // Each particle's hypothesis about the user (grid indices; empty when not inferred).
  std::vector<std::int8_t> hg, hl;

  int g(std::int64_t p) const { return hg.empty() ? -1 : hg[static_cast<std::size_t>(p)]; }
  int l(std::int64_t p) const { return hl.empty() ? -1 : hl[static_cast<std::size_t>(p)]; }

  // Uniform prior on the box [lo, hi]: a grid of floor(P^(1/d))^d cell centers for d <= 3,
  // else target_P uniform draws from rng; then the hypotheses m infers, drawn from their
  // priors (rng, particle by particle: gamma, then lapse).
  void init(const std::vector<double>& lo_, const std::vector<double>& hi_, std::int64_t target_P,
            const UserModel& m, Rng& rng) {
    lo = olo = lo_;
    hi = ohi = hi_;
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
    hg.assign(m.gamma_auto ? static_cast<std::size_t>(P) : 0, 0);
    hl.assign(m.lapse_auto ? static_cast<std::size_t>(P) : 0, 0);
    if (!m.inferred()) return;
    double cdf[kGammaGrid], c = 0.0;
    for (int j = 0; j < kGammaGrid; ++j) cdf[j] = (c += std::exp(m.log_prior[j]));
    for (std::int64_t p = 0; p < P; ++p) {
      if (m.gamma_auto) {
        const double u = rng.uniform() * c;
        int j = 0;
        while (j + 1 < kGammaGrid && cdf[j] <= u) ++j;
        hg[static_cast<std::size_t>(p)] = static_cast<std::int8_t>(j);
      }
      if (m.lapse_auto)
        hl[static_cast<std::size_t>(p)] = static_cast<std::int8_t>(
            std::min<int>(kLapseGrid - 1, static_cast<int>(rng.uniform() * kLapseGrid)));
    }
  }

  void observe(const double* a, const double* b, bool a_named, const UserModel& m, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads) if (P >= 8192)
    for (std::int64_t p = 0; p < P; ++p) {
      const double* x = z.data() + p * d;
      const double l_ = m.log_prob_of(g(p), l(p), sqdist(a, x, d), sqdist(b, x, d), a_named);
      lw[p] += l_;
      ll[p] += l_;
    }
  }

  // The weighted marginal posterior of the hypotheses: gamma (kGammaGrid values) and lapse
  // (kLapseGrid values) grid probabilities (zeros for what is not inferred).
  void hypothesis_marginals(const std::vector<double>& w, double* gamma_p, double* lapse_p) const {
    std::fill(gamma_p, gamma_p + kGammaGrid, 0.0);
    std::fill(lapse_p, lapse_p + kLapseGrid, 0.0);
    for (std::int64_t p = 0; p < P; ++p) {
      if (!hg.empty()) gamma_p[g(p)] += w[p];
      if (!hl.empty()) lapse_p[l(p)] += w[p];
    }
  }

  // Normalized weights into w; returns the effective sample size.
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

  // Weighted quantiles qs[0..nq) of axis a: the smallest coordinate (in (value, index)
  // order) whose cumulative weight reaches q. Weighted quickselect: expected O(P) each.
  void quantiles(const std::vector<double>& w, std::int64_t a, const double* qs, int nq,
                 double* out) const {
    std::vector<std::pair<double, std::int64_t>> v(static_cast<std::size_t>(P));
    for (std::int64_t p = 0; p < P; ++p) v[p] = {z[p * d + a], p};
    for (int j = 0; j < nq; ++j) out[j] = weighted_select(v, w, qs[j]);
  }

  // Coordinate-wise weighted median (the point estimate: robust to the slowly decaying
  // tails of the gamma-CKL posterior, which drag the mean); returns the largest
  // interquartile range over the axes.
  double median(const std::vector<double>& w, double* out) const {
    static const double qs[3] = {0.25, 0.5, 0.75};
    double q[3], spread = 0.0;
    for (std::int64_t a = 0; a < d; ++a) {
      quantiles(w, a, qs, 3, q);
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

  // Sets the prior box to the central 1 - 2 eps of the weighted particles per axis, widened
  // by half its width on each side, within the box of init (the global method's zooming:
  // tails below eps are dropped, the price of exponential convergence without stages). The
  // box follows the particles: it may grow again where they move to its edge.
  void focus(double eps);

  // Resample, then `sweeps` Metropolis-Hastings moves targeting prior x all answers
  // (proposals: see kProposalScale).
  void resample_move(const AnswerLog& answers, const UserModel& m, std::uint64_t stream_seed,
                     int sweeps, int threads);

 private:
  // A cumulative weight within 1e-9 of q counts as reaching it: with equal weights the
  // boundary is hit exactly, and summation order must not decide.
  static double weighted_select(std::vector<std::pair<double, std::int64_t>>& v,
                                const std::vector<double>& w, double q);
  void move(std::int64_t p, const AnswerLog& answers, const UserModel& m,
            const std::vector<double>& step, std::uint64_t stream_seed, int sweeps);
};

inline double Particles::weighted_select(std::vector<std::pair<double, std::int64_t>>& v,
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

inline void Particles::focus(double eps) {
  std::vector<double> w;
  weights(w);
  const double qs[2] = {eps, 1.0 - eps};
  double q[2];
  for (std::int64_t a = 0; a < d; ++a) {
    quantiles(w, a, qs, 2, q);
    const double margin = 0.5 * (q[1] - q[0]);
    lo[a] = std::max(olo[a], q[0] - margin);
    hi[a] = std::min(ohi[a], q[1] + margin);
  }
  for (std::int64_t p = 0; p < P; ++p)
    for (std::int64_t a = 0; a < d; ++a)
      if (z[p * d + a] < lo[a] || z[p * d + a] > hi[a])
        lw[p] = -std::numeric_limits<double>::infinity();
}

// Particle p's Metropolis-Hastings moves from its own stream (stream_seed, p): `sweeps`
// moves of z, then (hypotheses inferred) one move of the hypothesis to a neighbouring grid
// value of gamma or of the lapse rate (each with probability 1/2 when both are inferred;
// each direction with probability 1/2; off the grid: rejected).
inline void Particles::move(std::int64_t p, const AnswerLog& answers, const UserModel& m,
                            const std::vector<double>& step, std::uint64_t stream_seed,
                            int sweeps) {
  Rng rng(stream_seed, static_cast<std::uint64_t>(p));
  double prop[kMaxParticleDim];  // d <= kMaxParticleDim (ContinuousConfig): no allocation
  const std::int64_t first = std::max<std::int64_t>(0, answers.count - kMoveWindow);
  const int g0 = g(p), l0 = l(p);
  double cur = first == 0 ? ll[p] : answers.log_likelihood(m, z.data() + p * d, g0, l0, first);
  for (int s = 0; s < sweeps; ++s) {
    double eps[kMaxParticleDim];
    for (std::int64_t a = 0; a < d; ++a) eps[a] = rng.normal();
    bool inside = true;
    for (std::int64_t a = 0; a < d; ++a) {  // z + L eps, L lower triangular
      double s_ = 0.0;
      if (s & 1)
        s_ = step[d * d + a] * eps[a];
      else
        for (std::int64_t b = 0; b <= a; ++b) s_ += step[a * d + b] * eps[b];
      prop[a] = z[p * d + a] + s_;
      inside = inside && prop[a] >= lo[a] && prop[a] <= hi[a];
    }
    const double u = rng.uniform();
    if (!inside) continue;
    const double lp = answers.log_likelihood(m, prop, g0, l0, first);
    if (u < std::exp(lp - cur)) {  // also accepts from a -inf state
      for (std::int64_t a = 0; a < d; ++a) z[p * d + a] = prop[a];
      cur = lp;
    }
  }
  if (m.inferred()) {
    int g1 = g0, l1 = l0;
    // one of the two moves (both inferred: gamma or lapse with probability 1/2 each)
    const bool move_gamma = m.gamma_auto && (!m.lapse_auto || rng.uniform() < 0.5);
    const int step = rng.uniform() < 0.5 ? -1 : 1;
    (move_gamma ? g1 : l1) += step;
    const double u = rng.uniform();
    if ((!m.gamma_auto || (g1 >= 0 && g1 < kGammaGrid)) &&
        (!m.lapse_auto || (l1 >= 0 && l1 < kLapseGrid))) {
      const double lp = answers.log_likelihood(m, z.data() + p * d, g1, l1, first);
      const double prior = m.gamma_auto ? m.log_prior[g1] - m.log_prior[g0] : 0.0;
      if (u < std::exp(lp - cur + prior)) {
        if (m.gamma_auto) hg[static_cast<std::size_t>(p)] = static_cast<std::int8_t>(g1);
        if (m.lapse_auto) hl[static_cast<std::size_t>(p)] = static_cast<std::int8_t>(l1);
        cur = lp;
      }
    }
  }
  if (first == 0) ll[p] = cur;  // beyond the window the full log-likelihood is not kept
}

inline void Particles::resample_move(const AnswerLog& answers, const UserModel& m,
                                     std::uint64_t stream_seed, int sweeps, int threads) {
  std::vector<double> w;
  weights(w);
  // proposal: kProposalScale / sqrt(d) times the Cholesky factor of the weighted
  // covariance of the particles (their correlations: the posterior's ridges), its diagonal
  // floored at the square of 1e-15 of the box
  std::vector<double> mu(static_cast<std::size_t>(d)), S(static_cast<std::size_t>(d * d), 0.0);
  mean(w, mu.data());
  for (std::int64_t p = 0; p < P; ++p) {
    if (w[p] == 0.0) continue;
    for (std::int64_t a = 0; a < d; ++a)
      for (std::int64_t b = 0; b <= a; ++b)
        S[a * d + b] += w[p] * (z[p * d + a] - mu[a]) * (z[p * d + b] - mu[b]);
  }
  for (std::int64_t a = 0; a < d; ++a) {
    for (std::int64_t b = 0; b < a; ++b) S[b * d + a] = S[a * d + b];
    const double fl = 1e-15 * (hi[a] - lo[a]);
    S[a * d + a] = std::max(S[a * d + a], fl * fl);
  }
  std::vector<double> step = cholesky(S, d);
  const double c = kProposalScale / std::sqrt(double(d));
  for (double& v : step) v *= c;
  const double qs[2] = {0.25, 0.75};
  double q[2];
  for (std::int64_t a = 0; a < d; ++a) {
    quantiles(w, a, qs, 2, q);
    step.push_back(std::max(0.5 * (q[1] - q[0]) / 1.349, 1e-15 * (hi[a] - lo[a])));
  }
  Rng offset(stream_seed, static_cast<std::uint64_t>(P));
  std::vector<std::int64_t> idx(static_cast<std::size_t>(P));
  systematic_resample(w.data(), P, 1.0, P, offset.uniform(), idx.data());
  std::vector<double> nz(static_cast<std::size_t>(P * d)), nll(static_cast<std::size_t>(P));
  for (std::int64_t k = 0; k < P; ++k) {
    for (std::int64_t a = 0; a < d; ++a) nz[k * d + a] = z[idx[k] * d + a];
    nll[k] = ll[idx[k]];
  }
  z.swap(nz);
  ll.swap(nll);
  for (auto* h : {&hg, &hl}) {
    if (h->empty()) continue;
    std::vector<std::int8_t> nh(static_cast<std::size_t>(P));
    for (std::int64_t k = 0; k < P; ++k) nh[k] = (*h)[static_cast<std::size_t>(idx[k])];
    h->swap(nh);
  }
  std::fill(lw.begin(), lw.end(), 0.0);
#pragma omp parallel for schedule(static) \
    num_threads(threads) if (P * std::min(answers.count, kMoveWindow) > 20000)
  for (std::int64_t p = 0; p < P; ++p) move(p, answers, m, step, stream_seed, sweeps);
}

}  // namespace tripletsearch
