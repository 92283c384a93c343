// Configuration of a database search: the method, its selection rule and parameters.
#pragma once

#include <cstdint>

#include "../core/errors.hpp"

namespace tripletsearch {

enum class SearchMethod : int { GammaCKL = 0, Gauss = 1, Random = 2 };
// gamma-CKLSearch's rule for picking items near the proto-queries (see gammackl_search.hpp).
enum class Selection : int { Weighted = 0, Paper = 1, Nearest = 2, InfoGain = 3 };

// Items per query: at most kMaxChoices (the simulated users keep fixed-size buffers).
constexpr int kMaxChoices = 64;

struct SearchConfig {
  SearchMethod method = SearchMethod::GammaCKL;
  double gamma = 3.0;  // gamma-CKL likelihood (the user model)
  double r = 2.0;      // proto-queries at mean +- r sqrt(lambda) v
  double sigma = 0.1;  // GaussSearch probit noise
  int n_choices = 2;
  Selection selection = Selection::InfoGain;

  void validate() const {
    require_positive(gamma, "gamma");
    require_positive(r, "r");
    require_positive(sigma, "sigma");
    require_between(n_choices, 2, kMaxChoices, "n_choices");
  }
};

}  // namespace tripletsearch
