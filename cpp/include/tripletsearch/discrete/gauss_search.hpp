// GaussSearch (Chumbalov et al. 2020): a Gaussian belief N(mean, cov) over the target's
// location (prior: the items' mean and covariance, the uniform prior moment-matched), the
// probit likelihood with noise sigma, one moment-matched (ADF) update per pairwise
// preference (k items: the chosen one beats each other one, in turn), and SampleMirror
// queries snapped to the nearest unshown items.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "../core/linalg.hpp"
#include "../core/mathutil.hpp"
#include "../core/parallel.hpp"
#include "../core/seeding.hpp"
#include "../simd/kernels.hpp"
#include "axes.hpp"
#include "gammackl_posterior.hpp"
#include "gauss_strip.hpp"
#include "scan.hpp"
#include "searcher.hpp"

namespace tripletsearch {

class GaussSearch final : public DiscreteSearcher {
 public:
  GaussSearch(std::shared_ptr<const ItemStore> store, const SearchConfig& cfg, std::uint64_t seed,
              int threads)
      : DiscreteSearcher(std::move(store), cfg, seed, threads),
        passed_(cfg.guesses > 0 ? store_->n() : 0),
        blocked_(cfg.guesses > 0 && cfg.miss == 0.0 && !cfg.miss_auto ? store_->n() : 0) {
    const GammaCKLPosterior uniform(store_, SearchConfig{}, threads_,
                                    false);  // the prior's moments
    mean_ = uniform.mean();
    cov_ = uniform.cov();
    sigma_ = cfg_.sigma / store_->scale();  // sigma is in the input's units
  }

  std::unique_ptr<DiscreteSearcher> copy_with_seed(std::uint64_t seed) const override {
    return std::unique_ptr<DiscreteSearcher>(new GaussSearch(*this, seed));
  }
  std::size_t state_bytes() const override {
    return DiscreteSearcher::state_bytes() + (mean_.size() + cov_.size()) * sizeof(double) +
           passed_.bytes() + blocked_.bytes() + passed_list_.size() * sizeof(std::int64_t) +
           (fused_.size() + seeds_.size()) * sizeof(std::int64_t);
  }

  const std::vector<double>& mean() const override { return mean_; }
  const std::vector<double>& cov() const override { return cov_; }

  // Items weighted by the belief's density (log-sum-exp normalized).
  void posterior(double* out) const override {
    const std::int64_t n = store_->n(), d = store_->d();
    const std::vector<double> L = cholesky(cov_, d);
    std::vector<double> x(static_cast<std::size_t>(d)), y(x.size());
    double mx = -std::numeric_limits<double>::infinity();
    for (std::int64_t i = 0; i < n; ++i) {
      if (shown_[i]) {
        out[i] = -std::numeric_limits<double>::infinity();
        continue;
      }
      store_->row(i, x.data());
      for (std::int64_t a = 0; a < d; ++a) x[a] -= mean_[a];
      out[i] = -0.5 * lower_solve_sq_norm(L, d, x.data(), y.data());
      mx = std::max(mx, out[i]);
    }
    double total = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
      out[i] = std::isfinite(out[i]) ? std::exp(out[i] - mx) : 0.0;
      total += out[i];
    }
    for (std::int64_t i = 0; i < n; ++i) out[i] = total > 0.0 ? out[i] / total : 0.0;
  }

 protected:
  // Screens leave out the passed-over items too when the person never misses (miss = 0),
  // as long as enough others are left. With guesses, the strip's candidates come from the
  // same pass (StripPass), kept for strip() until the next answer.
  void select_k(std::int64_t* q, int k) override {
    const std::int64_t d = store_->d();
    std::vector<double> protos(static_cast<std::size_t>(k * d));
    MirrorPair pair{protos.data(), 0.0, 0.0, 0.0};
    sample_mirror(k, protos.data(), pair);
    std::int64_t hidden = 0;  // passed over, not shown
    for (std::int64_t i : passed_list_) hidden += shown_[i] ? 0 : 1;
    const bool block = blocked_.size() > 0 && n_unshown() - hidden >= k;
    const ScanInput in{*store_, nullptr, block ? blocked_ : shown_,
                       balanced_chunks(store_->blocks() / 4), threads_};
    fused_r_ = 0;
    const int r = cfg_.guesses + k;
    std::vector<double> L;
    std::unique_ptr<StripPass> pass;
    if (cfg_.guesses > 0 && k >= 2 && strip_usable(L = cholesky(cov_, d))) {
      pass = std::make_unique<StripPass>(*store_, shown_, passed_, mean_, L, r, in.chunks, seeds_,
                                         pair);
      if (!pass->ok()) pass.reset();
    }
    const BlockHook hook = pass ? pass->hook() : BlockHook{};
    nearest_items(in, protos.data(), k, ScanRule::Nearest, {}, q, pass ? &hook : nullptr);
    if (!pass) return;
    keep_candidates(pass->merged(), r);
    fused_r_ = r;
    fused_query_ = n_queries_;
  }

  // The m items of highest belief density (lowest Mahalanobis distance to the mean; ties:
  // lower index) neither shown nor passed over nor on q[0..k): the m + k best of the
  // screen's own pass when select() just ran (StripPass), else a pass of their own
  // (scan_nearest_mean, threaded, the same items).
  int strip(const std::int64_t* q, int k, int m, std::int64_t* out) const override {
    auto on_screen = [&](std::int64_t i) { return std::find(q, q + k, i) != q + k; };
    if (!(fused_query_ == n_queries_ && m + k <= fused_r_)) {
      const std::int64_t d = store_->d();
      const std::vector<double> L = cholesky(cov_, d);
      const std::int64_t C = balanced_chunks(store_->blocks() / 4);
      const std::vector<Cand> best =
          scan_nearest_mean(*store_, shown_, passed_, mean_, cov_, L, C, m + k, threads_);
      keep_candidates(best, m + k);
    }
    int g = 0;
    for (std::int64_t i : fused_)
      if (g < m && !on_screen(i)) out[g++] = i;
    return g;
  }

  void observe(const std::int64_t* shown, int k, int choice, const std::int64_t* offered,
               int g) override {
    for (int j = 0; j < g; ++j)  // passed over: out of later strips (and maybe screens)
      if (passed_.insert(offered[j])) passed_list_.push_back(offered[j]);
    if (blocked_.size() > 0) {
      for (int j = 0; j < k; ++j) blocked_.insert(shown[j]);
      for (int j = 0; j < g; ++j) blocked_.insert(offered[j]);
    }
    if (choice < 0) return;
    std::vector<double> xi(static_cast<std::size_t>(store_->d())), xj(xi.size());
    store_->row(shown[choice], xi.data());
    for (int j = 0; j < k; ++j) {
      if (j == choice) continue;
      store_->row(shown[j], xj.data());
      adf_update(xi.data(), xj.data());
    }
  }

 private:
  GaussSearch(const GaussSearch& other, std::uint64_t seed)
      : DiscreteSearcher(other, seed),
        mean_(other.mean_),
        cov_(other.cov_),
        passed_(other.passed_),
        blocked_(other.blocked_),
        passed_list_(other.passed_list_),
        sigma_(other.sigma_),
        warm_(other.warm_),
        fused_(other.fused_),
        seeds_(other.seeds_),
        fused_r_(other.fused_r_),
        fused_query_(other.fused_query_) {}

  // Whether the belief's Cholesky factor L gives distances (a positive diagonal).
  bool strip_usable(const std::vector<double>& L) const {
    const std::int64_t d = store_->d();
    for (std::int64_t a = 0; a < d; ++a)
      if (!(L[static_cast<std::size_t>(a * d + a)] > 0.0)) return false;
    return true;
  }

  // The r best of `best` (sorted) for the strip, and up to 4 r of them for the next pass's
  // bar (StripPass's seeds: most are still eligible after this screen and strip).
  void keep_candidates(const std::vector<Cand>& best, int r) const {
    fused_.clear();
    seeds_.clear();
    for (std::size_t t = 0; t < best.size() && t < 4 * static_cast<std::size_t>(r); ++t) {
      if (t < static_cast<std::size_t>(r)) fused_.push_back(best[t].index);
      seeds_.push_back(best[t].index);
    }
  }

  // Probit: P(i picked over j | x) = Phi((u.x - b) / sigma), u = (x_i - x_j)/||x_i - x_j||,
  // b = (||x_i||^2 - ||x_j||^2) / (2 ||x_i - x_j||): the moment-matched update.
  void adf_update(const double* xi, const double* xj) {
    const std::int64_t d = store_->d();
    std::vector<double> u(static_cast<std::size_t>(d)), Su(u.size());
    double s2 = 0.0, ni = 0.0, nj = 0.0;
    for (std::int64_t a = 0; a < d; ++a) {
      u[a] = xi[a] - xj[a];
      s2 += u[a] * u[a];
      ni += xi[a] * xi[a];
      nj += xj[a] * xj[a];
    }
    if (!(s2 > 0.0)) return;  // identical items: no information
    const double s = std::sqrt(s2);
    for (auto& x : u) x /= s;
    const double b = (ni - nj) / (2.0 * s);
    double um = 0.0, v = 0.0;
    for (std::int64_t a = 0; a < d; ++a) {
      Su[a] = dot(cov_.data() + a * d, u.data(), d);
      um += u[a] * mean_[a];
      v += u[a] * Su[a];
    }
    const double sd = std::sqrt(v + sigma_ * sigma_);
    const double z = (um - b) / sd;
    const double lam = normal_tail(z).mills;
    const double gmean = lam / sd, gcov = lam * (lam + z) / (sd * sd);
    for (std::int64_t a = 0; a < d; ++a) mean_[a] += gmean * Su[a];
    for (std::int64_t a = 0; a < d; ++a)
      for (std::int64_t c = 0; c < d; ++c) cov_[a * d + c] -= gcov * Su[a] * Su[c];
  }

  // SampleMirror: z ~ N(mean, cov) and its mirror across the hyperplane through the mean
  // orthogonal to the top eigenvector; k > 2: further pairs mirror across the hyperplanes
  // of the next eigenvectors. pair: z's offset along the first pair's axis and, with
  // guesses (Jacobi: the same axes for any count), the two largest eigenvalues.
  void sample_mirror(int k, double* protos, MirrorPair& pair) const {
    const std::int64_t d = store_->d();
    const int ne = static_cast<int>(std::min<std::int64_t>((k + 1) / 2, d));
    const int count = cfg_.guesses > 0 && d <= kJacobiMaxDim
                          ? std::max(ne, static_cast<int>(std::min<std::int64_t>(d, 2)))
                          : ne;
    const Axes axes = Axes::of(cov_, d, count, warm_);
    pair.l1 = axes.values[0];
    pair.l2 = axes.values[static_cast<std::size_t>(count > 1 ? 1 : 0)];
    const std::vector<double>& vecs = axes.vectors;
    const std::vector<double> L = cholesky(cov_, d);
    std::vector<double> g(static_cast<std::size_t>(d)), z(g.size());
    Rng rng = stream(seed_, Purpose::SearchQuery, static_cast<std::uint64_t>(n_queries_));
    for (int c = 0; c < k; c += 2) {
      for (auto& x : g) x = rng.normal();
      for (std::int64_t a = 0; a < d; ++a) z[a] = mean_[a] + dot(L.data() + a * d, g.data(), a + 1);
      const double* v = vecs.data() + ((c / 2) % ne) * d;
      double proj = 0.0;
      for (std::int64_t a = 0; a < d; ++a) proj += v[a] * (z[a] - mean_[a]);
      for (std::int64_t a = 0; a < d; ++a) protos[c * d + a] = z[a];
      if (c == 0) pair.s = proj;
      if (c + 1 < k)
        for (std::int64_t a = 0; a < d; ++a) protos[(c + 1) * d + a] = z[a] - 2.0 * proj * v[a];
    }
  }

  std::vector<double> mean_, cov_;
  ShownSet passed_;                        // offered in a strip and passed over
  ShownSet blocked_;                       // miss = 0: shown or passed over (empty otherwise)
  std::vector<std::int64_t> passed_list_;  // passed_'s items, in the order passed over
  double sigma_;                           // the probit noise in the store's frame
  mutable AxesWarmStart warm_;             // the last query's axes, the next one's start
  mutable std::vector<std::int64_t> fused_;  // the strip's best, as of answer fused_query_
  mutable std::vector<std::int64_t> seeds_;  // candidates for the next pass's bar
  int fused_r_ = 0;                          // their count (0: none)
  std::int64_t fused_query_ = -1;
};

}  // namespace tripletsearch
