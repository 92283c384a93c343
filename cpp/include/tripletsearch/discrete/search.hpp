// The database search: one entry point to construct any method's searcher.
#pragma once

#include <memory>
#include <stdexcept>

#include "gammackl_search.hpp"
#include "gauss_search.hpp"
#include "random_search.hpp"
#include "searcher.hpp"

namespace tripletsearch {

inline std::unique_ptr<DiscreteSearcher> make_searcher(std::shared_ptr<const ItemStore> store,
                                                       const SearchConfig& cfg, std::uint64_t seed,
                                                       int threads) {
  switch (cfg.method) {
    case SearchMethod::GammaCKL:
      return std::make_unique<GammaCKLSearch>(std::move(store), cfg, seed, threads);
    case SearchMethod::Gauss:
      return std::make_unique<GaussSearch>(std::move(store), cfg, seed, threads);
    case SearchMethod::Random:
      return std::make_unique<RandomSearch>(std::move(store), cfg, seed, threads);
  }
  throw std::invalid_argument("method: unknown search method");
}

}  // namespace tripletsearch
