// The continuous-search simulator: targets uniform in Omega, simulated gamma-CKL users
// (with a lapse rate), the errors of the point estimate after every query and every stage.
// Parallel over runs (the hypothesis test: over cells); run r draws its target and answers
// from its own streams, keyed by (seed, first_run + r), so results depend neither on the
// thread count nor on how a study is cut into calls (chunks on other processes or machines).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "../continuous/search.hpp"
#include "../core/errors.hpp"
#include "../core/interrupt.hpp"
#include "../core/parallel.hpp"
#include "../core/seeding.hpp"
#include "users.hpp"

namespace tripletsearch {

struct ContinuousSimOptions {
  std::int64_t n_runs = 1;
  std::int64_t max_queries = -1;  // record the error after every query up to this (-1: no)
  std::int64_t max_stages = -1;   // stop after this many stages (-1: no limit)
  double oracle_gamma = 3.0;      // the simulated users' gamma-CKL power
  double oracle_lapse = 0.0;      // and lapse rate
  std::int64_t first_run = 0;     // the global index of this call's run 0 (a chunk's offset)

  void validate(const ContinuousConfig& cfg) const {
    require_at_least<std::int64_t>(n_runs, 1, "n_runs");
    require_at_least<std::int64_t>(first_run, 0, "first_run");
    // the records: errors per query, errors and queries per stage, targets and regions
    require_allocation(8.0 * double(n_runs) *
                           (double(std::max<std::int64_t>(max_queries, 0)) + 1.0 +
                            2.0 * (double(max_stages >= 0 ? max_stages : max_queries) + 1.0) +
                            2.0 * double(cfg.dim) + 3.0),
                       "n_runs, max_queries, max_stages");
    if (max_queries < 0 && max_stages < 0)
      throw std::invalid_argument("max_queries, max_stages: give at least one");
    if (cfg.method == ContinuousMethod::HypothesisTest && max_queries >= 0)
      throw std::invalid_argument(
          "max_queries: per-query errors are not recorded for the hypothesis test (billions "
          "of queries); use max_stages");
    require_positive(oracle_gamma, "oracle");
    require_half_open(oracle_lapse, 0.0, 1.0, "oracle_lapse");
  }
  // Rows of the per-stage records.
  std::int64_t stage_rows() const { return (max_stages >= 0 ? max_stages : max_queries) + 1; }
};

struct ContinuousSimulation {
  std::vector<double> errors;        // runs x (max_queries + 1), or empty
  std::vector<double> stage_errors;  // runs x stage_rows, NaN-padded
  std::vector<double> stage_queries;
  std::vector<std::int64_t> depths, queries;
  std::vector<double> targets;                     // runs x d
  std::vector<double> centers, edges;              // final regions
  std::int64_t runs, dim, query_cols, stage_cols;  // the shapes of the arrays above

  ContinuousSimulation(const ContinuousSimOptions& o, std::int64_t d)
      : runs(o.n_runs),
        dim(d),
        query_cols(o.max_queries >= 0 ? o.max_queries + 1 : 0),
        stage_cols(o.stage_rows()) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const auto runs = static_cast<std::size_t>(o.n_runs);
    if (o.max_queries >= 0) errors.assign(runs * static_cast<std::size_t>(o.max_queries + 1), nan);
    stage_errors.assign(runs * static_cast<std::size_t>(o.stage_rows()), nan);
    stage_queries.assign(stage_errors.size(), nan);
    depths.assign(runs, 0);
    queries.assign(runs, 0);
    targets.assign(runs * static_cast<std::size_t>(d), 0.0);
    centers.assign(targets.size(), 0.0);
    edges.assign(runs, 0.0);
  }
};

namespace detail {

// One simulated search, run r, into res.
inline void simulate_continuous_run(const ContinuousConfig& cfg, const ContinuousSimOptions& o,
                                    std::uint64_t seed, std::int64_t r, int inner_threads,
                                    ContinuousSimulation& res, Cancel& cancel) {
  if (cancel.checkpoint()) return;  // stopped: build no searcher for a run not yet begun
  // the user and the errors in the searcher's unit frame (Omega within [-1, 1]^d); errors,
  // targets and regions reported in the input frame
  const std::int64_t d = cfg.dim, S = o.stage_rows() - 1, Q = o.max_queries + 1;
  const PairAnswerModel user(o.oracle_gamma, o.oracle_lapse);
  const auto run = static_cast<std::uint64_t>(o.first_run + r);  // the run's global index
  Rng rng = stream(seed, Purpose::SimUser, run);
  const auto srch =
      make_searcher(cfg, child_seed(seed, Purpose::SimContinuousRun, run), inner_threads);
  std::vector<double> t(static_cast<std::size_t>(d));  // uniform in Omega
  const std::vector<double>&lo = srch->unit_low(), &hi = srch->unit_high();
  for (std::int64_t a = 0; a < d; ++a) t[a] = lo[a] + rng.uniform() * (hi[a] - lo[a]);
  auto* hyp = dynamic_cast<HypothesisTestSearcher*>(srch.get());
  std::vector<double> est(static_cast<std::size_t>(d)), qa(est.size()), qb(est.size());
  auto error = [&]() {
    srch->estimate_unit(est.data());
    return srch->scale() * std::sqrt(sqdist(est.data(), t.data(), d));
  };
  if (o.max_queries >= 0) res.errors[static_cast<std::size_t>(r * Q)] = error();
  res.stage_errors[static_cast<std::size_t>(r * (S + 1))] = error();
  res.stage_queries[static_cast<std::size_t>(r * (S + 1))] = 0.0;
  for (std::int64_t stage = 0;;) {
    if (cancel.checkpoint()) return;
    if (o.max_stages >= 0 && stage >= o.max_stages) break;
    if (o.max_queries >= 0 && srch->n_queries() >= o.max_queries) break;
    bool ended = true;
    if (hyp != nullptr) {
      hyp->simulate_stage(t.data(), user, inner_threads, cancel);
    } else {
      srch->ask_unit(qa.data(), qb.data());
      ended = srch->tell(continuous_user_answer(user, t.data(), qa.data(), qb.data(), d, rng));
      if (o.max_queries >= 0)
        res.errors[static_cast<std::size_t>(r * Q + srch->n_queries())] = error();
    }
    if (ended && ++stage <= S) {
      res.stage_errors[static_cast<std::size_t>(r * (S + 1) + stage)] = error();
      res.stage_queries[static_cast<std::size_t>(r * (S + 1) + stage)] = double(srch->n_queries());
    }
  }
  const Region region = srch->region();
  res.depths[r] = region.depth;
  res.queries[r] = srch->n_queries();
  res.edges[r] = region.edge;
  std::copy(region.center.begin(), region.center.end(), res.centers.begin() + r * d);
  srch->to_input(t.data());
  std::copy(t.begin(), t.end(), res.targets.begin() + r * d);
}

}  // namespace detail

inline ContinuousSimulation simulate_continuous(const ContinuousConfig& cfg,
                                                const ContinuousSimOptions& o, std::uint64_t seed,
                                                int threads, Cancel& cancel = no_cancel()) {
  cfg.validate();
  o.validate(cfg);
  require_at_least(threads, 1, "n_jobs");
  ContinuousSimulation res(o, cfg.dim);
  if (cfg.method == ContinuousMethod::HypothesisTest) {  // parallel over cells
    for (std::int64_t r = 0; r < o.n_runs && !cancel.stopped(); ++r)
      detail::simulate_continuous_run(cfg, o, seed, r, threads, res, cancel);
    cancel.throw_if_stopped();
    return res;
  }
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t r = 0; r < o.n_runs; ++r)
    errors.run([&] { detail::simulate_continuous_run(cfg, o, seed, r, 1, res, cancel); });
  errors.rethrow();
  cancel.throw_if_stopped();
  return res;
}

}  // namespace tripletsearch
