// The random baseline: k unshown items uniformly at random per query.
#pragma once

#include <cstdint>
#include <vector>

#include "../core/seeding.hpp"
#include "searcher.hpp"

namespace tripletsearch {

class RandomSearch final : public DiscreteSearcher {
 public:
  RandomSearch(std::shared_ptr<const ItemStore> store, const SearchConfig& cfg, std::uint64_t seed,
               int threads)
      : DiscreteSearcher(std::move(store), cfg, seed, threads),
        mean_(static_cast<std::size_t>(store_->d()), 0.0),
        cov_(static_cast<std::size_t>(store_->d() * store_->d()), 0.0) {}

  std::unique_ptr<DiscreteSearcher> copy_with_seed(std::uint64_t seed) const override {
    return std::unique_ptr<DiscreteSearcher>(new RandomSearch(*this, seed));
  }

  void posterior(double* out) const override {
    const double p = n_unshown() > 0 ? 1.0 / double(n_unshown()) : 0.0;
    for (std::int64_t i = 0; i < store_->n(); ++i) out[i] = shown_[i] ? 0.0 : p;
  }
  // No belief over locations: zeros.
  const std::vector<double>& mean() const override { return mean_; }
  const std::vector<double>& cov() const override { return cov_; }

 protected:
  // The r-th unshown item not yet picked, r uniform: exact, without rejection loops.
  void select_k(std::int64_t* q, int k) override {
    Rng rng = stream(seed_, Purpose::SearchQuery, static_cast<std::uint64_t>(n_queries_));
    for (int got = 0; got < k; ++got) {
      auto r = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n_unshown() - got)));
      for (std::int64_t i = 0; i < store_->n(); ++i) {
        if (shown_[i] || std::find(q, q + got, i) != q + got) continue;
        if (r-- == 0) {
          q[got] = i;
          break;
        }
      }
    }
  }
  void observe(const std::int64_t*, int, int, const std::int64_t*, int) override {}

 private:
  RandomSearch(const RandomSearch& other, std::uint64_t seed)
      : DiscreteSearcher(other, seed), mean_(other.mean_), cov_(other.cov_) {}

  std::vector<double> mean_, cov_;
};

}  // namespace tripletsearch
