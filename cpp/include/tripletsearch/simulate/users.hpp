// Simulated users: people who have a target in mind and answer like an oracle model.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../core/rng.hpp"
#include "../discrete/config.hpp"
#include "../discrete/item_store.hpp"
#include "../oracle/choice.hpp"
#include "../oracle/models.hpp"
#include "../oracle/rows.hpp"

namespace tripletsearch {

// A database-search user with item `target` in mind picks among shown[0..k) by the
// oracle's choice model at the positions of `ostore` (the user's perception): a Luce
// choice for the kernel models (gamma-CKL: P(c) proportional to D_c^(-gamma/2)), Probit for
// pairs only. With probability `lapse` the pick is uniform among the shown instead (a
// person who sometimes clicks at random); lapse = 0 draws nothing extra. Returns the
// position of the pick in shown.
class DiscreteUser {
 public:
  DiscreteUser(const OracleSpec& oracle, const ItemStore& ostore, double lapse = 0.0)
      : oracle_(oracle),
        lapse_(lapse),
        store_(ostore),
        xt_(static_cast<std::size_t>(ostore.d())),
        xc_(xt_.size()),
        xo_(xt_.size()) {}

  int choose(std::int64_t target, const std::int64_t* shown, int k, Rng& rng) {
    if (lapse_ > 0.0 && rng.uniform() < lapse_)
      return std::min(static_cast<int>(rng.uniform() * k), k - 1);
    const std::int64_t d = store_.d();
    store_.row(target, xt_.data());
    return with_model(oracle_, [&](const auto& model) -> int {
      using Model = std::decay_t<decltype(model)>;
      if constexpr (!Model::kChoice) {  // Probit: pairs
        store_.row(shown[0], xc_.data());
        store_.row(shown[1], xo_.data());
        const double p = model.prob(row_dist<true>(xt_.data(), xc_.data(), xo_.data(), d));
        return rng.uniform() < p ? 0 : 1;
      } else {
        double D[kMaxChoices], p[kMaxChoices];
        for (int c = 0; c < k; ++c) {
          store_.row(shown[c], xc_.data());
          D[c] = sqdist(xc_.data(), xt_.data(), d);
        }
        model.choice(D, k, p);
        double total = 0.0;
        for (int c = 0; c < k; ++c) total += p[c];
        double u = rng.uniform() * total;
        for (int c = 0; c < k - 1; ++c) {
          if (u < p[c]) return c;
          u -= p[c];
        }
        return k - 1;
      }
    });
  }

 private:
  OracleSpec oracle_;
  double lapse_;
  const ItemStore& store_;
  std::vector<double> xt_, xc_, xo_;
};

// A continuous-search user with target t answers "a" with the model's probability.
inline bool continuous_user_answer(const PairAnswerModel& user, const double* target,
                                   const double* a, const double* b, std::int64_t d, Rng& rng) {
  return rng.uniform() < user.prob(sqdist(a, target, d), sqdist(b, target, d));
}

}  // namespace tripletsearch
