// The user hypotheses of gamma-CKLSearch (SearchConfig::hypotheses): with a lapse rate, or
// gamma and/or the lapse rate inferred, the posterior is over (item, hypothesis), one
// weight per item and hypothesis h = (gamma grid index, lapse index), prior x likelihood
// (oracle/user_grid.hpp's grids and prior); the item weights are their sums over h, in
// order. GammaCKLPosterior's pass updates them a block of the store at a time, by
// simd/hypotheses.hpp's kernel, and merges each hypothesis' mass in chunk order.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../core/errors.hpp"
#include "../oracle/choice.hpp"
#include "../oracle/user_grid.hpp"
#include "../simd/block.hpp"
#include "../simd/hypotheses.hpp"
#include "config.hpp"
#include "weights.hpp"

namespace tripletsearch {

class HypothesisWeights {
 public:
  // cfg's hypotheses (none: count() == 0, nothing stored) over n items, `padded` weights
  // per hypothesis in use (the store's blocks x kLanes); `power`: the fixed gamma.
  HypothesisWeights(const SearchConfig& cfg, const GammaPower& power, std::int64_t n,
                    std::size_t padded)
      : nh_(cfg.hypotheses()),
        gamma_auto_(cfg.gamma_auto),
        lapse_auto_(cfg.lapse_auto),
        lapse_(cfg.lapse),
        power_(power),
        n_(n),
        padded_(padded) {
    if (nh_ > 0) require_allocation(double(sizeof(Weight)) * double(nh_) * double(stride()), "X");
  }

  int count() const { return nh_; }
  std::size_t state_bytes() const {
    return wh_.size() * sizeof(Weight) + htotal_.size() * sizeof(double);
  }

  // The prior: wh = kWeightTotal prior_h / n for every item, 0 for the excluded ones
  // (excluded[i]; nullptr: none), and w = the sums over h for the n items.
  void reset(const ShownSet* excluded, Weight* w) {
    const std::size_t stride = this->stride();
    wh_.assign(static_cast<std::size_t>(nh_) * stride, Weight(0));
    htotal_.assign(static_cast<std::size_t>(nh_), 0.0);
    std::vector<double> prior(static_cast<std::size_t>(nh_));
    double t = 0.0;
    const int nl = lapse_auto_ ? kLapseGrid : 1;
    for (int h = 0; h < nh_; ++h)
      t += (prior[h] = gamma_auto_ ? std::exp(gamma_log_prior(h / nl)) : 1.0);
    std::vector<double> value(static_cast<std::size_t>(nh_));
    double sum = 0.0;  // every kept item's w
    for (int h = 0; h < nh_; ++h) {
      const Weight v = to_weight(kWeightTotal * (prior[h] / t / double(n_)));
      std::fill(wh_.begin() + h * stride, wh_.begin() + h * stride + n_, v);
      sum += static_cast<double>(v);
    }
    const Weight kept = to_weight(sum);
    for (std::int64_t i = 0; i < n_; ++i) {
      const bool out = excluded != nullptr && (*excluded)[i];
      if (out)
        for (int h = 0; h < nh_; ++h) wh_[static_cast<std::size_t>(h) * stride + i] = Weight(0);
      w[i] = out ? Weight(0) : kept;
    }
  }

  // An item shown: its weight is 0 under every hypothesis.
  void rule_out(std::int64_t item) {
    for (int h = 0; h < nh_; ++h)
      wh_[static_cast<std::size_t>(h) * stride() + static_cast<std::size_t>(item)] = Weight(0);
  }

  // An item's weights times r under every hypothesis (rounded as stored).
  void scale_item(std::int64_t item, double r) {
    for (int h = 0; h < nh_; ++h) {
      Weight& v = wh_[static_cast<std::size_t>(h) * stride() + static_cast<std::size_t>(item)];
      v = to_weight(static_cast<double>(v) * r);
    }
  }

  // Block b's answer (simd::hypothesis_update): D, the shown items' squared distances to
  // the block's items (k x kLanes); w: the block's item weights; hacc: this chunk's masses.
  void update_block(std::int64_t b, const double* D, int k, int choice, double scale, double* w,
                    double* hacc) {
    const simd::HypothesisBlock hb{
        &power_, gamma_auto_, lapse_auto_, lapse_, wh_.data() + b * kLanes, stride(), w, hacc};
    simd::hypothesis_update(hb, D, k, choice, scale);
  }

  // Block b without an answer: wh *= scale, w = the sums over h, masses as update_block's.
  void rescale_block(std::int64_t b, double scale, double* w, double* hacc) {
    for (int l = 0; l < kLanes; ++l) w[l] = 0.0;
    for (int h = 0; h < nh_; ++h) {
      Weight* wh = wh_.data() + static_cast<std::size_t>(h) * stride() + b * kLanes;
      double part[simd::kMassLanes] = {};  // as the kernel's partial masses
      for (int l = 0; l < kLanes; ++l) {
        const double v = static_cast<double>(wh[l]) * scale;
        wh[l] = to_weight(v);
        w[l] += v;
        part[l % simd::kMassLanes] += v;
      }
      hacc[h] += simd::mass_of(part);
    }
  }

  // After a pass: each hypothesis' mass, from the chunks' (chunks x count()) in chunk order.
  void merge_masses(const std::vector<double>& hacc, std::int64_t chunks) {
    for (int h = 0; h < nh_; ++h) {
      double s = 0.0;
      for (std::int64_t ch = 0; ch < chunks; ++ch)
        s += hacc[static_cast<std::size_t>(ch * nh_ + h)];
      htotal_[static_cast<std::size_t>(h)] = s;
    }
  }

  // The posterior of gamma and of the lapse rate on their grids (zeros for a fixed one);
  // false when neither is inferred.
  bool marginals(double* gamma_p, double* lapse_p) const {
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

  // A hypothesis drawn from P(h | item) with u in [0, 1): the first whose cumulative
  // weight exceeds u times the item's weight `weight` (the sum over h).
  int draw(std::int64_t item, double u, double weight) const {
    const std::size_t i = static_cast<std::size_t>(item), stride = this->stride();
    const double target = u * weight;
    double c = 0.0;
    for (int h = 0; h < nh_; ++h) {
      c += static_cast<double>(wh_[static_cast<std::size_t>(h) * stride + i]);
      if (c > target) return h;
    }
    return nh_ - 1;
  }

 private:
  // The distance between two hypotheses' weights: the items rounded up to 512 weights (2
  // KiB), plus 72 (288 bytes: more than a block's 256, not a multiple of 64), so that the
  // update's nh_ streams do not share their addresses' low 12 bits within a block (4K
  // aliasing: with a stride of a multiple of 4 KiB the loads of one hypothesis waited on the
  // stores of the previous one; in double precision at n = 2^20: tell 30 -> 24.4 ms on one
  // thread).
  std::size_t stride() const { return (padded_ + 511) / 512 * 512 + 72; }

  int nh_;  // hypotheses (0: none)
  bool gamma_auto_, lapse_auto_;
  double lapse_;                // the fixed lapse rate
  GammaPower power_;            // the fixed gamma
  std::int64_t n_;              // items
  std::size_t padded_;          // weights per hypothesis in use (blocks x kLanes)
  std::vector<Weight> wh_;      // nh_ x stride(): weights per hypothesis and item
  std::vector<double> htotal_;  // each hypothesis' mass after the last pass
};

}  // namespace tripletsearch
