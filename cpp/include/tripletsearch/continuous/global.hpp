// The global method: one posterior over Omega kept across all queries (particles with
// resample-move), no stages; zooming by dropping tails below kFocusTail at each refresh
// (the price of exponential convergence without stages), the posterior median as estimate.
#pragma once

#include <cmath>
#include <vector>

#include "searcher.hpp"

namespace tripletsearch {

class GlobalSearcher final : public ParticleSearcher {
 public:
  static constexpr double kFocusTail = 1e-3;

  GlobalSearcher(const ContinuousConfig& cfg, std::uint64_t seed, int threads)
      : ParticleSearcher(cfg, seed, threads) {
    begin_stage(cfg_.low, cfg_.high);
  }

  void estimate_unit(double* out) const override {
    std::vector<double> w;
    particles_.weights(w);
    particles_.median(w, out);
  }

 protected:
  // Every answer is a stage; the region is the cube around the posterior median whose edge
  // L 2^-depth is the smallest such edge >= 4 x the largest interquartile range (L = 2:
  // the edge of Omega's bounding cube).
  bool observe(bool a_closer) override {
    std::vector<double> w;
    refresh(record(a_closer, w), kFocusTail);
    particles_.weights(w);
    const double spread = particles_.median(w, region_.center.data());
    const double L = 2.0;
    std::int64_t depth = 0;
    while (depth < 1000 && L * std::ldexp(1.0, -(depth + 1)) >= 4.0 * spread) ++depth;
    region_.depth = depth;
    region_.edge = L * std::ldexp(1.0, -depth);
    ++n_stages_;
    return true;
  }
};

}  // namespace tripletsearch
