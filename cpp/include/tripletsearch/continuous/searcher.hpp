// A continuous search session (Section 3): find a target point in the hypercube
// box Omega = [low, high] (per axis) from gamma-CKL answers to queries (a, b), "is the target
// closer to a or to b?". This file holds the interface and what every method shares (the region,
// the pending query, the counters) and the particle methods' common machinery.
// python/tripletsearch/_reference/continuous.py is the NumPy twin of every method.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "../core/seeding.hpp"
#include "../oracle/choice.hpp"
#include "config.hpp"
#include "particles.hpp"
#include "query.hpp"
#include "region.hpp"

namespace tripletsearch {

// The searchers work in the unit frame, x = origin + scale x' with the box's centre as
// origin and its largest half-width as scale (one scale for every axis: distances, and so
// the user model, keep their shape): Omega is the box [-r, r] with r_a = half-width_a /
// scale <= 1, and the regions start from its bounding cube [-1, 1]^dim. Queries, estimates
// and regions are mapped to the input frame. The gamma-CKL user model is scale-free, so the
// searches do not depend on the scale, and no box of finite bounds can overflow a squared
// distance.
class ContinuousSearcher {
 public:
  ContinuousSearcher(const ContinuousConfig& cfg, std::uint64_t seed, int threads)
      : input_cfg_(cfg),
        cfg_(unit_config(cfg)),
        d_(cfg.dim),
        seed_(seed),
        threads_(threads),
        origin_(static_cast<std::size_t>(cfg.dim), 0.0),
        scale_(cfg.scale()),
        model_(cfg.gamma, cfg.lapse, cfg.gamma_auto, cfg.lapse_auto),
        qa_(static_cast<std::size_t>(cfg.dim), 0.0),
        qb_(qa_.size(), 0.0) {
    input_cfg_.validate();
    require_at_least(threads, 1, "n_jobs");
    for (std::size_t a = 0; a < origin_.size(); ++a) origin_[a] = cfg.origin(a);
    region_.center.assign(static_cast<std::size_t>(d_), 0.0);
    region_.edge = 2.0;
  }
  virtual ~ContinuousSearcher() = default;
  ContinuousSearcher(const ContinuousSearcher&) = delete;
  ContinuousSearcher& operator=(const ContinuousSearcher&) = delete;

  const ContinuousConfig& config() const { return input_cfg_; }
  // A session shared by threads: callers lock this around every use (the bindings do).
  std::mutex& mutex() const { return mutex_; }
  std::int64_t n_queries() const { return n_queries_; }
  std::int64_t n_stages() const { return n_stages_; }
  virtual std::int64_t n_particles() const { return 0; }
  // The posterior of the user's gamma and lapse rate on their grids (oracle/user_grid.hpp:
  // kGammaGrid and kLapseGrid values; zeros for a fixed one); false when neither is inferred.
  virtual bool user_posterior(double* /*gamma_p*/, double* /*lapse_p*/) const { return false; }

  // The current region, in the input frame.
  Region region() const {
    Region r{region_.center, scale_ * region_.edge, region_.depth};
    to_input(r.center.data());
    return r;
  }

  // The point estimate of the target (dim values), in the input frame.
  void estimate(double* out) const {
    estimate_unit(out);
    to_input(out);
  }

  // The pending query (computed once, then repeated until told), in the input frame.
  void ask(double* a, double* b) {
    ask_unit(a, b);
    to_input(a);
    to_input(b);
  }

  // The same in the unit frame (the simulator's users answer there).
  void ask_unit(double* a, double* b) {
    if (!pending_) {
      next_query(qa_.data(), qb_.data());
      pending_ = true;
    }
    std::copy(qa_.begin(), qa_.end(), a);
    std::copy(qb_.begin(), qb_.end(), b);
  }
  virtual void estimate_unit(double* out) const = 0;

  // Records the answer to the pending query (true: the target is closer to a); returns
  // true when a stage ended.
  bool tell(bool a_closer) {
    if (!pending_) throw std::logic_error("tell before ask: there is no query to answer");
    pending_ = false;
    ++n_queries_;
    ++stage_queries_;
    return observe(a_closer);
  }

  // Records the answer to the query (a, b) in the input frame, asked by another process or
  // another version of the library (a stored session replayed); it replaces any pending
  // query. The particle methods only: the hypothesis test answers its own tiling.
  bool observe_query(const double* a, const double* b, bool a_closer) {
    if (cfg_.method == ContinuousMethod::HypothesisTest)
      throw std::invalid_argument(
          "method: the hypothesis test only records answers to its own queries");
    for (std::int64_t t = 0; t < d_; ++t) {
      if (!(std::isfinite(a[t]) && std::isfinite(b[t])))
        throw std::invalid_argument("query: the points must be finite");
      qa_[t] = (a[t] - origin_[t]) / scale_;
      qb_[t] = (b[t] - origin_[t]) / scale_;
    }
    pending_ = true;
    return tell(a_closer);
  }

  // x <- origin + scale x, per coordinate.
  void to_input(double* x) const {
    for (std::int64_t a = 0; a < d_; ++a) x[a] = origin_[a] + scale_ * x[a];
  }
  // Input-frame lengths per unit-frame length.
  double scale() const { return scale_; }
  // Omega in the unit frame.
  const std::vector<double>& unit_low() const { return cfg_.low; }
  const std::vector<double>& unit_high() const { return cfg_.high; }

 protected:
  virtual void next_query(double* a, double* b) = 0;
  virtual bool observe(bool a_closer) = 0;

  // The configuration in the unit frame (computed unvalidated: the constructor validates
  // the input configuration before anything uses this one).
  static ContinuousConfig unit_config(ContinuousConfig cfg) {
    const double s = cfg.scale();
    for (std::size_t a = 0; a < cfg.low.size() && a < cfg.high.size(); ++a) {
      const double r = cfg.half_width(a) / s;
      cfg.low[a] = -r;
      cfg.high[a] = r;
    }
    return cfg;
  }

  ContinuousConfig input_cfg_;  // as given
  ContinuousConfig cfg_;        // in the unit frame
  std::int64_t d_;
  std::uint64_t seed_;
  int threads_;
  std::vector<double> origin_;  // input = origin + scale unit
  double scale_;
  UserModel model_;  // the user model the likelihood assumes (or infers)
  Region region_;
  std::int64_t n_queries_ = 0, n_stages_ = 0, stage_queries_ = 0;
  bool pending_ = false;
  std::vector<double> qa_, qb_;
  mutable std::mutex mutex_;
};

// The particle methods (Posterior, Global): a particle posterior over a box, information-
// gain queries, resample-move refreshes.
class ParticleSearcher : public ContinuousSearcher {
 public:
  std::int64_t n_particles() const override { return particles_.P; }
  bool user_posterior(double* gamma_p, double* lapse_p) const override {
    if (!model_.inferred()) return false;
    std::vector<double> w;
    particles_.weights(w);
    particles_.hypothesis_marginals(w, gamma_p, lapse_p);
    return true;
  }

 protected:
  ParticleSearcher(const ContinuousConfig& cfg, std::uint64_t seed, int threads)
      : ContinuousSearcher(cfg, seed, threads) {
    answers_.d = d_;
  }

  // A new stage: the uniform prior on [lo, hi] and no answers.
  void begin_stage(const std::vector<double>& lo, const std::vector<double>& hi) {
    Rng rng = stream(seed_, Purpose::ParticleInit, static_cast<std::uint64_t>(n_stages_));
    particles_.init(lo, hi, cfg_.resolved_particles(), model_, rng);
    answers_.clear();
    stage_queries_ = 0;
  }

  void next_query(double* a, double* b) override {
    std::vector<double> w;
    particles_.weights(w);
    Rng rng = stream(seed_, Purpose::QueryDraws, static_cast<std::uint64_t>(n_queries_));
    infogain_query(particles_, w, model_, rng, region_.edge, cfg_.low.data(), cfg_.high.data(), a,
                   b);
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
