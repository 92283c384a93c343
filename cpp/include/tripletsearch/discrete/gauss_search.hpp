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
#include <vector>

#include "../core/linalg.hpp"
#include "../core/mathutil.hpp"
#include "../core/parallel.hpp"
#include "../core/seeding.hpp"
#include "../simd/kernels.hpp"
#include "axes.hpp"
#include "gammackl_posterior.hpp"
#include "scan.hpp"
#include "searcher.hpp"
#include "strip_shortlist.hpp"

namespace tripletsearch {

// A lower bound of the squared Mahalanobis distance (x - mean)' cov^-1 (x - mean) of a
// block's items, from their projections on the belief's ne tightest principal axes in
// single precision (simd::block_axis_proj, the scans' kernel): sum_e (|p_e| - err)_+^2 /
// lambda_e, err bounding the projections' rounding as scan.hpp's AxisForm does (twice its
// g (|y| + |c|)), less a relative 1e-6 for the eigenpairs' and the exact distance's own
// rounding. ne = min(d, 6): two groups of the AVX2 kernel; in d = 10 about 0.5 % of the
// items pass it (three axes: 5 % to 25 %, whose exact distances then cost more than the
// three axes saved); ne = 0 (no pre-test) beyond kJacobiMaxDim or when the belief is degenerate
// (its smallest variance below 1e-9 of the largest).
struct MahalanobisPretest {
  int ne = 0;
  std::int64_t d;
  std::vector<float> c32, V32;  // the mean, the ne axes (rows)
  std::vector<double> inv;      // 1 / lambda_e
  double cnorm = 0.0, g;

  MahalanobisPretest(const std::vector<double>& cov, const std::vector<double>& mean,
                     std::int64_t d_)
      : d(d_), g(double(d_ + 4) * 5.9604644775390625e-8) {
    if (d > kJacobiMaxDim) return;
    AxesWarmStart warm;
    const Axes all = Axes::of(cov, d, static_cast<int>(d), warm);  // largest first
    const double top = all.values[0], low = all.values[static_cast<std::size_t>(d - 1)];
    if (!(top > 0.0) || !(low > 1e-9 * top)) return;
    ne = static_cast<int>(std::min<std::int64_t>(d, 6));
    for (int e = 0; e < ne; ++e) {  // the tightest first
      const std::int64_t src = d - 1 - e;
      inv.push_back(1.0 / all.values[static_cast<std::size_t>(src)]);
      for (std::int64_t a = 0; a < d; ++a)
        V32.push_back(static_cast<float>(all.vectors[static_cast<std::size_t>(src * d + a)]));
    }
    c32.assign(mean.begin(), mean.end());
    cnorm = std::sqrt(dot(mean.data(), mean.data(), d));
  }

  // lb[l] <= each lane's exact distance (yv: ne x kLanes scratch).
  void block(const StoreFloat* xb, double* yv, double* lb) const {
    alignas(32) double yy[kLanes];
    simd::block_axis_proj(xb, d, c32.data(), V32.data(), ne, yy, yv);
    alignas(32) double err[kLanes];
    for (int l = 0; l < kLanes; ++l) {
      err[l] = 2.0 * g * (std::sqrt(std::max(yy[l], 0.0)) * (1.0 + g) + cnorm);
      lb[l] = 0.0;
    }
    for (int e = 0; e < ne; ++e) {  // lane by lane, vectorized
      const double iv = inv[static_cast<std::size_t>(e)];
      const double* p = yv + e * kLanes;
      for (int l = 0; l < kLanes; ++l) {
        const double a = std::max(std::abs(p[l]) - err[l], 0.0);
        lb[l] += a * a * iv;
      }
    }
    for (int l = 0; l < kLanes; ++l) lb[l] *= 1.0 - 1e-6;
  }
};

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
           (short_.items.size() + short_.mean.size() + short_.L.size()) * 8;
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
  // as long as enough others are left.
  void select_k(std::int64_t* q, int k) override {
    std::vector<double> protos(static_cast<std::size_t>(k * store_->d()));
    sample_mirror(k, protos.data());
    std::int64_t hidden = 0;  // passed over, not shown
    for (std::int64_t i : passed_list_) hidden += shown_[i] ? 0 : 1;
    const bool block = blocked_.size() > 0 && n_unshown() - hidden >= k;
    const ScanInput in{*store_, nullptr, block ? blocked_ : shown_,
                       balanced_chunks(store_->blocks() / 4), threads_};
    nearest_items(in, protos.data(), k, ScanRule::Nearest, {}, q);
  }

  // The m items of highest belief density (lowest Mahalanobis distance to the mean; ties:
  // lower index) neither shown nor passed over nor on q[0..k). From the shortlist of the
  // last full scan when its bound proves it holds them (StripShortlist), else a full scan:
  // threaded, each chunk's best kept in a heap, merged in chunk order (identical for any
  // thread count), which renews the shortlist. Up to kJacobiMaxDim dimensions a pre-test
  // rejects most items in single precision (the belief's tightest axes,
  // MahalanobisPretest); the exact distance decides the others.
  int strip(const std::int64_t* q, int k, int m, std::int64_t* out) const override {
    const std::int64_t n = store_->n(), d = store_->d();
    const std::vector<double> L = cholesky(cov_, d);
    const Cand worst{std::numeric_limits<double>::infinity(),
                     std::numeric_limits<std::int64_t>::max()};
    auto on_screen = [&](std::int64_t i) { return std::find(q, q + k, i) != q + k; };
    const bool usable = StripShortlist::usable(L, d);
    if (usable && short_.valid) {
      const double bound = short_.bound(mean_, L, d);
      std::vector<Cand> top(static_cast<std::size_t>(m), worst);
      std::vector<double> x(static_cast<std::size_t>(d)), t(x.size());
      for (std::int64_t i : short_.items) {
        if (shown_[i] || passed_[i] || on_screen(i)) continue;
        store_->row(i, x.data());
        for (std::int64_t a = 0; a < d; ++a) x[a] -= mean_[a];
        insert_top(top.data(), m, Cand{lower_solve_sq_norm(L, d, x.data(), t.data()), i});
      }
      const Cand& last = top[static_cast<std::size_t>(m - 1)];
      if (std::isinf(bound) || (last.index != worst.index && last.score < bound)) {
        int g = 0;
        for (const Cand& c : top)
          if (c.index != worst.index) out[g++] = c.index;
        return g;
      }
    }
    // Each chunk's r best (r >= m + k: they hold its share of the strip) and its (r + 1)-th.
    const std::int64_t C = balanced_chunks(store_->blocks() / 4);
    const std::int64_t K = StripShortlist::size_for(m, k);
    const std::int64_t r = usable ? std::max<std::int64_t>((K + C - 1) / C, m + k) : m + k;
    double tau = std::numeric_limits<double>::infinity();
    const std::vector<Cand> best = scan_nearest_mean(L, C, r, tau);
    int g = 0;
    for (const Cand& c : best)
      if (g < m && !on_screen(c.index)) out[g++] = c.index;
    short_.renew(usable, best, tau, mean_, L);
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
        short_(other.short_) {}

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
  // of the next eigenvectors.
  void sample_mirror(int k, double* protos) const {
    const std::int64_t d = store_->d();
    const int ne = static_cast<int>(std::min<std::int64_t>((k + 1) / 2, d));
    const Axes axes = Axes::of(cov_, d, ne, warm_);
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
      if (c + 1 < k)
        for (std::int64_t a = 0; a < d; ++a) protos[(c + 1) * d + a] = z[a] - 2.0 * proj * v[a];
    }
  }

  // The r items neither shown nor passed over of the lowest Mahalanobis distance to the
  // mean (L: the belief's Cholesky factor) of each of C chunks of the blocks, all sorted
  // (ties: lower index); tau: the lowest (r + 1)-th best of a chunk (infinity when no chunk
  // has more than r), so every other such item's distance is at least tau. A threaded pass,
  // each chunk's best in a heap, merged in a strict total order (any thread count, the same).
  std::vector<Cand> scan_nearest_mean(const std::vector<double>& L, std::int64_t C,
                                      std::int64_t r, double& tau) const {
    const std::int64_t n = store_->n(), d = store_->d(), nb = store_->blocks();
    const std::int64_t keep = r + 1;
    const MahalanobisPretest pre(cov_, mean_, d);
    std::vector<std::vector<Cand>> heaps(static_cast<std::size_t>(C));
    ParallelErrors errors;
#pragma omp parallel num_threads(threads_) if (nb >= kParallelBlocks)
    {
      std::vector<double> y, yv, x, t;
      errors.run([&] {
        y.resize(static_cast<std::size_t>(d * kLanes));
        yv.resize(static_cast<std::size_t>(std::max(pre.ne, 1) * kLanes));
        x.resize(static_cast<std::size_t>(d));
        t.resize(x.size());
      });
#pragma omp for schedule(static)
      for (std::int64_t ch = 0; ch < C; ++ch) {
        if (errors.failed()) continue;
        errors.run([&] {
          std::vector<Cand>& h = heaps[static_cast<std::size_t>(ch)];
          h.reserve(static_cast<std::size_t>(keep));
          auto bar = [&] {  // the heap's worst while full: no item at or above it enters
            return static_cast<std::int64_t>(h.size()) < keep
                       ? std::numeric_limits<double>::infinity()
                       : h.front().score;
          };
          auto offer = [&](std::int64_t i, double score) {
            const Cand cand{score, i};
            if (shown_[i] || passed_[i]) return;
            if (static_cast<std::int64_t>(h.size()) < keep) {
              h.push_back(cand);
              std::push_heap(h.begin(), h.end(), better);  // front: the worst
            } else if (better(cand, h.front())) {
              std::pop_heap(h.begin(), h.end(), better);
              h.back() = cand;
              std::push_heap(h.begin(), h.end(), better);
            }
          };
          const std::int64_t b1 = chunk_begin(nb, C, ch + 1);
          for (std::int64_t b = chunk_begin(nb, C, ch); b < b1; ++b) {
            const StoreFloat* xb = store_->block(b);
            const std::int64_t lanes = std::min<std::int64_t>(kLanes, n - b * kLanes);
            if (pre.ne > 0) {
              alignas(32) double lb[kLanes];
              pre.block(xb, yv.data(), lb);
              for (std::int64_t l = 0; l < lanes; ++l) {
                if (lb[l] > bar()) continue;  // its distance is above the bar too
                for (std::int64_t a = 0; a < d; ++a)
                  x[a] = static_cast<double>(xb[a * kLanes + l]) - mean_[a];
                offer(b * kLanes + l, lower_solve_sq_norm(L, d, x.data(), t.data()));
              }
              continue;
            }
            alignas(32) double acc[kLanes];
            if (!block_mahalanobis(xb, d, mean_.data(), L.data(), bar(), y.data(), acc)) continue;
            for (std::int64_t l = 0; l < lanes; ++l) offer(b * kLanes + l, acc[l]);
          }
        });
      }
    }
    errors.rethrow();
    std::vector<Cand> all;
    tau = std::numeric_limits<double>::infinity();
    for (auto& h : heaps) {  // chunk order
      std::sort(h.begin(), h.end(), better);
      if (static_cast<std::int64_t>(h.size()) == keep) {
        tau = std::min(tau, h.back().score);
        h.pop_back();
      }
      all.insert(all.end(), h.begin(), h.end());
    }
    std::sort(all.begin(), all.end(), better);
    return all;
  }

  // Block xb's squared Mahalanobis distances to the mean into acc (lower_solve_sq_norm's
  // arithmetic, lane by lane, y: d x kLanes scratch); false, acc unset, when every lane's
  // partial sum already exceeds `bound` (no lane can beat it: the sum only grows).
  static bool block_mahalanobis(const StoreFloat* xb, std::int64_t d, const double* mean,
                                const double* L, double bound, double* y, double* acc) {
    for (int l = 0; l < kLanes; ++l) acc[l] = 0.0;
    for (std::int64_t a = 0; a < d; ++a) {
      double* ya = y + a * kLanes;
      const StoreFloat* xa = xb + a * kLanes;
      for (int l = 0; l < kLanes; ++l) ya[l] = static_cast<double>(xa[l]) - mean[a];
      for (std::int64_t c = 0; c < a; ++c) {
        const double lac = L[a * d + c];
        const double* yc = y + c * kLanes;
        for (int l = 0; l < kLanes; ++l) ya[l] -= lac * yc[l];
      }
      const double laa = L[a * d + a];
      if (laa > 0.0) {
        for (int l = 0; l < kLanes; ++l) ya[l] = ya[l] / laa;
      } else {
        for (int l = 0; l < kLanes; ++l) ya[l] = 0.0;
      }
      double lo = std::numeric_limits<double>::infinity();
      for (int l = 0; l < kLanes; ++l) {
        acc[l] += ya[l] * ya[l];
        lo = std::min(lo, acc[l]);
      }
      if (lo > bound) return false;
    }
    return true;
  }

  std::vector<double> mean_, cov_;
  ShownSet passed_;                        // offered in a strip and passed over
  ShownSet blocked_;                       // miss = 0: shown or passed over (empty otherwise)
  std::vector<std::int64_t> passed_list_;  // passed_'s items, in the order passed over
  double sigma_;                           // the probit noise in the store's frame
  mutable AxesWarmStart warm_;             // the last query's axes, the next one's start
  mutable StripShortlist short_;           // the strip's candidates since the last full scan
};

}  // namespace tripletsearch
