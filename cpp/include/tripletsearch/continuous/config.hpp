// Configuration of a continuous search. The defaults here are the public API's defaults
// (tests check that python/tripletsearch/continuous.py agrees).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "../core/errors.hpp"
#include "particles.hpp"

namespace tripletsearch {

enum class ContinuousMethod : int { HypothesisTest = 0, Posterior = 1, Global = 2 };

// The hypothesis test's cells per stage (each asked n_obs times): beyond this, a stage
// takes more queries and time than any run can afford.
constexpr double kMaxCells = 4294967296.0;  // 2^32

struct ContinuousConfig {
  std::int64_t dim = 2;
  double gamma = 3.0;  // the user model's gamma-CKL power
  // Omega = [low[0], high[0]] x ... x [low[dim-1], high[dim-1]] (one entry per axis;
  // the bindings broadcast a single entry)
  std::vector<double> low{-1.0, -1.0}, high{1.0, 1.0};
  ContinuousMethod method = ContinuousMethod::Global;
  double alpha = 0.8;            // Posterior: the mass a box needs to decide
  double lapse = 0.0;            // lapse rate assumed by the likelihood
  std::int64_t stage_cap = 0;    // Posterior: queries per stage; 0: 30 * dim
  std::int64_t n_particles = 0;  // 0: by method and dimension (resolved_particles)
  int mh_sweeps = 2;             // Metropolis-Hastings sweeps per resample-move
  double resample_ess = 0.5;     // resample-move when ESS < this fraction of the particles
  // HypothesisTest: the plan of Algorithm 2 (tripletsearch.theory.binomial_test_plan)
  std::int64_t cells_per_axis = 0, n_obs = 0, tau = 0;
  // gamma and/or the lapse rate inferred with the target (oracle/user_grid.hpp): the
  // global method only; gamma and lapse above are then unused.
  bool gamma_auto = false, lapse_auto = false;

  // Posterior: 2048 particles (4096 from dim 4: a child holds (1/8)^dim of u(X));
  // Global: 1024; HypothesisTest: none.
  std::int64_t resolved_particles() const {
    if (n_particles > 0) return n_particles;
    if (method == ContinuousMethod::Posterior) return dim >= 4 ? 4096 : 2048;
    return method == ContinuousMethod::Global ? 1024 : 0;
  }
  std::int64_t resolved_stage_cap() const { return stage_cap > 0 ? stage_cap : 30 * dim; }

  // HypothesisTest: whether the test plan is set (a config without it validates the other
  // values; the searcher needs it).
  bool has_plan() const { return cells_per_axis > 0; }

  void validate() const {
    require_at_least<std::int64_t>(dim, 1, "dim");
    if (method == ContinuousMethod::HypothesisTest) {
      if (dim < 2)
        throw std::invalid_argument(
            "dim: the hypothesis-test decider needs dim >= 2 (the lemma assumes d > 1)");
      if (has_plan()) {
        require_at_least<std::int64_t>(n_obs, 1, "n_obs");
        require_between<std::int64_t>(tau, 0, n_obs, "tau");
        if (!(std::pow(double(cells_per_axis), double(dim)) <= kMaxCells))
          throw std::invalid_argument("dim: the hypothesis test tests " +
                                      format_number(cells_per_axis) + "^" + format_number(dim) +
                                      " cells per stage, beyond what it can run (at most " +
                                      format_number(kMaxCells) + "); use method='global'");
      }
    } else if (dim > kMaxParticleDim) {
      throw std::invalid_argument("dim: the particle methods support dim <= " +
                                  format_number(kMaxParticleDim) + ", got " + format_number(dim));
    }
    require_positive(gamma, "gamma");
    if (gamma_auto && method != ContinuousMethod::Global)
      throw std::invalid_argument(
          "gamma: 'auto' (gamma inferred while searching) needs method='global'");
    if (lapse_auto && method != ContinuousMethod::Global)
      throw std::invalid_argument(
          "lapse: 'auto' (the lapse rate inferred while searching) needs method='global'");
    validate_bounds();
    require_open_interval(alpha, 0.5, 1.0, "alpha");
    require_half_open(lapse, 0.0, 0.5, "lapse");
    require_at_least<std::int64_t>(stage_cap, 0, "stage_cap");
    require_at_least<std::int64_t>(cells_per_axis, 0, "cells_per_axis");
    if (n_particles != 0) require_at_least<std::int64_t>(n_particles, 16, "n_particles");
    // positions, weights and log-likelihoods, twice during a resample-move
    require_allocation(16.0 * double(resolved_particles()) * (double(dim) + 2.0), "n_particles");
    require_at_least(mh_sweeps, 0, "mh_sweeps");
    require_open_interval(resample_ess, 0.0, 1.0, "resample_ess");
  }

  // The box's centre and half-width on axis a.
  double origin(std::size_t a) const { return 0.5 * low[a] + 0.5 * high[a]; }
  double half_width(std::size_t a) const { return 0.5 * high[a] - 0.5 * low[a]; }
  // The searchers' isotropic scale: the largest half-width (the unit frame's box has
  // half-widths half_width(a) / scale() <= 1, its bounding cube is [-1, 1]^dim).
  double scale() const {
    double s = 0.0;
    for (std::size_t a = 0; a < low.size(); ++a) s = std::max(s, half_width(a));
    return s;
  }

 private:
  void validate_bounds() const {
    if (low.size() != static_cast<std::size_t>(dim) || high.size() != low.size())
      throw std::invalid_argument(
          "bounds: need one (low, high) per dimension (" + format_number(dim) + "), got " +
          format_number(static_cast<std::int64_t>(low.size())) + " lows and " +
          format_number(static_cast<std::int64_t>(high.size())) + " highs");
    for (std::size_t a = 0; a < low.size(); ++a) {
      const std::string axis = " on axis " + format_number(static_cast<std::int64_t>(a));
      if (!(std::isfinite(low[a]) && std::isfinite(high[a]) && low[a] < high[a]))
        throw std::invalid_argument("bounds: need finite low < high" + axis + ", got (" +
                                    format_number(low[a]) + ", " + format_number(high[a]) + ")");
      // the searchers map the unit frame to the box, x = origin + scale x', and look up to
      // a few widths beyond it (parent regions, mirrored queries)
      const double o = origin(a), h = half_width(a);
      if (!(h > 0.0) || !std::isfinite(std::fabs(o) + 16.0 * h))
        throw std::invalid_argument("bounds: (" + format_number(low[a]) + ", " +
                                    format_number(high[a]) + ")" + axis + " is too " +
                                    (h > 0.0 ? "wide" : "narrow") + " for double precision");
    }
    // an axis far narrower than the widest one is a degenerate box (and underflows in the
    // unit frame)
    const double s = scale();
    for (std::size_t a = 0; a < low.size(); ++a)
      if (!(half_width(a) >= 1e-12 * s))
        throw std::invalid_argument("bounds: axis " + format_number(static_cast<std::int64_t>(a)) +
                                    " is narrower than " +
                                    "1e-12 times the widest axis; drop it or rescale");
  }
};

}  // namespace tripletsearch
