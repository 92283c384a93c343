// A database search session: the interface shared by gamma-CKLSearch, GaussSearch and the
// random baseline, and the bookkeeping they share (shown items, query count).
//
// Each query shows k items; the user picks the one closest to the target they have in
// mind, until the target itself is shown. python/tripletsearch/_reference/discrete.py is
// the NumPy twin of every method.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "../core/errors.hpp"
#include "axes.hpp"
#include "config.hpp"
#include "item_store.hpp"
#include "opening.hpp"
#include "weights.hpp"

namespace tripletsearch {

// Throws std::invalid_argument when cfg is out of range or the store cannot fill a query.
inline void check_search(const ItemStore& store, const SearchConfig& cfg) {
  cfg.validate();
  if (store.n() < cfg.n_choices)
    throw std::invalid_argument(
        "X: " + std::to_string(store.n()) +
        " items cannot fill a query of n_choices = " + std::to_string(cfg.n_choices));
  if (store.n() - cfg.n_choices < cfg.guesses)
    throw std::invalid_argument("guesses: " + std::to_string(cfg.guesses) + " guesses and " +
                                std::to_string(cfg.n_choices) + " items a screen exceed the " +
                                std::to_string(store.n()) + " items");
}

class DiscreteSearcher {
 public:
  DiscreteSearcher(std::shared_ptr<const ItemStore> store, const SearchConfig& cfg,
                   std::uint64_t seed, int threads)
      : store_(std::move(store)), cfg_(cfg), seed_(seed), threads_(threads), shown_(store_->n()) {
    check_search(*store_, cfg_);
    require_at_least(threads, 1, "n_jobs");
  }
  virtual ~DiscreteSearcher() = default;
  DiscreteSearcher(const DiscreteSearcher&) = delete;
  DiscreteSearcher& operator=(const DiscreteSearcher&) = delete;

  // A session in this one's state but with another seed: from a session without answers
  // that has not been asked yet, the same as a new one (its prior computed once, copied).
  virtual std::unique_ptr<DiscreteSearcher> copy_with_seed(std::uint64_t seed) const = 0;
  // The bytes of this session's own state (not the shared store): what a server keeps.
  virtual std::size_t state_bytes() const { return sizeof(*this) + shown_.bytes(); }

  const SearchConfig& config() const { return cfg_; }
  // A session shared by threads: callers lock this around every use (the bindings do).
  std::mutex& mutex() const { return mutex_; }
  std::int64_t n_items() const { return store_->n(); }
  std::int64_t n_dims() const { return store_->d(); }
  std::int64_t n_queries() const { return n_queries_; }
  std::int64_t n_unshown() const { return store_->n() - n_shown_; }

  // Up to n_choices unshown items for the next query into q; returns how many (0: none
  // left to show). Opening::Uniform: the first query (nothing shown yet) by the rule every
  // method shares (opening.hpp), the method's own rule from the second on.
  int select(std::int64_t* q) {
    const int k = static_cast<int>(std::min<std::int64_t>(cfg_.n_choices, n_unshown()));
    if (k == 0) return 0;
    if (cfg_.opening == Opening::Uniform && n_queries_ == 0 && n_shown_ == 0)
      uniform_opening(seed_, store_->n(), k, q);
    else
      select_k(q, k);
    return k;
  }

  // The strip of the screen q[0..k) that select() just gave: up to cfg.guesses items into
  // out, the most probable ones neither on it nor shown before (nor, for GaussSearch,
  // passed over before), most probable first; returns how many. Opening::Uniform: the
  // first screen's strip continues its uniform draw (the next guesses items drawn).
  int offer(const std::int64_t* q, int k, std::int64_t* out) const {
    const int m = cfg_.guesses;
    if (m == 0 || k == 0) return 0;
    if (cfg_.opening == Opening::Uniform && n_queries_ == 0 && n_shown_ == 0) {
      const int all = static_cast<int>(std::min<std::int64_t>(k + m, store_->n()));
      std::vector<std::int64_t> drawn(static_cast<std::size_t>(all));
      uniform_opening(seed_, store_->n(), all, drawn.data());
      std::copy(drawn.begin() + k, drawn.end(), out);
      return all - k;
    }
    return strip(q, k, m, out);
  }

  // The user saw shown[0..k) and picked shown[choice] (choice = -1: no answer), and passed
  // over the strip offered[0..g) (the target is not among them, or was missed).
  void update(const std::int64_t* shown, int k, int choice, const std::int64_t* offered = nullptr,
              int g = 0) {
    require_between(k, 1, cfg_.n_choices, "shown");
    require_in_range(shown, k, store_->n(), 1, "shown");
    require_between(choice, -1, k - 1, "choice");
    require_between(g, 0, cfg_.guesses, "offered");
    require_in_range(offered, g, store_->n(), 1, "offered");
    for (int j = 0; j < k; ++j) n_shown_ += shown_.insert(shown[j]) ? 1 : 0;
    observe(shown, k, choice, offered, g);
    ++n_queries_;
  }

  // Probability of each item being the target (shown items: 0), n values.
  virtual void posterior(double* out) const = 0;
  // The posterior of the user's gamma and lapse rate on their grids (user_grid.hpp);
  // false when neither is inferred.
  virtual bool user_posterior(double* /*gamma_p*/, double* /*lapse_p*/) const { return false; }
  // The m items of highest probability (ties: lower index), positive ones only.
  virtual std::vector<std::int64_t> most_probable(int m) const {
    std::vector<double> p(static_cast<std::size_t>(store_->n()));
    posterior(p.data());
    std::vector<std::int64_t> order;
    for (std::int64_t i = 0; i < store_->n(); ++i)
      if (p[static_cast<std::size_t>(i)] > 0.0) order.push_back(i);
    const auto top =
        order.begin() + std::min<std::int64_t>(m, static_cast<std::int64_t>(order.size()));
    std::partial_sort(order.begin(), top, order.end(), [&](std::int64_t a, std::int64_t b) {
      return p[static_cast<std::size_t>(a)] > p[static_cast<std::size_t>(b)] ||
             (p[static_cast<std::size_t>(a)] == p[static_cast<std::size_t>(b)] && a < b);
    });
    order.erase(top, order.end());
    return order;
  }
  // The belief's mean and covariance (d, d x d) over the target's location, in the store's
  // frame (ItemStore: centred and scaled) ...
  virtual const std::vector<double>& mean() const = 0;
  virtual const std::vector<double>& cov() const = 0;
  // The belief's top `count` principal axes (1 <= count <= d) in the store's frame.
  virtual Axes axes(int count) const {
    AxesWarmStart warm;
    return Axes::of(cov(), store_->d(), count, warm);
  }
  double store_scale() const { return store_->scale(); }
  // ... and in the frame of the input embedding.
  std::vector<double> input_mean() const {
    std::vector<double> m = mean();
    for (std::size_t a = 0; a < m.size(); ++a) m[a] = store_->center()[a] + store_->scale() * m[a];
    return m;
  }
  std::vector<double> input_cov() const {
    std::vector<double> c = cov();
    const double s2 = store_->scale() * store_->scale();
    for (double& v : c) v *= s2;
    return c;
  }

 protected:
  // A copy of `other`'s state with `seed` (copy_with_seed).
  DiscreteSearcher(const DiscreteSearcher& other, std::uint64_t seed)
      : store_(other.store_),
        cfg_(other.cfg_),
        seed_(seed),
        threads_(other.threads_),
        shown_(other.shown_),
        n_shown_(other.n_shown_),
        n_queries_(other.n_queries_) {}

  virtual void select_k(std::int64_t* q, int k) = 0;
  // Up to m items of the strip for the screen q[0..k) (offer's rule after the opening).
  virtual int strip(const std::int64_t* /*q*/, int /*k*/, int /*m*/, std::int64_t* /*out*/) const {
    return 0;
  }
  virtual void observe(const std::int64_t* shown, int k, int choice, const std::int64_t* offered,
                       int g) = 0;

  std::shared_ptr<const ItemStore> store_;
  SearchConfig cfg_;
  std::uint64_t seed_;
  int threads_;
  ShownSet shown_;  // the items shown so far
  std::int64_t n_shown_ = 0, n_queries_ = 0;
  mutable std::mutex mutex_;
};

}  // namespace tripletsearch
