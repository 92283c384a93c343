// Systematic resampling, the one implementation used by the particle posteriors of the
// continuous search and by the posterior draws of the database search.
#pragma once

#include <cstdint>

namespace tripletsearch {

// n_out indices drawn with probabilities w[0..count) / total (w >= 0, unnormalized),
// ascending: out[k] is the item where the cumulative weight first exceeds (k + u0) total /
// n_out, u0 in [0, 1). Rounding at the end of the cumulative sum falls back to the last
// item of positive weight.
template <class W>
inline void systematic_resample(const W* w, std::int64_t count, double total, std::int64_t n_out,
                                double u0, std::int64_t* out) {
  const double step = total / double(n_out);
  double cum = 0.0, next = u0 * step;
  std::int64_t i = 0, last = 0;
  for (std::int64_t k = 0; k < n_out; ++k) {
    while (i < count && cum + static_cast<double>(w[i]) <= next) {
      cum += static_cast<double>(w[i]);
      if (w[i] > 0.0) last = i;
      ++i;
    }
    out[k] = i < count ? i : last;
    next += step;
  }
}

}  // namespace tripletsearch
