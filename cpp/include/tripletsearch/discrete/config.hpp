// Configuration of a database search: the method, its selection rule and parameters.
#pragma once

#include <cstdint>
#include <string>

#include "../core/errors.hpp"
#include "../oracle/choice.hpp"
#include "../oracle/user_grid.hpp"

namespace tripletsearch {

enum class SearchMethod : int { GammaCKL = 0, Gauss = 1, Random = 2 };
// gamma-CKLSearch's rule for picking items near the proto-queries (see gammackl_search.hpp).
enum class Selection : int { Weighted = 0, Paper = 1, Nearest = 2, InfoGain = 3 };
// A session's first screen (query 0):
//   Principal  gamma-CKL: the posterior's principal axes (before 0.3.0; every session of a
//              database opens on the same screen); GaussSearch and random: their own rule
//   Random     gamma-CKL: those axes turned by a rotation seeded by the session
//              (Axes::rotate); GaussSearch and random: their own rule (0.3.0's default)
//   Uniform    every method: k distinct items uniformly at random from the session's seed,
//              one rule (opening.hpp); the methods differ from the second screen on
enum class Opening : int { Principal = 0, Random = 1, Uniform = 2 };

// The miss rate of the database search's best guesses (a person who does not click the
// target in the strip), inferred with miss="auto": the lapse rate's grid, uniform.
constexpr int kMissGrid = kLapseGrid;
constexpr const double* kMissValues = kLapseValues;

// The prior mean of miss^c over the miss grid (1 for c = 0): an item passed over c times
// keeps this factor of its weight, miss marginalized (the products by repeated
// multiplication, summed in grid order: the NumPy twin's arithmetic).
inline double miss_marginal(std::int64_t c) {
  double s = 0.0;
  for (int j = 0; j < kMissGrid; ++j) {
    double p = 1.0;
    for (std::int64_t e = 0; e < c; ++e) p *= kMissValues[j];
    s += p;
  }
  return s / double(kMissGrid);
}

struct SearchConfig {
  SearchMethod method = SearchMethod::GammaCKL;
  double gamma = 3.0;  // gamma-CKL likelihood (the user model)
  double r = 2.0;      // proto-queries at mean +- r sqrt(lambda) v
  double sigma = 0.1;  // GaussSearch probit noise
  int n_choices = 2;
  Selection selection = Selection::InfoGain;
  // gamma-CKL: a lapse rate (answers at random with this probability: P(c) = lapse / k +
  // (1 - lapse) P_gamma(c)), and gamma and/or the lapse rate inferred with the target
  // (oracle/user_grid.hpp; gamma and lapse above are then unused)
  double lapse = 0.0;
  bool gamma_auto = false, lapse_auto = false;
  Opening opening = Opening::Uniform;
  // Best guesses (issue 43): with each screen the `guesses` most probable items not on it
  // (the strip); a strip passed over multiplies its items' weights by the person's miss
  // rate (gamma-CKL: `miss`, or with miss_auto its marginal over kMissValues), and
  // GaussSearch leaves its items out of later strips (and, with miss = 0, screens).
  int guesses = 0;
  double miss = 0.0;
  bool miss_auto = false;

  // The posterior keeps one weight per item and user hypothesis (0: the plain posterior).
  int hypotheses() const {
    if (!gamma_auto && !lapse_auto && lapse == 0.0) return 0;
    return (gamma_auto ? kGammaGrid : 1) * (lapse_auto ? kLapseGrid : 1);
  }

  void validate() const {
    require_positive(gamma, "gamma");
    require_positive(r, "r");
    require_positive(sigma, "sigma");
    require_between(n_choices, 2, kMaxChoices, "n_choices");
    require_half_open(lapse, 0.0, 1.0, "lapse");
    if (opening != Opening::Principal && opening != Opening::Random && opening != Opening::Uniform)
      throw std::invalid_argument("opening: unknown opening");
    require_at_least(guesses, 0, "guesses");
    require_half_open(miss, 0.0, 1.0, "miss");
    if (guesses > 0 && method == SearchMethod::Random)
      throw std::invalid_argument("guesses: the random method offers no guesses");
    if ((gamma_auto || lapse_auto) && method != SearchMethod::GammaCKL)
      throw std::invalid_argument(std::string(gamma_auto ? "gamma" : "lapse") +
                                  ": 'auto' (inferred while searching) is a gamma-ckl option");
  }
};

}  // namespace tripletsearch
