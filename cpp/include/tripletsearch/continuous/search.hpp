// The continuous search: one entry point to construct any method's searcher.
#pragma once

#include <memory>
#include <stdexcept>

#include "global.hpp"
#include "hyptest.hpp"
#include "posterior.hpp"
#include "searcher.hpp"

namespace tripletsearch {

inline std::unique_ptr<ContinuousSearcher> make_searcher(const ContinuousConfig& cfg,
                                                         std::uint64_t seed, int threads) {
  switch (cfg.method) {
    case ContinuousMethod::HypothesisTest:
      return std::make_unique<HypothesisTestSearcher>(cfg, seed, threads);
    case ContinuousMethod::Posterior:
      return std::make_unique<PosteriorSearcher>(cfg, seed, threads);
    case ContinuousMethod::Global:
      return std::make_unique<GlobalSearcher>(cfg, seed, threads);
  }
  throw std::invalid_argument("method: unknown continuous search method");
}

}  // namespace tripletsearch
