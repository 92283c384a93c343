// A continuous search session (Section 3): find a target point in the hypercube
// Omega = [low, high]^dim from gamma-CKL answers to queries (a, b), "is the target closer to
// a or to b?". This file holds the interface and what every method shares (the region,
// the pending query, the counters) and the particle methods' common machinery.
// python/tripletsearch/_reference/continuous.py is the NumPy twin of every method.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "../core/seeding.hpp"
#include "../oracle/choice.hpp"
#include "config.hpp"
#include "particles.hpp"
#include "query.hpp"
#include "region.hpp"

namespace tripletsearch {

class ContinuousSearcher {
 public:
  ContinuousSearcher(const ContinuousConfig& cfg, std::uint64_t seed, int threads)
      : cfg_(cfg),
        d_(cfg.dim),
        seed_(seed),
        threads_(threads),
        model_(cfg.gamma, cfg.lapse),
        qa_(static_cast<std::size_t>(cfg.dim), 0.0),
        qb_(qa_.size(), 0.0) {
    cfg_.validate();
    require_at_least(threads, 1, "n_jobs");
    region_.center.assign(static_cast<std::size_t>(d_), 0.5 * (cfg.low + cfg.high));
    region_.edge = cfg.high - cfg.low;
  }
  virtual ~ContinuousSearcher() = default;
  ContinuousSearcher(const ContinuousSearcher&) = delete;
  ContinuousSearcher& operator=(const ContinuousSearcher&) = delete;

  const ContinuousConfig& config() const { return cfg_; }
  const Region& region() const { return region_; }
  std::int64_t n_queries() const { return n_queries_; }
  std::int64_t n_stages() const { return n_stages_; }
  virtual std::int64_t n_particles() const { return 0; }

  // The point estimate of the target (dim values).
  virtual void estimate(double* out) const = 0;

  // The pending query (computed once, then repeated until told).
  void ask(double* a, double* b) {
    if (!pending_) {
      next_query(qa_.data(), qb_.data());
      pending_ = true;
    }
    std::copy(qa_.begin(), qa_.end(), a);
    std::copy(qb_.begin(), qb_.end(), b);
  }

  // Records the answer to the pending query (true: the target is closer to a); returns
  // true when a stage ended.
  bool tell(bool a_closer) {
    if (!pending_) throw std::logic_error("tell before ask: there is no query to answer");
    pending_ = false;
    ++n_queries_;
    ++stage_queries_;
    return observe(a_closer);
  }

 protected:
  virtual void next_query(double* a, double* b) = 0;
  virtual bool observe(bool a_closer) = 0;

  ContinuousConfig cfg_;
  std::int64_t d_;
  std::uint64_t seed_;
  int threads_;
  PairAnswerModel model_;  // the user model the likelihood assumes
  Region region_;
  std::int64_t n_queries_ = 0, n_stages_ = 0, stage_queries_ = 0;
  bool pending_ = false;
  std::vector<double> qa_, qb_;
};

// The particle methods (Posterior, Global): a particle posterior over a box, information-
// gain queries, resample-move refreshes.
class ParticleSearcher : public ContinuousSearcher {
 public:
  std::int64_t n_particles() const override { return particles_.P; }

 protected:
  ParticleSearcher(const ContinuousConfig& cfg, std::uint64_t seed, int threads)
      : ContinuousSearcher(cfg, seed, threads) {
    answers_.d = d_;
  }

  // A new stage: the uniform prior on [lo, hi] and no answers.
  void begin_stage(const std::vector<double>& lo, const std::vector<double>& hi) {
    Rng rng = stream(seed_, Purpose::ParticleInit, static_cast<std::uint64_t>(n_stages_));
    particles_.init(lo, hi, cfg_.resolved_particles(), rng);
    answers_.clear();
    stage_queries_ = 0;
  }

  void next_query(double* a, double* b) override {
    std::vector<double> w;
    particles_.weights(w);
    Rng rng = stream(seed_, Purpose::QueryDraws, static_cast<std::uint64_t>(n_queries_));
    infogain_query(particles_, w, model_, rng, region_.edge, a, b);
  }

  // The answer to the pending query into the posterior; w: the new weights. Returns the
  // effective sample size.
  double record(bool a_closer, std::vector<double>& w) {
    answers_.add(qa_.data(), qb_.data(), a_closer);
    particles_.observe(qa_.data(), qb_.data(), a_closer, model_, threads_);
    return particles_.weights(w);
  }

  // Resample-move when the effective sample size fell below resample_ess; with
  // focus_tail > 0 the prior box first shrinks to the central mass (Particles::focus).
  void refresh(double ess, double focus_tail) {
    if (!(ess < cfg_.resample_ess * double(particles_.P))) return;
    const std::uint64_t stream_seed =
        child_seed(seed_, Purpose::ResampleMove, static_cast<std::uint64_t>(n_queries_));
    if (focus_tail > 0.0) particles_.focus(focus_tail);
    particles_.resample_move(answers_, model_, stream_seed, cfg_.mh_sweeps, threads_);
  }

  Particles particles_;
  AnswerLog answers_;
};

}  // namespace tripletsearch
