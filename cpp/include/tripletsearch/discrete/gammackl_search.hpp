// gamma-CKLSearch (the paper's appendix): a posterior over the items under the gamma-CKL
// user model (gammackl_posterior.hpp), proto-queries mean +- r sqrt(lambda) v along its
// principal axes (axes.hpp), and the items shown chosen by a selection rule:
//   Weighted  argmin ||x - z||^2 / p  ("near and probable", the text's intent)
//   Paper     argmin p ||x - z||      (the appendix's literal rule: favours improbable items)
//   Nearest   argmin ||x - z||        among items of positive weight
//   InfoGain  the tuple of largest expected information (infogain.hpp)
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "axes.hpp"
#include "gammackl_posterior.hpp"
#include "infogain.hpp"
#include "scan.hpp"
#include "searcher.hpp"

namespace tripletsearch {

class GammaCKLSearch final : public DiscreteSearcher {
 public:
  GammaCKLSearch(std::shared_ptr<const ItemStore> store, const SearchConfig& cfg,
                 std::uint64_t seed, int threads)
      : DiscreteSearcher(store, cfg, seed, threads), post_(store, cfg, threads) {}

  std::unique_ptr<DiscreteSearcher> copy_with_seed(std::uint64_t seed) const override {
    return std::unique_ptr<DiscreteSearcher>(new GammaCKLSearch(*this, seed));
  }
  std::size_t state_bytes() const override {
    return DiscreteSearcher::state_bytes() + post_.state_bytes();
  }

  void posterior(double* out) const override { post_.posterior(out); }
  bool user_posterior(double* gamma_p, double* lapse_p) const override {
    return post_.user_posterior(gamma_p, lapse_p);
  }
  const std::vector<double>& mean() const override { return post_.mean(); }
  const std::vector<double>& cov() const override { return post_.cov(); }
  Axes axes(int count) const override { return post_.axes(count); }
  // as the last pass kept them, by weight (up to max(8, n_choices); beyond from the
  // normalized posterior, where weights an ulp apart can tie)
  std::vector<std::int64_t> most_probable(int m) const override {
    return m <= post_.top_count() ? post_.most_probable(m) : DiscreteSearcher::most_probable(m);
  }

 protected:
  void select_k(std::int64_t* q, int k) override {
    const ScanInput in{*store_, post_.weights(), shown_, post_.chunks(), threads_};
    if (cfg_.selection == Selection::InfoGain &&
        infogain_.select(post_, in, cfg_, seed_, n_queries_, k, q))
      return;
    const ScanRule rule = cfg_.selection == Selection::Paper     ? ScanRule::Paper
                          : cfg_.selection == Selection::Nearest ? ScanRule::Nearest
                                                                 : ScanRule::Weighted;
    const std::int64_t d = store_->d();
    const int count = static_cast<int>(std::min<std::int64_t>((k + 1) / 2, d));
    const Axes axes = cfg_.opening == Opening::Random && n_queries_ == 0
                          ? Axes::opening(post_, count, d, seed_)
                          : post_.axes(count);
    std::vector<double> protos(static_cast<std::size_t>(k * d));
    axes.protos(post_.mean(), k, cfg_.r, protos.data());
    nearest_items(in, protos.data(), k, rule,
                  rule == ScanRule::Weighted ? post_.most_probable(k) : std::vector<std::int64_t>{},
                  q);
  }

  // The most probable items as the last pass kept them (k + guesses of them), less q.
  int strip(const std::int64_t* q, int k, int m, std::int64_t* out) const override {
    int g = 0;
    for (std::int64_t i : most_probable(k + m))
      if (g < m && std::find(q, q + k, i) == q + k) out[g++] = i;
    return g;
  }

  void observe(const std::int64_t* shown, int k, int choice, const std::int64_t* offered,
               int g) override {
    if (choice < 0)  // no answer: the shown items are only ruled out (and the strip's ...)
      post_.observe_unanswered(shown, k, shown_, offered, g);
    else
      post_.observe(shown, k, choice, shown_, offered, g);
  }

 private:
  // The posterior copied; the query selector's scratch starts empty, as a new session's.
  GammaCKLSearch(const GammaCKLSearch& other, std::uint64_t seed)
      : DiscreteSearcher(other, seed), post_(other.post_) {}

  GammaCKLPosterior post_;
  InfoGainSelector infogain_;
};

}  // namespace tripletsearch
