// The database-search simulator: one whole search per target with a simulated user, in
// parallel over targets. Run r uses its own streams (its searcher's seed and the user's
// answers derive from (seed, first_run + r)), so results depend neither on the thread count
// nor on how a study is cut into calls (chunks on other processes or machines).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../core/errors.hpp"
#include "../core/interrupt.hpp"
#include "../core/parallel.hpp"
#include "../core/seeding.hpp"
#include "../discrete/search.hpp"
#include "users.hpp"

namespace tripletsearch {

// What each simulated search may take, and where this call's runs sit in the study.
struct DiscreteSimOptions {
  std::int64_t max_queries = 200;  // queries per search before giving up
  double oracle_lapse = 0.0;       // the user picks at random with this probability
  std::int64_t first_run = 0;      // the global index of this call's run 0 (a chunk's offset)
  double oracle_miss = 0.0;        // the user misses the target in the strip this often

  void validate() const {
    require_at_least<std::int64_t>(max_queries, 1, "max_queries");
    require_half_open(oracle_lapse, 0.0, 1.0, "oracle_lapse");
    require_half_open(oracle_miss, 0.0, 1.0, "oracle_miss");
    require_at_least<std::int64_t>(first_run, 0, "first_run");
  }
};

struct DiscreteSimulation {
  std::vector<std::int64_t> n_queries;  // queries until the target was shown (or the cap)
  std::vector<std::uint8_t> found;
};

// Queries of one search for `target` until it is shown, on the screen or in the strip of
// best guesses (or max_queries): (count, found). A target in the strip is clicked unless
// missed (probability `miss`, one draw from rng then); a strip without it is passed over.
// Stopped through `cancel` between queries (a run over a large store takes seconds).
inline std::pair<std::int64_t, bool> run_discrete_search(DiscreteSearcher& searcher,
                                                         DiscreteUser& user, std::int64_t target,
                                                         std::int64_t max_queries, Rng& rng,
                                                         Cancel& cancel, double miss = 0.0) {
  std::int64_t q[kMaxChoices];
  std::vector<std::int64_t> strip(static_cast<std::size_t>(searcher.config().guesses));
  for (std::int64_t m = 0; m < max_queries; ++m) {
    if (cancel.checkpoint()) return {m, false};  // the call's results are discarded
    const int k = searcher.select(q);
    if (k == 0) return {m, false};
    if (std::find(q, q + k, target) != q + k) return {m + 1, true};
    const int g = searcher.offer(q, k, strip.data());
    if (std::find(strip.data(), strip.data() + g, target) != strip.data() + g &&
        !(miss > 0.0 && rng.uniform() < miss))
      return {m + 1, true};
    searcher.update(q, k, user.choose(target, q, k, rng), strip.data(), g);
  }
  return {max_queries, false};
}

inline void check_discrete_simulation(const ItemStore& store, const SearchConfig& cfg,
                                      const OracleSpec& oracle, const ItemStore& ostore,
                                      const std::int64_t* targets, std::int64_t runs,
                                      const DiscreteSimOptions& o, int threads) {
  check_search(store, cfg);
  oracle.validate();
  o.validate();
  if (oracle.kind == ModelKind::Probit && cfg.n_choices != 2)
    throw std::invalid_argument("oracle: the Probit oracle answers pairs only (n_choices = 2)");
  if (ostore.n() != store.n())
    throw std::invalid_argument("oracle_X: expected " + std::to_string(store.n()) +
                                " rows (one per item), got " + std::to_string(ostore.n()));
  require_at_least<std::int64_t>(runs, 1, "targets");
  require_in_range(targets, runs, store.n(), 1, "targets");
  require_at_least(threads, 1, "n_jobs");
}

inline DiscreteSimulation simulate_discrete(std::shared_ptr<const ItemStore> store,
                                            const SearchConfig& cfg, const OracleSpec& oracle,
                                            std::shared_ptr<const ItemStore> ostore,
                                            const std::int64_t* targets, std::int64_t runs,
                                            const DiscreteSimOptions& o, std::uint64_t seed,
                                            int threads, Cancel& cancel = no_cancel()) {
  check_discrete_simulation(*store, cfg, oracle, *ostore, targets, runs, o, threads);
  DiscreteSimulation res;
  res.n_queries.assign(static_cast<std::size_t>(runs), 0);
  res.found.assign(static_cast<std::size_t>(runs), 0);
  ParallelErrors errors;
#pragma omp parallel num_threads(threads)
  {
    std::unique_ptr<DiscreteUser> user;
    errors.run([&] { user = std::make_unique<DiscreteUser>(oracle, *ostore, o.oracle_lapse); });
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t r = 0; r < runs; ++r) {
      if (cancel.checkpoint()) continue;
      errors.run([&] {
        const auto run = static_cast<std::uint64_t>(o.first_run + r);  // the global index
        auto searcher =
            make_searcher(store, cfg, child_seed(seed, Purpose::SimDiscreteRun, run), 1);
        Rng rng = stream(seed, Purpose::SimUser, run);
        const auto [count, found] = run_discrete_search(*searcher, *user, targets[r], o.max_queries,
                                                        rng, cancel, o.oracle_miss);
        res.n_queries[static_cast<std::size_t>(r)] = count;
        res.found[static_cast<std::size_t>(r)] = found;
      });
    }
  }
  errors.rethrow();
  cancel.throw_if_stopped();
  return res;
}

}  // namespace tripletsearch
