// The hypothesis test of Algorithm 2 (lemma:hyptest): per cell of the tiling T(S, r_c),
// the query (x_c, x_c + (r_c/2)(1 + d) e_1) is repeated n_obs times and (H) "the target
// is in the cell" is rejected when x_c wins fewer than tau answers. The plan
// (n_obs, tau, r_c) comes from tripletsearch.theory.binomial_test_plan.
#pragma once

#include <cmath>
#include <cstdint>

namespace tripletsearch {

inline double log_gamma(double x) {
#if defined(__GLIBC__)
  int sign;
  return lgamma_r(x, &sign);  // reentrant: safe inside OpenMP regions
#else
  return std::lgamma(x);
#endif
}

// P(Binomial(n, p) >= tau), summed exactly from the threshold outward (the terms decay
// geometrically away from the mode); the complement is used below the mean.
inline double binomial_upper_tail(std::int64_t n, double p, std::int64_t tau) {
  if (tau <= 0) return 1.0;
  if (tau > n) return 0.0;
  if (!(p > 0.0)) return 0.0;
  if (!(p < 1.0)) return 1.0;
  const double lp = std::log(p), lq = std::log1p(-p), lgn = log_gamma(double(n) + 1.0);
  auto log_pmf = [&](std::int64_t k) {
    return lgn - log_gamma(double(k) + 1.0) - log_gamma(double(n - k) + 1.0) + double(k) * lp +
           double(n - k) * lq;
  };
  const double odds = p / (1.0 - p);
  if (double(tau) >= double(n) * p) {  // upper tail directly
    double term = std::exp(log_pmf(tau)), sum = 0.0;
    for (std::int64_t k = tau; k <= n && term > 0.0; ++k) {
      sum += term;
      if (term < 1e-17 * sum) break;
      term *= double(n - k) / double(k + 1) * odds;
    }
    return std::min(1.0, sum);
  }
  double term = std::exp(log_pmf(tau - 1)), sum = 0.0;  // lower tail, then complement
  for (std::int64_t k = tau - 1; k >= 0 && term > 0.0; --k) {
    sum += term;
    if (term < 1e-17 * sum) break;
    term *= double(k) / double(n - k + 1) / odds;
  }
  return std::max(0.0, 1.0 - sum);
}

}  // namespace tripletsearch
