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
// the posterior is over (item, hypothesis): one weight per item and hypothesis h = (gamma
// grid index, lapse index), prior x likelihood, and the item weights are their sums over
// h (in order). One pass updates them all: three square roots per item and shown item (for
// pairs: per item, the closer item's ratio being 1) give the likelihood under every gamma
// of the grid (oracle/user_grid.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "../core/parallel.hpp"
#include "../core/resample.hpp"
#include "../oracle/choice.hpp"
#include "../simd/kernels.hpp"
#include "axes.hpp"
#include "config.hpp"
#include "item_store.hpp"
#include "scan.hpp"

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
        top_m_(std::max(8, cfg.n_choices)),
        power_(cfg.gamma),
        threads_(threads),
        chunks_(balanced_chunks(store_->blocks() / 4)),
        full_(store_->d() <= kJacobiMaxDim),
        track_axes_(!full_ && with_axes),
        w_(static_cast<std::size_t>(store_->blocks() * kLanes), 0.0),
        mean_(static_cast<std::size_t>(store_->d()), 0.0),
        cov_(static_cast<std::size_t>(store_->d() * store_->d()), 0.0),
        nh_(cfg.hypotheses()),
        gamma_auto_(cfg.gamma_auto),
        lapse_auto_(cfg.lapse_auto),
        lapse_(cfg.lapse) {
    if (nh_ > 0) {
      require_allocation(8.0 * double(nh_) * double(wh_stride()), "X");
      init_hypotheses();
    }
    std::fill(w_.begin(), w_.begin() + store_->n(), 1.0 / double(store_->n()));
    if (nh_ > 0) sum_hypotheses();
    if (track_axes_) {
      block_ = warm_.ready(Axes::block_rows(axes_max_, store_->d()), store_->d());
      ritz_values_.assign(static_cast<std::size_t>(axes_max_), 0.0);
      ritz_vectors_.assign(static_cast<std::size_t>(axes_max_ * store_->d()), 0.0);
    }
    pass(nullptr, 0, -1);  // moments around 0
    pass(nullptr, 0, -1);  // around the mean, for accuracy
    if (track_axes_) {     // the prior's axes to convergence; each answer's pass then takes a step
      auto apply = [this](const double* Q, int p, double* out) { apply_cov(Q, p, out); };
      subspace_eigenpairs(apply, store_->d(), axes_max_, block_, ritz_values_.data(),
                          ritz_vectors_.data(), 1e-8, kSubspaceIterations);
    }
  }

  // The user hypotheses (0: a fixed model without lapse) and their posterior: gamma grid
  // and lapse grid marginals (zeros for a fixed one); false without hypotheses.
  int hypotheses() const { return nh_; }
  bool user_posterior(double* gamma_p, double* lapse_p) const {
    if (nh_ == 0 || !(gamma_auto_ || lapse_auto_)) return false;
    std::fill(gamma_p, gamma_p + kGammaGrid, 0.0);
    std::fill(lapse_p, lapse_p + kLapseGrid, 0.0);
    double t = 0.0;
    for (int h = 0; h < nh_; ++h) t += htotal_[static_cast<std::size_t>(h)];
    const int nl = lapse_auto_ ? kLapseGrid : 1;
    for (int h = 0; h < nh_; ++h) {
      const double p = t > 0.0 ? htotal_[static_cast<std::size_t>(h)] / t : 0.0;
      if (gamma_auto_) gamma_p[h / nl] += p;
      if (lapse_auto_) lapse_p[h % nl] += p;
    }
    return true;
  }
  // A hypothesis drawn from P(h | item) with u in [0, 1) (the first whose cumulative
  // weight exceeds u times the item's weight).
  int draw_hypothesis(std::int64_t item, double u) const {
    const std::size_t i = static_cast<std::size_t>(item), stride = wh_stride();
    const double target = u * w_[i];
    double c = 0.0;
    for (int h = 0; h < nh_; ++h) {
      c += wh_[static_cast<std::size_t>(h) * stride + i];
      if (c > target) return h;
    }
    return nh_ - 1;
  }

  std::int64_t chunks() const { return chunks_; }
  const std::vector<double>& mean() const { return mean_; }
  // The covariance; beyond kJacobiMaxDim computed on request (one O(n d^2) pass).
  const std::vector<double>& cov() const {
    if (cov_stale_) full_cov();
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
  double total() const { return total_; }              // sum of the weights
  const double* weights() const { return w_.data(); }  // unnormalized, block-padded
  double weight(std::int64_t i) const { return w_[static_cast<std::size_t>(i)]; }

  // The user saw shown[0..k) and picked shown[choice] (choice < 0: no answer, the shown
  // items are only ruled out). `shown_mask`: every item shown so far (this query included).
  void observe(const std::int64_t* shown, int k, int choice, const std::uint8_t* shown_mask) {
    for (int j = 0; j < k; ++j) {
      w_[static_cast<std::size_t>(shown[j])] = 0.0;
      for (int h = 0; h < nh_; ++h)
        wh_[static_cast<std::size_t>(h) * wh_stride() + static_cast<std::size_t>(shown[j])] = 0.0;
    }
    pass(shown, k, choice);
    if (total_ > 0.0) return;
    // every remaining item was ruled out (e.g. answers inconsistent with coincident
    // items): restart from the prior over the unshown items
    for (std::int64_t i = 0; i < store_->n(); ++i)
      w_[static_cast<std::size_t>(i)] = shown_mask[i] ? 0.0 : 1.0;
    if (nh_ > 0) {
      init_hypotheses();
      for (std::int64_t i = 0; i < store_->n(); ++i)
        if (shown_mask[i])
          for (int h = 0; h < nh_; ++h) wh_[static_cast<std::size_t>(h) * wh_stride() + i] = 0.0;
      sum_hypotheses();
    }
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
  // One pass: w *= P(choice | item) / W_prev (choice < 0: no likelihood), then moments.
  void pass(const std::int64_t* shown, int k, int choice);
  // The hypotheses' block update: wh *= P(choice | item, h) * scale, w = sum_h wh; adds
  // each hypothesis' block mass to hacc. D: the shown items' squared distances (k x kLanes).
  void hypothesis_block(std::int64_t b, const double* D, int k, int choice, double scale,
                        double* hacc);
  // wh = prior_h / n over the items, htotal = 0.
  void init_hypotheses() {
    const std::size_t stride = wh_stride();
    wh_.assign(static_cast<std::size_t>(nh_) * stride, 0.0);
    htotal_.assign(static_cast<std::size_t>(nh_), 0.0);
    std::vector<double> prior(static_cast<std::size_t>(nh_));
    double t = 0.0;
    const int nl = lapse_auto_ ? kLapseGrid : 1;
    for (int h = 0; h < nh_; ++h)
      t += (prior[h] = gamma_auto_ ? std::exp(gamma_log_prior(h / nl)) : 1.0);
    for (int h = 0; h < nh_; ++h)
      std::fill(wh_.begin() + h * stride, wh_.begin() + h * stride + store_->n(),
                prior[h] / t / double(store_->n()));
  }
  // w = sum_h wh, in hypothesis order.
  void sum_hypotheses() {
    const std::size_t stride = wh_stride();
    for (std::int64_t i = 0; i < store_->n(); ++i) {
      double s = 0.0;
      for (int h = 0; h < nh_; ++h) s += wh_[static_cast<std::size_t>(h) * stride + i];
      w_[static_cast<std::size_t>(i)] = s;
    }
  }
  // Returns the first moment around c over the weights (empty when no mass is left).
  std::vector<double> merge_moments(const std::vector<double>& acc, const std::vector<double>& c);
  // The subspace step after a pass: A Q = (sum of the chunks' projections) / W - m1 (m1 . q).
  void subspace_step(const std::vector<double>& proj, const std::vector<double>& m1);
  void full_cov() const;
  void apply_cov(const double* Q, int p, double* out) const;

  std::shared_ptr<const ItemStore> store_;
  int axes_max_;  // principal axes a query can ask for
  int top_m_;     // most probable items each pass keeps (top_, in most_probable's order)
  std::vector<Cand> top_;
  GammaPower power_;
  int threads_;
  std::int64_t chunks_;
  bool full_;              // the pass keeps the covariance (d <= kJacobiMaxDim)
  bool track_axes_;        // beyond: the pass takes a subspace step for the principal axes
  std::vector<double> w_;  // unnormalized posterior, block-padded with zeros
  double total_ = 0.0;     // sum of w_ after the last pass
  std::vector<double> mean_;
  mutable std::vector<double> cov_;
  mutable bool cov_stale_ = false;
  mutable AxesWarmStart warm_;  // the last query's axes, the next one's start
  int nh_;                      // user hypotheses (0: none)
  bool gamma_auto_, lapse_auto_;
  double lapse_;            // the fixed lapse rate
  std::vector<double> wh_;  // nh_ x wh_stride(): weights per hypothesis and item
  // The distance between two hypotheses' weights: the items rounded up to 4 KiB, plus
  // 576 bytes (more than a block's 512, an odd number of cache lines), so that the
  // update's nh_ streams do not share their addresses' low 12 bits within a block (4K
  // aliasing: with a stride of a multiple of 4 KiB -- ceil(n / 64) a multiple of 8 -- the
  // loads of one hypothesis waited on the stores of the previous one; n = 2^20: tell 30
  // -> 24.4 ms on one thread).
  std::size_t wh_stride() const { return (w_.size() + 511) / 512 * 512 + 72; }
  std::vector<double> htotal_;  // each hypothesis' mass after the last pass
  // beyond kJacobiMaxDim: the subspace block (p x d, orthonormal) the next pass applies the
  // covariance to, and the Ritz pairs of the last step (axes_max_ values and vectors)
  std::vector<double> block_, ritz_values_, ritz_vectors_;
};

namespace detail {

// What one block's hypothesis update reads and writes (GammaCKLPosterior::hypothesis_block).
struct HypothesisBlock {
  const GammaPower* power;  // the fixed gamma (gamma_auto false)
  bool gamma_auto, lapse_auto;
  double lapse;  // the fixed lapse rate (lapse_auto false)
  double* wh;    // hypothesis 0's lanes of the block; hypothesis h at wh + h * stride
  std::size_t stride;
  double* w;     // the block's item weights (out: sums over h in order)
  double* hacc;  // the hypotheses' masses (+= the block's)
};

// A block's mass per hypothesis: eight lane-parallel partial sums, added in a fixed order.
constexpr int kMassLanes = 8;
TS_ALWAYS_INLINE double mass_of(const double* part) {
  return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

// The body, compiled for the portable and the AVX2 kernels: every grid power from s^(1/4)
// and s^(3/8) by squarings (user_grid.hpp's grid_power for all g at once), lane-wise so
// that the lanes vectorize.
TS_ALWAYS_INLINE void hypothesis_lanes(const HypothesisBlock& hb, const double* D, int k,
                                       int choice, double scale) {
  const int ng = hb.gamma_auto ? kGammaGrid : 1, nl = hb.lapse_auto ? kLapseGrid : 1;
  double num[kGammaGrid][kLanes], den[kGammaGrid][kLanes], dmin[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    double m = std::max(D[l], kTinyDistance);
    for (int j = 1; j < k; ++j) m = std::min(m, std::max(D[j * kLanes + l], kTinyDistance));
    dmin[l] = m;
  }
  for (int g = 0; g < ng; ++g)
    for (int l = 0; l < kLanes; ++l) den[g][l] = 0.0;
  double even[kLanes], odd[kLanes];
  for (int c = 0; c < k; ++c) {
    for (int l = 0; l < kLanes; ++l) {  // the closest items' ratios are 1 exactly
      const double Dc = std::max(D[c * kLanes + l], kTinyDistance);
      even[l] = Dc == dmin[l] ? 1.0 : dmin[l] * (1.0 / Dc);
    }
    if (!hb.gamma_auto) {
      for (int l = 0; l < kLanes; ++l) {
        const double p = (*hb.power)(even[l]);
        den[0][l] += p;
        if (c == choice) num[0][l] = p;
      }
      continue;
    }
    for (int l = 0; l < kLanes; ++l) {
      const double h = std::sqrt(even[l]);
      even[l] = std::sqrt(h);
      odd[l] = std::sqrt(h * even[l]);
    }
    for (int g = 0; g < kGammaGrid; g += 2) {
      for (int l = 0; l < kLanes; ++l) den[g][l] += even[l];
      if (c == choice)
        for (int l = 0; l < kLanes; ++l) num[g][l] = even[l];
      if (g + 1 < kGammaGrid) {
        for (int l = 0; l < kLanes; ++l) den[g + 1][l] += odd[l];
        if (c == choice)
          for (int l = 0; l < kLanes; ++l) num[g + 1][l] = odd[l];
      }
      for (int l = 0; l < kLanes; ++l) {
        even[l] *= even[l];
        odd[l] *= odd[l];
      }
    }
  }
  for (int l = 0; l < kLanes; ++l) hb.w[l] = 0.0;
  for (int g = 0; g < ng; ++g)
    for (int e = 0; e < nl; ++e) {
      const int h = g * nl + e;
      const double eps = hb.lapse_auto ? kLapseValues[e] : hb.lapse;
      double* __restrict wh = hb.wh + static_cast<std::size_t>(h) * hb.stride;
      double* __restrict w = hb.w;
      for (int l = 0; l < kLanes; ++l) {
        const double p = num[g][l] * (1.0 / den[g][l]);
        wh[l] *= (eps / k + (1.0 - eps) * p) * scale;
        w[l] += wh[l];
      }
      double part[kMassLanes] = {};  // lane-parallel partial masses (a chain of 8, not 64)
      for (int l0 = 0; l0 < kLanes; l0 += kMassLanes)
        for (int q = 0; q < kMassLanes; ++q) part[q] += wh[l0 + q];
      hb.hacc[h] += mass_of(part);
    }
}

inline void hypothesis_lanes_portable(const HypothesisBlock& hb, const double* D, int k, int choice,
                                      double scale) {
  hypothesis_lanes(hb, D, k, choice, scale);
}
#ifdef TS_SIMD_X86
// k = 2 (pairs, the default) with gamma inferred: hypothesis_lanes' arithmetic in AVX2
// intrinsics (the compilers leave the plain loops scalar): the same operations in the same
// order (bit for bit where the compiler fuses the generic body's multiply-add as here).
// The closer item's ratio is 1, so its powers are 1 and only the farther one's,
// rho = Dmin / Dmax, need the three square roots; sixteen lanes at a time, as four
// independent chains of squarings and sums. The masses' partial sums stay in L1, in
// hypothesis_lanes' lane order.
TS_TARGET_AVX2 inline void hypothesis_pair_avx2(const HypothesisBlock& hb, const double* D,
                                                int choice, double scale) {
  constexpr int R = 4;  // groups of four lanes in flight
  const int nl = hb.lapse_auto ? kLapseGrid : 1, nh = kGammaGrid * nl;
  alignas(32) double mass[kGammaGrid * kLapseGrid][kMassLanes];
  for (int h = 0; h < nh; ++h)
    for (int q = 0; q < kMassLanes; ++q) mass[h][q] = 0.0;
  __m256d cfirst[kLapseGrid], cslope[kLapseGrid];  // eps / 2 and 1 - eps per lapse value
  for (int e = 0; e < nl; ++e) {
    const double eps = hb.lapse_auto ? kLapseValues[e] : hb.lapse;
    cfirst[e] = _mm256_set1_pd(eps / 2);
    cslope[e] = _mm256_set1_pd(1.0 - eps);
  }
  const __m256d tiny = _mm256_set1_pd(kTinyDistance), one = _mm256_set1_pd(1.0),
                sc = _mm256_set1_pd(scale);
  for (int l0 = 0; l0 < kLanes; l0 += 4 * R) {
    __m256d even[R], odd[R], closer[R], w[R];
    for (int r = 0; r < R; ++r) {
      const __m256d a = _mm256_max_pd(_mm256_loadu_pd(D + l0 + 4 * r), tiny);
      const __m256d b = _mm256_max_pd(_mm256_loadu_pd(D + kLanes + l0 + 4 * r), tiny);
      const __m256d lo = _mm256_min_pd(a, b), hi = _mm256_max_pd(a, b);
      const __m256d tie = _mm256_cmp_pd(a, b, _CMP_EQ_OQ);  // both ratios 1
      const __m256d rho = _mm256_blendv_pd(_mm256_mul_pd(lo, _mm256_div_pd(one, hi)), one, tie);
      closer[r] = _mm256_or_pd(
          tie, choice == 0 ? _mm256_cmp_pd(a, b, _CMP_LT_OQ) : _mm256_cmp_pd(b, a, _CMP_LT_OQ));
      const __m256d h = _mm256_sqrt_pd(rho);
      even[r] = _mm256_sqrt_pd(h);
      odd[r] = _mm256_sqrt_pd(_mm256_mul_pd(h, even[r]));
      w[r] = _mm256_setzero_pd();
    }
    for (int g = 0; g < kGammaGrid; ++g) {
      const bool is_odd = (g & 1) != 0;
      __m256d p[R];  // P(choice | item, gamma_g) = (1 or rho^g/2) / (1 + rho^g/2)
      for (int r = 0; r < R; ++r) {
        const __m256d pw = is_odd ? odd[r] : even[r];
        p[r] = _mm256_mul_pd(_mm256_blendv_pd(pw, one, closer[r]),
                             _mm256_div_pd(one, _mm256_add_pd(one, pw)));
      }
      for (int e = 0; e < nl; ++e) {
        const int hh = g * nl + e;
        double* wh = hb.wh + static_cast<std::size_t>(hh) * hb.stride + l0;
        for (int r = 0; r < R; ++r) {
          const __m256d f = _mm256_mul_pd(_mm256_fmadd_pd(cslope[e], p[r], cfirst[e]), sc);
          const __m256d v = _mm256_mul_pd(_mm256_loadu_pd(wh + 4 * r), f);
          _mm256_storeu_pd(wh + 4 * r, v);
          w[r] = _mm256_add_pd(w[r], v);
          double* mq = mass[hh] + ((l0 + 4 * r) & (kMassLanes - 1));
          _mm256_store_pd(mq, _mm256_add_pd(_mm256_load_pd(mq), v));
        }
      }
      if (is_odd)
        for (int r = 0; r < R; ++r) {
          even[r] = _mm256_mul_pd(even[r], even[r]);
          odd[r] = _mm256_mul_pd(odd[r], odd[r]);
        }
    }
    for (int r = 0; r < R; ++r) _mm256_storeu_pd(hb.w + l0 + 4 * r, w[r]);
  }
  for (int h = 0; h < nh; ++h) hb.hacc[h] += mass_of(mass[h]);
}

TS_TARGET_AVX2 inline void hypothesis_lanes_avx2(const HypothesisBlock& hb, const double* D, int k,
                                                 int choice, double scale) {
  if (k == 2 && hb.gamma_auto) return hypothesis_pair_avx2(hb, D, choice, scale);
  hypothesis_lanes(hb, D, k, choice, scale);
}
#endif

}  // namespace detail

inline void GammaCKLPosterior::hypothesis_block(std::int64_t b, const double* D, int k, int choice,
                                                double scale, double* hacc) {
  const detail::HypothesisBlock hb{&power_,
                                   gamma_auto_,
                                   lapse_auto_,
                                   lapse_,
                                   wh_.data() + b * kLanes,
                                   wh_stride(),
                                   w_.data() + b * kLanes,
                                   hacc};
#ifdef TS_SIMD_X86
  if (simd::active_isa() == simd::Isa::AVX2)
    return detail::hypothesis_lanes_avx2(hb, D, k, choice, scale);
#endif
  detail::hypothesis_lanes_portable(hb, D, k, choice, scale);
}

inline void GammaCKLPosterior::pass(const std::int64_t* shown, int k, int choice) {
  const std::int64_t nb = store_->blocks(), d = store_->d();
  const std::int64_t msz = full_ ? moment_size(d) : kAccLanes * (1 + d);
  const std::int64_t C = chunks_;
  std::vector<double> acc(static_cast<std::size_t>(C * msz), 0.0);
  std::vector<double> hacc(static_cast<std::size_t>(C * nh_), 0.0);  // hypothesis masses
  const Cand worst{std::numeric_limits<double>::infinity(), -1};
  std::vector<Cand> tops(static_cast<std::size_t>(C * top_m_), worst);          // most probable
  const int p = static_cast<int>(block_.size() / static_cast<std::size_t>(d));  // 0: no axes
  std::vector<double> proj(static_cast<std::size_t>(C * p * d), 0.0);  // covariance x block
  const std::vector<float> Q32(block_.begin(), block_.end()), c32(mean_.begin(), mean_.end());
  std::vector<double> sh(static_cast<std::size_t>(std::max(k, 1) * d));
  for (int j = 0; j < k; ++j) store_->row(shown[j], sh.data() + j * d);
  const std::vector<double> c = mean_;
  const double scale = total_ > 0.0 ? 1.0 / total_ : 1.0;
  ParallelErrors errors;
#pragma omp parallel num_threads(threads_) if (nb >= kParallelBlocks)
  {
    std::vector<double> y, wy, D;
    std::vector<float> y32, s32;
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
    double lik[kLanes];
#pragma omp for schedule(static)
    for (std::int64_t ch = 0; ch < C; ++ch) {
      if (errors.failed()) continue;
      double* a = acc.data() + ch * msz;
      const std::int64_t b1 = chunk_begin(nb, C, ch + 1);
      for (std::int64_t b = chunk_begin(nb, C, ch); b < b1; ++b) {
        const StoreFloat* xb = store_->block(b);
        double* w = w_.data() + b * kLanes;
        if (nh_ > 0) {
          if (choice >= 0) {
            simd::block_sqdist(xb, d, sh.data(), k, D.data());
            hypothesis_block(b, D.data(), k, choice, scale, hacc.data() + ch * nh_);
          } else {
            for (int l = 0; l < kLanes; ++l) w[l] = 0.0;
            for (int h = 0; h < nh_; ++h) {
              double* wh = wh_.data() + static_cast<std::size_t>(h) * wh_stride() + b * kLanes;
              double part[detail::kMassLanes] = {};  // as hypothesis_lanes
              for (int l = 0; l < kLanes; ++l) {
                wh[l] *= scale;
                w[l] += wh[l];
                part[l % detail::kMassLanes] += wh[l];
              }
              hacc[static_cast<std::size_t>(ch * nh_ + h)] += detail::mass_of(part);
            }
          }
        } else if (choice >= 0) {
          simd::block_sqdist(xb, d, sh.data(), k, D.data());
          simd::block_choice_lik(power_, D.data(), k, choice, lik);
          for (int l = 0; l < kLanes; ++l) w[l] *= lik[l] * scale;
        } else if (shown != nullptr || scale != 1.0) {
          for (int l = 0; l < kLanes; ++l) w[l] *= scale;
        }
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
  for (int h = 0; h < nh_; ++h) {  // chunk order
    double s = 0.0;
    for (std::int64_t ch = 0; ch < C; ++ch) s += hacc[static_cast<std::size_t>(ch * nh_ + h)];
    htotal_[static_cast<std::size_t>(h)] = s;
  }
  const std::vector<double> m1 = merge_moments(acc, c);
  if (track_axes_ && !m1.empty()) subspace_step(proj, m1);
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

// Chunk accumulators merged in order, then the lanes in order; moments around c.
inline std::vector<double> GammaCKLPosterior::merge_moments(const std::vector<double>& acc,
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
  if (!(W > 0.0)) return {};  // no mass left: keep the previous moments
  std::vector<double> m1(static_cast<std::size_t>(d));
  for (std::int64_t a = 0; a < d; ++a) m1[a] = lane_sum(kAccLanes * (1 + a)) / W;
  if (!full_) {
    for (std::int64_t a = 0; a < d; ++a) mean_[a] = c[a] + m1[a];
    cov_stale_ = true;
    return m1;
  }
  const std::int64_t moff = kAccLanes * (1 + d);
  for (std::int64_t a = 0; a < d; ++a)
    for (std::int64_t b = a; b < d; ++b) {
      const double* mq = m.data() + moff + (a * d + b) * 4;
      const double v = ((mq[0] + mq[1]) + (mq[2] + mq[3])) / W - m1[a] * m1[b];
      cov_[a * d + b] = cov_[b * d + a] = v;
    }
  for (std::int64_t a = 0; a < d; ++a) mean_[a] = c[a] + m1[a];
  return m1;
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
// per-chunk accumulators merged in chunk order (block_moment1_project: single-precision
// products).
inline void GammaCKLPosterior::apply_cov(const double* Q, int p, double* out) const {
  const std::int64_t nb = store_->blocks(), d = store_->d(), C = chunks_;
  const std::size_t pd = static_cast<std::size_t>(p) * static_cast<std::size_t>(d);
  std::vector<double> acc(static_cast<std::size_t>(C) * pd, 0.0);
  const std::vector<float> Q32(Q, Q + pd), c32(mean_.begin(), mean_.end());
  ParallelErrors errors;
#pragma omp parallel num_threads(threads_) if (nb >= kParallelBlocks)
  {
    std::vector<double> m;  // the first moment: not needed here
    std::vector<float> y32, s32;
    errors.run([&] {
      m.resize(static_cast<std::size_t>(kAccLanes * (1 + d)));
      y32.resize(static_cast<std::size_t>(d * kLanes));
      s32.resize(static_cast<std::size_t>(p * kLanes));
    });
#pragma omp for schedule(static)
    for (std::int64_t ch = 0; ch < C; ++ch) {
      if (errors.failed()) continue;
      double* a_out = acc.data() + static_cast<std::size_t>(ch) * pd;
      for (std::int64_t b = chunk_begin(nb, C, ch); b < chunk_begin(nb, C, ch + 1); ++b)
        simd::block_moment1_project(store_->block(b), w_.data() + b * kLanes, d, mean_.data(),
                                    c32.data(), Q32.data(), p, m.data(), a_out, y32.data(),
                                    s32.data());
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
