// gamma-CKLSearch's posterior over the n items of the store (the paper's appendix): uniform
// prior over the unshown items, Bayes updates with the gamma-CKL choice likelihood
// (oracle/choice.hpp), and the weighted mean and covariance, all in one pass over the
// store per answer. Reductions go through per-chunk accumulators merged in chunk order
// (chunk boundaries depend on n only): identical for any thread count.
//
// Beyond kJacobiMaxDim dimensions the pass keeps the weights and the mean only, and the
// covariance acts as an operator (apply_cov: two products per item with a block of
// vectors, O(n d p)) for the warm-started subspace iteration of the principal axes:
// O(n d) per query where the full covariance costs O(n d^2) and its eigenpairs O(d^3).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "../core/parallel.hpp"
#include "../core/resample.hpp"
#include "../oracle/choice.hpp"
#include "../simd/kernels.hpp"
#include "axes.hpp"
#include "item_store.hpp"
#include "scan.hpp"

namespace tripletsearch {

class GammaCKLPosterior {
 public:
  // Uniform over all items (the prior), with its moments.
  GammaCKLPosterior(std::shared_ptr<const ItemStore> store, double gamma, int threads)
      : store_(std::move(store)),
        power_(gamma),
        threads_(threads),
        chunks_(balanced_chunks(store_->blocks() / 4)),
        full_(store_->d() <= kJacobiMaxDim),
        w_(static_cast<std::size_t>(store_->blocks() * kLanes), 0.0),
        mean_(static_cast<std::size_t>(store_->d()), 0.0),
        cov_(static_cast<std::size_t>(store_->d() * store_->d()), 0.0) {
    std::fill(w_.begin(), w_.begin() + store_->n(), 1.0 / double(store_->n()));
    pass(nullptr, 0, -1);  // moments around 0
    pass(nullptr, 0, -1);  // around the mean, for accuracy
  }

  std::int64_t chunks() const { return chunks_; }
  const std::vector<double>& mean() const { return mean_; }
  // The covariance; beyond kJacobiMaxDim computed on request (one O(n d^2) pass).
  const std::vector<double>& cov() const {
    if (cov_stale_) full_cov();
    return cov_;
  }
  // The top `count` principal axes (eigenpairs of the covariance).
  Axes axes(int count) const {
    if (full_) return Axes::of(cov_, store_->d(), count, warm_);
    auto apply = [this](const double* Q, int p, double* out) { apply_cov(Q, p, out); };
    return Axes::of_operator(apply, store_->d(), count, warm_);
  }
  double total() const { return total_; }              // sum of the weights
  const double* weights() const { return w_.data(); }  // unnormalized, block-padded
  double weight(std::int64_t i) const { return w_[static_cast<std::size_t>(i)]; }

  // The user saw shown[0..k) and picked shown[choice] (choice < 0: no answer, the shown
  // items are only ruled out). `shown_mask`: every item shown so far (this query included).
  void observe(const std::int64_t* shown, int k, int choice, const std::uint8_t* shown_mask) {
    for (int j = 0; j < k; ++j) w_[static_cast<std::size_t>(shown[j])] = 0.0;
    pass(shown, k, choice);
    if (total_ > 0.0) return;
    // every remaining item was ruled out (e.g. answers inconsistent with coincident
    // items): restart from the uniform prior over the unshown items
    for (std::int64_t i = 0; i < store_->n(); ++i)
      w_[static_cast<std::size_t>(i)] = shown_mask[i] ? 0.0 : 1.0;
    total_ = 0.0;
    pass(nullptr, 0, -1);
  }

  // Probability of each item being the target (shown items: 0).
  void posterior(double* out) const {
    const std::int64_t n = store_->n();
    double total = 0.0;
    for (std::int64_t i = 0; i < n; ++i) total += w_[static_cast<std::size_t>(i)];
    for (std::int64_t i = 0; i < n; ++i)
      out[i] = total > 0.0 ? w_[static_cast<std::size_t>(i)] / total : 0.0;
  }

  // The m items of highest weight (ties: lower index), positive weights only.
  std::vector<std::int64_t> most_probable(int m) const {
    std::vector<Cand> best(static_cast<std::size_t>(m),
                           Cand{std::numeric_limits<double>::infinity(), -1});
    for (std::int64_t i = 0; i < store_->n(); ++i) {
      const double w = w_[static_cast<std::size_t>(i)];
      if (w > 0.0) insert_top(best.data(), m, Cand{-w, i});
    }
    std::vector<std::int64_t> out;
    for (const Cand& c : best)
      if (c.index >= 0) out.push_back(c.index);
    return out;
  }

  // `count` items drawn from the posterior by systematic resampling with offset u0.
  std::vector<std::int64_t> sample(int count, double u0) const {
    std::vector<std::int64_t> out(static_cast<std::size_t>(count));
    systematic_resample(w_.data(), store_->n(), total_, count, u0, out.data());
    return out;
  }

 private:
  // One pass: w *= P(choice | item) / W_prev (choice < 0: no likelihood), then moments.
  void pass(const std::int64_t* shown, int k, int choice);
  void merge_moments(const std::vector<double>& acc, const std::vector<double>& c);
  void full_cov() const;
  void apply_cov(const double* Q, int p, double* out) const;

  std::shared_ptr<const ItemStore> store_;
  GammaPower power_;
  int threads_;
  std::int64_t chunks_;
  bool full_;              // the pass keeps the covariance (d <= kJacobiMaxDim)
  std::vector<double> w_;  // unnormalized posterior, block-padded with zeros
  double total_ = 0.0;     // sum of w_ after the last pass
  std::vector<double> mean_;
  mutable std::vector<double> cov_;
  mutable bool cov_stale_ = false;
  mutable AxesWarmStart warm_;  // the last query's axes, the next one's start
};

inline void GammaCKLPosterior::pass(const std::int64_t* shown, int k, int choice) {
  const std::int64_t nb = store_->blocks(), d = store_->d();
  const std::int64_t msz = full_ ? moment_size(d) : kAccLanes * (1 + d);
  const std::int64_t C = chunks_;
  std::vector<double> acc(static_cast<std::size_t>(C * msz), 0.0);
  std::vector<double> sh(static_cast<std::size_t>(std::max(k, 1) * d));
  for (int j = 0; j < k; ++j) store_->row(shown[j], sh.data() + j * d);
  const std::vector<double> c = mean_;
  const double scale = total_ > 0.0 ? 1.0 / total_ : 1.0;
  ParallelErrors errors;
#pragma omp parallel num_threads(threads_) if (nb >= kParallelBlocks)
  {
    std::vector<double> y, wy, D;
    errors.run([&] {
      y.resize(static_cast<std::size_t>(d * kLanes));
      wy.resize(y.size());
      D.resize(static_cast<std::size_t>(std::max(k, 1) * kLanes));
    });
    double lik[kLanes];
#pragma omp for schedule(static)
    for (std::int64_t ch = 0; ch < C; ++ch) {
      if (errors.failed()) continue;
      double* a = acc.data() + ch * msz;
      const std::int64_t b1 = chunk_begin(nb, C, ch + 1);
      for (std::int64_t b = chunk_begin(nb, C, ch); b < b1; ++b) {
        const StoreFloat* xb = store_->block(b);
        double* w = w_.data() + b * kLanes;
        if (choice >= 0) {
          simd::block_sqdist(xb, d, sh.data(), k, D.data());
          simd::block_choice_lik(power_, D.data(), k, choice, lik);
          for (int l = 0; l < kLanes; ++l) w[l] *= lik[l] * scale;
        } else if (shown != nullptr || scale != 1.0) {
          for (int l = 0; l < kLanes; ++l) w[l] *= scale;
        }
        if (full_)
          simd::block_moments(xb, w, d, c.data(), a, y.data(), wy.data());
        else
          simd::portable::moments_prep(xb, w, d, c.data(), a, y.data(), wy.data());
      }
    }
  }
  errors.rethrow();
  merge_moments(acc, c);
}

// Chunk accumulators merged in order, then the lanes in order; moments around c.
inline void GammaCKLPosterior::merge_moments(const std::vector<double>& acc,
                                             const std::vector<double>& c) {
  const std::int64_t d = store_->d(), msz = acc.size() / static_cast<std::size_t>(chunks_);
  std::vector<double> m(static_cast<std::size_t>(msz), 0.0);
  for (std::int64_t ch = 0; ch < chunks_; ++ch)
    for (std::int64_t t = 0; t < msz; ++t)
      m[static_cast<std::size_t>(t)] += acc[static_cast<std::size_t>(ch * msz + t)];
  auto lane_sum = [&](std::int64_t off) {
    double s = 0.0;
    for (int q = 0; q < kAccLanes; ++q) s += m[static_cast<std::size_t>(off + q)];
    return s;
  };
  const double W = lane_sum(0);
  total_ = W;
  if (!(W > 0.0)) return;  // no mass left: keep the previous moments
  std::vector<double> m1(static_cast<std::size_t>(d));
  for (std::int64_t a = 0; a < d; ++a) m1[a] = lane_sum(kAccLanes * (1 + a)) / W;
  if (!full_) {
    for (std::int64_t a = 0; a < d; ++a) mean_[a] = c[a] + m1[a];
    cov_stale_ = true;
    return;
  }
  const std::int64_t moff = kAccLanes * (1 + d);
  for (std::int64_t a = 0; a < d; ++a)
    for (std::int64_t b = a; b < d; ++b) {
      const double* mq = m.data() + moff + (a * d + b) * 4;
      const double v = ((mq[0] + mq[1]) + (mq[2] + mq[3])) / W - m1[a] * m1[b];
      cov_[a * d + b] = cov_[b * d + a] = v;
    }
  for (std::int64_t a = 0; a < d; ++a) mean_[a] = c[a] + m1[a];
}

// The covariance by one serial pass with the full moment kernel (on request, beyond
// kJacobiMaxDim: one accumulator of O(d^2)).
inline void GammaCKLPosterior::full_cov() const {
  const std::int64_t d = store_->d();
  std::vector<double> acc(static_cast<std::size_t>(moment_size(d)), 0.0);
  std::vector<double> y(static_cast<std::size_t>(d * kLanes)), wy(y.size());
  for (std::int64_t b = 0; b < store_->blocks(); ++b)
    simd::block_moments(store_->block(b), w_.data() + b * kLanes, d, mean_.data(), acc.data(),
                        y.data(), wy.data());
  double W = 0.0;
  for (int q = 0; q < kAccLanes; ++q) W += acc[static_cast<std::size_t>(q)];
  const double* M = acc.data() + kAccLanes * (1 + d);
  for (std::int64_t a = 0; a < d; ++a)
    for (std::int64_t b = a; b < d; ++b) {
      const double* mq = M + (a * d + b) * 4;
      cov_[a * d + b] = cov_[b * d + a] = W > 0.0 ? ((mq[0] + mq[1]) + (mq[2] + mq[3])) / W : 0.0;
    }
  cov_stale_ = false;
}

// out = C Q for the p rows of Q (p x d): sum_i w_i y_i (y_i . q_j) / W, y_i = x_i - mean,
// per-chunk accumulators merged in chunk order.
inline void GammaCKLPosterior::apply_cov(const double* Q, int p, double* out) const {
  const std::int64_t nb = store_->blocks(), d = store_->d(), C = chunks_;
  const std::size_t pd = static_cast<std::size_t>(p) * static_cast<std::size_t>(d);
  std::vector<double> acc(static_cast<std::size_t>(C) * pd, 0.0);
  ParallelErrors errors;
#pragma omp parallel num_threads(threads_) if (nb >= kParallelBlocks)
  {
    std::vector<double> y, s;
    errors.run([&] {
      y.resize(static_cast<std::size_t>(d * kLanes));
      s.resize(static_cast<std::size_t>(p * kLanes));
    });
#pragma omp for schedule(static)
    for (std::int64_t ch = 0; ch < C; ++ch) {
      if (errors.failed()) continue;
      double* a_out = acc.data() + static_cast<std::size_t>(ch) * pd;
      for (std::int64_t b = chunk_begin(nb, C, ch); b < chunk_begin(nb, C, ch + 1); ++b)
        simd::portable::block_cov_apply(store_->block(b), w_.data() + b * kLanes, d, mean_.data(),
                                        Q, p, a_out, y.data(), s.data());
    }
  }
  errors.rethrow();
  std::fill(out, out + pd, 0.0);
  for (std::int64_t ch = 0; ch < C; ++ch)
    for (std::size_t k = 0; k < pd; ++k) out[k] += acc[static_cast<std::size_t>(ch) * pd + k];
  const double inv = total_ > 0.0 ? 1.0 / total_ : 0.0;
  for (std::size_t k = 0; k < pd; ++k) out[k] *= inv;
}

}  // namespace tripletsearch
