// gamma-CKLSearch's posterior over the n items of the store (the paper's appendix): uniform
// prior over the unshown items, Bayes updates with the gamma-CKL choice likelihood
// (oracle/choice.hpp), and the weighted mean and covariance, all in one pass over the
// store per answer. Reductions go through per-chunk accumulators merged in chunk order
// (chunk boundaries depend on n only): identical for any thread count.
//
// Beyond kJacobiMaxDim dimensions the pass keeps the weights and the mean, and applies the
// covariance to a block of p vectors on the way (two products per item and vector): one
// step of subspace iteration per answer, with Rayleigh-Ritz, gives the principal axes
// (ritz_step in core/linalg.hpp) in the same pass over the store -- O(n d p) per query
// where the full covariance costs O(n d^2) and its eigenpairs O(d^3). The block carries
// over from query to query (the posterior changes a little per answer); the constructor
// iterates it to convergence on the prior (apply_cov: a pass per iteration, once).
//
// With a lapse rate, or gamma and/or the lapse rate inferred (SearchConfig::hypotheses),
// the posterior is over (item, hypothesis) (hypotheses.hpp): the same pass updates the
// weights of every hypothesis, three square roots per item and shown item (for pairs: per
// item, the closer item's ratio being 1) giving the likelihood under every gamma of the
// grid (oracle/user_grid.hpp, simd/hypotheses.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "../core/parallel.hpp"
#include "../core/resample.hpp"
#include "../oracle/choice.hpp"
#include "../simd/kernels.hpp"
#include "axes.hpp"
#include "config.hpp"
#include "hypotheses.hpp"
#include "item_store.hpp"
#include "moments.hpp"
#include "scan.hpp"
#include "weights.hpp"

namespace tripletsearch {

// Beyond kJacobiMaxDim: a Ritz residual (relative to the top value) above which an answer's
// subspace step is followed by iterations to convergence.
constexpr double kRitzRefresh = 0.25;

class GammaCKLPosterior {
 public:
  // Uniform over all items (the prior), with its moments (and beyond kJacobiMaxDim its
  // principal axes, unless `with_axes` is false: moments only).
  GammaCKLPosterior(std::shared_ptr<const ItemStore> store, const SearchConfig& cfg, int threads,
                    bool with_axes = true)
      : store_(std::move(store)),
        axes_max_(static_cast<int>(  // InfoGainSelector::axes_for beyond kJacobiMaxDim
            std::min<std::int64_t>(store_->d(), std::max(3, (cfg.n_choices + 1) / 2)))),
        top_m_(std::max(8, cfg.n_choices + cfg.guesses)),
        miss_(cfg.miss),
        miss_auto_(cfg.miss_auto),
        power_(cfg.gamma),
        threads_(threads),
        chunks_(balanced_chunks(store_->blocks() / 4)),
        full_(store_->d() <= kJacobiMaxDim),
        track_axes_(!full_ && with_axes),
        w_(static_cast<std::size_t>(store_->blocks() * kLanes), Weight(0)),
        mean_(static_cast<std::size_t>(store_->d()), 0.0),
        cov_(static_cast<std::size_t>(store_->d() * store_->d()), 0.0),
        hyp_(cfg, power_, store_->n(), w_.size()) {
    if (hyp_.count() > 0)
      hyp_.reset(nullptr, w_.data());
    else
      std::fill(w_.begin(), w_.begin() + store_->n(),
                to_weight(kWeightTotal / double(store_->n())));
    if (track_axes_) {
      block_ = warm_.ready(Axes::block_rows(axes_max_, store_->d()), store_->d());
      ritz_values_.assign(static_cast<std::size_t>(axes_max_), 0.0);
      ritz_vectors_.assign(static_cast<std::size_t>(axes_max_ * store_->d()), 0.0);
    }
    pass_rescale();     // moments around 0
    pass_rescale();     // around the mean, for accuracy
    if (track_axes_) {  // the prior's axes to convergence; each answer's pass then takes a step
      auto apply = [this](const double* Q, int p, double* out) { apply_cov(Q, p, out); };
      subspace_eigenpairs(apply, store_->d(), axes_max_, block_, ritz_values_.data(),
                          ritz_vectors_.data(), 1e-8, kSubspaceIterations);
    }
  }

  // The user hypotheses (0: a fixed model without lapse) and their posterior: gamma grid
  // and lapse grid marginals (zeros for a fixed one); false without hypotheses.
  int hypotheses() const { return hyp_.count(); }
  bool user_posterior(double* gamma_p, double* lapse_p) const {
    return hyp_.marginals(gamma_p, lapse_p);
  }
  // A hypothesis drawn from P(h | item) with u in [0, 1) (the first whose cumulative
  // weight exceeds u times the item's weight).
  int draw_hypothesis(std::int64_t item, double u) const {
    return hyp_.draw(item, u, static_cast<double>(w_[static_cast<std::size_t>(item)]));
  }

  std::int64_t chunks() const { return chunks_; }
  const std::vector<double>& mean() const { return mean_; }
  // The covariance; beyond kJacobiMaxDim computed on request (one O(n d^2) pass).
  const std::vector<double>& cov() const {
    if (cov_stale_) {
      weighted_cov(*store_, w_.data(), mean_.data(), cov_.data());
      cov_stale_ = false;
    }
    return cov_;
  }
  // The top `count` principal axes (eigenpairs of the covariance): beyond kJacobiMaxDim
  // the Ritz pairs of the last pass's step (count <= the axes the config can ask for).
  Axes axes(int count) const {
    if (full_) return Axes::of(cov_, store_->d(), count, warm_);
    if (track_axes_ && count <= axes_max_) {
      Axes axes(count, store_->d());
      std::copy(ritz_values_.begin(), ritz_values_.begin() + count, axes.values.begin());
      std::copy(ritz_vectors_.begin(), ritz_vectors_.begin() + count * store_->d(),
                axes.vectors.begin());
      return axes;
    }
    auto apply = [this](const double* Q, int p, double* out) { apply_cov(Q, p, out); };
    return Axes::of_operator(apply, store_->d(), count, warm_);
  }
  // The bytes of the state: weights (and the hypotheses'), moments, axes.
  std::size_t state_bytes() const {
    return w_.size() * sizeof(Weight) + hyp_.state_bytes() +
           (mean_.size() + cov_.size() + block_.size() + ritz_values_.size() +
            ritz_vectors_.size()) *
               sizeof(double) +
           top_.size() * sizeof(Cand) + passes_.size() * 2 * sizeof(std::int64_t);
  }
  double total() const { return total_; }              // sum of the weights
  const Weight* weights() const { return w_.data(); }  // unnormalized, block-padded
  double weight(std::int64_t i) const {
    return static_cast<double>(w_[static_cast<std::size_t>(i)]);
  }

  // The user saw shown[0..k) and picked shown[choice] (a position, 0..k-1), and passed
  // over the strip offered[0..g) (pass_over). `shown_mask`: every item shown so far (this
  // query included).
  void observe(const std::int64_t* shown, int k, int choice, const ShownSet& shown_mask,
               const std::int64_t* offered = nullptr, int g = 0) {
    rule_out_shown(shown, k);
    pass_over(offered, g);
    pass_answer(shown, k, choice);
    restart_if_empty(shown_mask);
  }
  // The user saw shown[0..k) and gave no answer: the shown items are only ruled out (and
  // the strip offered[0..g) passed over).
  void observe_unanswered(const std::int64_t* shown, int k, const ShownSet& shown_mask,
                          const std::int64_t* offered = nullptr, int g = 0) {
    rule_out_shown(shown, k);
    pass_over(offered, g);
    pass_rescale();
    restart_if_empty(shown_mask);
  }
  // How often each item was offered in a strip and passed over (since the last restart).
  std::int64_t passed_over(std::int64_t i) const {
    const auto it = passes_.find(i);
    return it == passes_.end() ? 0 : it->second;
  }

  // Probability of each item being the target (shown items: 0).
  void posterior(double* out) const {
    const std::int64_t n = store_->n();
    double total = 0.0;
    for (std::int64_t i = 0; i < n; ++i)
      total += static_cast<double>(w_[static_cast<std::size_t>(i)]);
    for (std::int64_t i = 0; i < n; ++i)
      out[i] = total > 0.0 ? static_cast<double>(w_[static_cast<std::size_t>(i)]) / total : 0.0;
  }

  // The m items of highest weight (ties: lower index), positive weights only, as the last
  // pass kept them on the way (m <= max(8, n_choices)).
  int top_count() const { return top_m_; }
  std::vector<std::int64_t> most_probable(int m) const {
    if (m > top_m_) throw std::logic_error("most_probable: the pass keeps fewer items");
    std::vector<std::int64_t> out;
    for (int t = 0; t < m; ++t)
      if (top_[static_cast<std::size_t>(t)].index >= 0)
        out.push_back(top_[static_cast<std::size_t>(t)].index);
    return out;
  }

  // `count` items drawn from the posterior by systematic resampling with offset u0.
  std::vector<std::int64_t> sample(int count, double u0) const {
    std::vector<std::int64_t> out(static_cast<std::size_t>(count));
    systematic_resample(w_.data(), store_->n(), total_, count, u0, out.data());
    return out;
  }

 private:
  void rule_out_shown(const std::int64_t* shown, int k) {
    for (int j = 0; j < k; ++j) {
      w_[static_cast<std::size_t>(shown[j])] = Weight(0);
      hyp_.rule_out(shown[j]);
    }
  }
  // The strip offered[0..g) passed over: P(no click | target i) is the miss rate for an
  // offered i and 1 for any other, so each offered item's weight (under every hypothesis)
  // is multiplied by `miss` (0: ruled out), or with miss_auto by E[miss^(c+1)] / E[miss^c]
  // over the miss grid (c: its earlier pass-overs): the miss rate marginalized, exactly.
  // Rounded to single precision as stored; the answer's pass then renormalizes.
  void pass_over(const std::int64_t* offered, int g) {
    for (int j = 0; j < g; ++j) {
      double r = miss_;
      if (miss_auto_) {
        const std::int64_t c = passes_[offered[j]]++;
        r = miss_marginal(c + 1) / miss_marginal(c);
      }
      auto& w = w_[static_cast<std::size_t>(offered[j])];
      w = to_weight(static_cast<double>(w) * r);
      hyp_.scale_item(offered[j], r);
    }
  }
  // Every remaining item ruled out (e.g. answers inconsistent with coincident items):
  // restart from the prior over the unshown items (the pass-overs forgotten too).
  void restart_if_empty(const ShownSet& shown_mask) {
    if (total_ > 0.0) return;
    passes_.clear();
    const Weight prior = to_weight(kWeightTotal / double(store_->n()));
    for (std::int64_t i = 0; i < store_->n(); ++i)
      w_[static_cast<std::size_t>(i)] = shown_mask[i] ? Weight(0) : prior;
    if (hyp_.count() > 0) hyp_.reset(&shown_mask, w_.data());
    total_ = 0.0;
    pass_rescale();
  }
  // The passes over the store: the weights updated, then the most probable items and the
  // moments (and beyond kJacobiMaxDim a subspace step), all on the way.
  // w *= kWeightTotal / W_prev (no likelihood: the prior's moments, a restart, an
  // unanswered query; W_prev = 0: w unchanged).
  void pass_rescale();
  // w *= P(choice | item) kWeightTotal / W_prev for the answer shown[choice] of shown[0..k).
  void pass_answer(const std::int64_t* shown, int k, int choice);
  // The pass both run: update(b, w, D, hacc) updates block b's weights w, read in double
  // precision (D: k x kLanes scratch; hacc: the chunk's hypothesis masses), which the pass
  // then stores rounded (weights.hpp).
  template <class BlockUpdate>
  void pass(int k, BlockUpdate&& update);
  // The subspace step after a pass: A Q = (sum of the chunks' projections) / W - m1 (m1 . q).
  void subspace_step(const std::vector<double>& proj, const std::vector<double>& m1);
  // out = the covariance applied to the p rows of Q (p x d).
  void apply_cov(const double* Q, int p, double* out) const {
    apply_weighted_cov(*store_, w_.data(), mean_.data(), total_, chunks_, threads_, Q, p, out);
  }

  std::shared_ptr<const ItemStore> store_;
  int axes_max_;  // principal axes a query can ask for
  int top_m_;     // most probable items each pass keeps (top_, in most_probable's order)
  double miss_;   // the person's miss rate of the strip (fixed)
  bool miss_auto_;
  std::unordered_map<std::int64_t, std::int64_t> passes_;  // miss_auto: pass-overs per item
  std::vector<Cand> top_;
  GammaPower power_;
  int threads_;
  std::int64_t chunks_;
  bool full_;              // the pass keeps the covariance (d <= kJacobiMaxDim)
  bool track_axes_;        // beyond: the pass takes a subspace step for the principal axes
  std::vector<Weight> w_;  // unnormalized posterior, block-padded with zeros (weights.hpp)
  double total_ = 0.0;     // sum of w_ after the last pass
  std::vector<double> mean_;
  mutable std::vector<double> cov_;
  mutable bool cov_stale_ = false;
  mutable AxesWarmStart warm_;  // the last query's axes, the next one's start
  HypothesisWeights hyp_;       // the user hypotheses' weights (count() 0: none)
  // beyond kJacobiMaxDim: the subspace block (p x d, orthonormal) the next pass applies the
  // covariance to, and the Ritz pairs of the last step (axes_max_ values and vectors)
  std::vector<double> block_, ritz_values_, ritz_vectors_;
};

inline void GammaCKLPosterior::pass_rescale() {
  const double scale = total_ > 0.0 ? kWeightTotal / total_ : 1.0;
  pass(0, [&](std::int64_t b, double* w, double*, double* hacc) {
    if (hyp_.count() > 0) {
      hyp_.rescale_block(b, scale, w, hacc);
    } else if (scale != 1.0) {
      for (int l = 0; l < kLanes; ++l) w[l] *= scale;
    }
  });
}

inline void GammaCKLPosterior::pass_answer(const std::int64_t* shown, int k, int choice) {
  const std::int64_t d = store_->d();
  std::vector<double> sh(static_cast<std::size_t>(k * d));  // the shown items
  for (int j = 0; j < k; ++j) store_->row(shown[j], sh.data() + j * d);
  const double scale = total_ > 0.0 ? kWeightTotal / total_ : 1.0;
  pass(k, [&](std::int64_t b, double* w, double* D, double* hacc) {
    simd::block_sqdist(store_->block(b), d, sh.data(), k, D);
    if (hyp_.count() > 0) {
      hyp_.update_block(b, D, k, choice, scale, w, hacc);
    } else {
      double lik[kLanes];
      simd::block_choice_lik(power_, D, k, choice, lik);
      for (int l = 0; l < kLanes; ++l) w[l] *= lik[l] * scale;
    }
  });
}

template <class BlockUpdate>
void GammaCKLPosterior::pass(int k, BlockUpdate&& update) {
  const std::int64_t nb = store_->blocks(), d = store_->d(), nh = hyp_.count();
  const std::int64_t msz = full_ ? moment_size(d) : kAccLanes * (1 + d);
  const std::int64_t C = chunks_;
  std::vector<double> acc(static_cast<std::size_t>(C * msz), 0.0);
  std::vector<double> hacc(static_cast<std::size_t>(C * nh), 0.0);  // hypothesis masses
  const Cand worst{std::numeric_limits<double>::infinity(), -1};
  std::vector<Cand> tops(static_cast<std::size_t>(C * top_m_), worst);          // most probable
  const int p = static_cast<int>(block_.size() / static_cast<std::size_t>(d));  // 0: no axes
  std::vector<double> proj(static_cast<std::size_t>(C * p * d), 0.0);  // covariance x block
  const std::vector<float> Q32(block_.begin(), block_.end()), c32(mean_.begin(), mean_.end());
  const std::vector<double> c = mean_;
  ParallelErrors errors;
#pragma omp parallel num_threads(threads_) if (nb >= kParallelBlocks)
  {
    std::vector<double> y, wy, D;
    std::vector<float> y32, s32;
    alignas(32) double w[kLanes];
    errors.run([&] {
      D.resize(static_cast<std::size_t>(std::max(k, 1) * kLanes));
      if (full_) {
        y.resize(static_cast<std::size_t>(d * kLanes));
        wy.resize(y.size());
      } else {
        y32.resize(static_cast<std::size_t>(d * kLanes));
        s32.resize(static_cast<std::size_t>(p * kLanes));
      }
    });
#pragma omp for schedule(static)
    for (std::int64_t ch = 0; ch < C; ++ch) {
      if (errors.failed()) continue;
      double* a = acc.data() + ch * msz;
      const std::int64_t b1 = chunk_begin(nb, C, ch + 1);
      for (std::int64_t b = chunk_begin(nb, C, ch); b < b1; ++b) {
        const StoreFloat* xb = store_->block(b);
        Weight* wb = w_.data() + b * kLanes;
        load_weights(wb, w);
        update(b, w, D.data(), hacc.data() + ch * nh);
        store_weights(w, wb);
        keep_top(w, b * kLanes, tops.data() + ch * top_m_, top_m_);
        if (full_) {
          simd::block_moments(xb, w, d, c.data(), a, y.data(), wy.data());
        } else {
          simd::block_moment1_project(xb, w, d, c.data(), c32.data(), Q32.data(), p, a,
                                      proj.data() + ch * p * d, y32.data(), s32.data());
        }
      }
    }
  }
  errors.rethrow();
  top_.assign(static_cast<std::size_t>(top_m_), worst);
  for (const Cand& t : tops)  // chunk order
    if (t.index >= 0) insert_top(top_.data(), top_m_, t);
  hyp_.merge_masses(hacc, C);
  std::vector<double> m1;  // the first moment around c (empty when no mass is left)
  total_ = merge_moments(acc, C, d, full_, m1, cov_);
  if (m1.empty()) return;  // keep the previous moments
  for (std::int64_t a = 0; a < d; ++a) mean_[a] = c[a] + m1[a];
  cov_stale_ = !full_;
  if (track_axes_) subspace_step(proj, m1);
}

inline void GammaCKLPosterior::subspace_step(const std::vector<double>& proj,
                                             const std::vector<double>& m1) {
  const std::int64_t d = store_->d();
  const std::size_t pd = block_.size();
  const int p = static_cast<int>(pd / static_cast<std::size_t>(d));
  std::vector<double> Z(pd, 0.0);
  for (std::int64_t ch = 0; ch < chunks_; ++ch)  // chunk order
    for (std::size_t t = 0; t < pd; ++t) Z[t] += proj[static_cast<std::size_t>(ch) * pd + t];
  const double inv = 1.0 / total_;
  for (int j = 0; j < p; ++j) {
    const double mq = dot(m1.data(), block_.data() + j * d, d);
    for (std::int64_t a = 0; a < d; ++a) Z[j * d + a] = Z[j * d + a] * inv - m1[a] * mq;
  }
  const double residual =
      ritz_step(block_, Z, d, axes_max_, ritz_values_.data(), ritz_vectors_.data());
  if (!(residual > kRitzRefresh)) return;
  // a surprising answer moved the axes more than one step follows: iterate (a pass each)
  auto apply = [this](const double* Q, int q, double* out) { apply_cov(Q, q, out); };
  subspace_eigenpairs(apply, d, axes_max_, block_, ritz_values_.data(), ritz_vectors_.data(),
                      kRitzRefresh / 10, kSubspaceIterations);
}

}  // namespace tripletsearch
