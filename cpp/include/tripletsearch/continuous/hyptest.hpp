// Algorithm 1 with Algorithm 2's decider (lemma:hyptest): per stage, every cell of the
// tiling T(S, r_c) of the slack S is tested: the query (x_c, x_c + (r_c/2)(1 + d) e_1) is
// repeated n_obs times and (H) "the target is in the cell" is rejected when x_c wins fewer
// than tau answers. Proceed to the child holding the bounding box of the non-rejected
// cells; backtrack when the box misses X, when no child holds it or when no cell survives.
// The plan (cells per axis, n_obs, tau) comes from tripletsearch.theory.binomial_test_plan.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "../core/interrupt.hpp"
#include "../core/mathutil.hpp"
#include "../core/parallel.hpp"
#include "../core/seeding.hpp"
#include "searcher.hpp"

namespace tripletsearch {

// P(Binomial(n, p) >= tau), summed exactly from the threshold outward (the terms decay
// geometrically away from the mode); the complement is used below the mean.
inline double binomial_upper_tail(std::int64_t n, double p, std::int64_t tau) {
  if (tau <= 0) return 1.0;
  if (tau > n) return 0.0;
  if (!(p > 0.0)) return 0.0;
  if (!(p < 1.0)) return 1.0;
  const double lp = std::log(p), lq = std::log1p(-p), lgn = log_gamma(double(n) + 1.0);
  auto log_pmf = [&](std::int64_t k) {
    return lgn - log_gamma(double(k) + 1.0) - log_gamma(double(n - k) + 1.0) + double(k) * lp +
           double(n - k) * lq;
  };
  const double odds = p / (1.0 - p);
  if (double(tau) >= double(n) * p) {  // upper tail directly
    double term = std::exp(log_pmf(tau)), sum = 0.0;
    for (std::int64_t k = tau; k <= n && term > 0.0; ++k) {
      sum += term;
      if (term < 1e-17 * sum) break;
      term *= double(n - k) / double(k + 1) * odds;
    }
    return std::min(1.0, sum);
  }
  double term = std::exp(log_pmf(tau - 1)), sum = 0.0;  // lower tail, then complement
  for (std::int64_t k = tau - 1; k >= 0 && term > 0.0; --k) {
    sum += term;
    if (term < 1e-17 * sum) break;
    term *= double(k) / double(n - k + 1) / odds;
  }
  return std::max(0.0, 1.0 - sum);
}

// The bounding box (cell indices per axis) of the cells that passed their test.
struct CellBox {
  bool any = false;
  std::vector<std::int64_t> lo, hi;

  void reset(std::int64_t d) {
    any = false;
    lo.assign(static_cast<std::size_t>(d), std::numeric_limits<std::int64_t>::max());
    hi.assign(static_cast<std::size_t>(d), -1);
  }
  void add(const std::int64_t* idx) {
    any = true;
    for (std::size_t t = 0; t < lo.size(); ++t) {
      lo[t] = std::min(lo[t], idx[t]);
      hi[t] = std::max(hi[t], idx[t]);
    }
  }
  void merge(const CellBox& o) {
    if (!o.any) return;
    any = true;
    for (std::size_t t = 0; t < lo.size(); ++t) {
      lo[t] = std::min(lo[t], o.lo[t]);
      hi[t] = std::max(hi[t], o.hi[t]);
    }
  }
};

class HypothesisTestSearcher final : public ContinuousSearcher {
 public:
  HypothesisTestSearcher(const ContinuousConfig& cfg, std::uint64_t seed, int threads)
      : ContinuousSearcher(cfg, seed, threads) {
    if (!cfg_.has_plan())
      throw std::invalid_argument(
          "cells_per_axis: the hypothesis test needs its plan (cells_per_axis, n_obs, tau)");
    n_cells_ = 1;
    for (std::int64_t a = 0; a < d_; ++a) n_cells_ *= cfg_.cells_per_axis;
    begin_stage();
  }

  // The region's center.
  void estimate_unit(double* out) const override {
    std::copy(region_.center.begin(), region_.center.end(), out);
  }

  // Simulation shortcut: the rest of the current stage against a known target, each cell's
  // test outcome drawn from the exact law of its count (Binomial(n_obs, p)); the queries
  // are counted as asked (n_obs per cell). Parallel over cells in fixed chunks.
  void simulate_stage(const double* target, const PairAnswerModel& user, int threads,
                      Cancel& cancel);

 protected:
  void next_query(double* a, double* b) override { cell_query(cell_, a, b); }

  bool observe(bool a_closer) override {
    wins_ += a_closer ? 1 : 0;
    if (++rep_ < cfg_.n_obs) return false;
    if (wins_ >= cfg_.tau) box_.add(cell_index(cell_).data());
    rep_ = wins_ = 0;
    if (++cell_ < n_cells_) return false;
    decide();
    return true;
  }

 private:
  void begin_stage() {
    cell_ = rep_ = wins_ = 0;
    box_.reset(d_);
    stage_queries_ = 0;
  }

  std::vector<std::int64_t> cell_index(std::int64_t k) const {
    std::vector<std::int64_t> idx(static_cast<std::size_t>(d_));
    for (std::int64_t a = 0; a < d_; ++a, k /= cfg_.cells_per_axis)
      idx[a] = k % cfg_.cells_per_axis;
    return idx;
  }

  // Cell k's query: its center x_c and x_c + (r_c/2)(1 + d) e_1, r_c the cell edge.
  void cell_query(std::int64_t k, double* a, double* b) const {
    const double rc = 1.5 * region_.edge / double(cfg_.cells_per_axis);
    for (std::int64_t t = 0; t < d_; ++t, k /= cfg_.cells_per_axis) {
      a[t] = region_.center[t] - 0.75 * region_.edge + (double(k % cfg_.cells_per_axis) + 0.5) * rc;
      b[t] = a[t];
    }
    b[0] += 0.5 * rc * (1.0 + double(d_));
  }

  // Proceed to the child holding the bounding box of the accepted cells; otherwise
  // backtrack.
  void decide() {
    bool proceed = box_.any;
    std::vector<int> m(static_cast<std::size_t>(d_), 2);
    const double rc = 1.5 / double(cfg_.cells_per_axis);  // relative to the edge
    const double tol = 1e-9;
    for (std::int64_t t = 0; t < d_ && proceed; ++t) {
      const double L = -0.75 + double(box_.lo[t]) * rc, H = -0.75 + double(box_.hi[t] + 1) * rc;
      // the box must meet X; child m spans [m/4 - 3/4, m/4 - 1/4]: m >= 4H + 1, m <= 4L + 3
      const int a = std::max(static_cast<int>(std::ceil(4.0 * H + 1.0 - tol)), 0);
      const int b = std::min(static_cast<int>(std::floor(4.0 * L + 3.0 + tol)), 4);
      proceed = L < 0.5 && H > -0.5 && a <= b;
      const double want = 2.0 * (L + H) + 2.0;  // the m centering the box
      int best = a;
      for (int c = a; c <= b; ++c)
        if (std::fabs(c - want) < std::fabs(best - want)) best = c;
      m[static_cast<std::size_t>(t)] = best;
    }
    region_ = proceed ? region_.child(m.data()) : region_.parent();
    ++n_stages_;
    begin_stage();
  }

  std::int64_t n_cells_ = 0, cell_ = 0, rep_ = 0, wins_ = 0;
  CellBox box_;
};

inline void HypothesisTestSearcher::simulate_stage(const double* target,
                                                   const PairAnswerModel& user, int threads,
                                                   Cancel& cancel) {
  const std::int64_t start = cell_, K = n_cells_, left = n_cells_ - cell_;
  const std::uint64_t stream_seed =
      child_seed(seed_, Purpose::HyptestStage, static_cast<std::uint64_t>(n_stages_));
  const std::int64_t C = balanced_chunks(std::max<std::int64_t>(1, left / 4096));
  std::vector<CellBox> boxes(static_cast<std::size_t>(C));
  for (auto& b : boxes) b.reset(d_);
  ParallelErrors errors;
  ProbingBarrier done;
#pragma omp parallel num_threads(threads)
  {
    std::vector<double> a, b;
    errors.run([&] {
      a.resize(static_cast<std::size_t>(d_));
      b.resize(a.size());
    });
#pragma omp for schedule(static) nowait
    for (std::int64_t c = 0; c < C; ++c) {
      const std::int64_t k1 = start + chunk_begin(left, C, c + 1);
      for (std::int64_t k = start + chunk_begin(left, C, c); k < k1; ++k) {
        if (errors.failed() || ((k & 1023) == 0 && cancel.checkpoint())) break;
        cell_query(k, a.data(), b.data());
        const double p = user.prob(sqdist(a.data(), target, d_), sqdist(b.data(), target, d_));
        Rng rng(stream_seed, static_cast<std::uint64_t>(k));
        if (rng.uniform() < binomial_upper_tail(cfg_.n_obs, p, cfg_.tau))
          errors.run([&] { boxes[static_cast<std::size_t>(c)].add(cell_index(k).data()); });
      }
    }
    done.arrive(cancel);
  }
  errors.rethrow();
  cancel.throw_if_stopped();
  for (const auto& b : boxes) box_.merge(b);
  const std::int64_t asked = (K - start) * cfg_.n_obs - rep_;
  n_queries_ += asked;
  stage_queries_ += asked;
  cell_ = K;
  decide();
}

}  // namespace tripletsearch
