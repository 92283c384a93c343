// Monte-Carlo estimate of p_Q (Theorem 2.1): the probability that the gamma-CKL oracle
// answers a query (x_a, x_b), both uniform in the unit d-ball, correctly for a target at
// the centre. Independent of the closed form and of the quadrature in theory.py.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../core/errors.hpp"
#include "../core/interrupt.hpp"
#include "../core/parallel.hpp"
#include "../core/rng.hpp"
#include "../oracle/choice.hpp"

namespace tripletsearch {

struct MeanStderr {
  double mean, stderr_;
};

// Squared norm of a uniform point in the unit d-ball: Gaussian direction, radius U^(1/d).
inline double ball_point_sq_norm(Rng& rng, std::int64_t d, double* buf) {
  double s = 0.0;
  for (std::int64_t a = 0; a < d; ++a) {
    buf[a] = rng.normal();
    s += buf[a] * buf[a];
  }
  const double radius = std::pow(rng.uniform_open(), 1.0 / double(d));
  const double scale = radius / std::sqrt(s);
  double sq = 0.0;
  for (std::int64_t a = 0; a < d; ++a) {
    const double x = buf[a] * scale;
    sq += x * x;
  }
  return sq;
}

// Samples in chunks of 8192, chunk c from stream (seed, c), sums merged in chunk order.
inline MeanStderr p_correct_monte_carlo(double gamma, std::int64_t d, std::int64_t n_samples,
                                        std::uint64_t seed, int threads,
                                        Cancel& cancel = no_cancel()) {
  require_positive(gamma, "gamma");
  require_at_least<std::int64_t>(d, 1, "dim");
  require_at_least<std::int64_t>(n_samples, 1, "n_samples");
  require_at_least(threads, 1, "n_jobs");
  constexpr std::int64_t kChunk = 8192;
  const std::int64_t n_chunks = (n_samples + kChunk - 1) / kChunk;
  require_allocation(16.0 * double(n_chunks) + 8.0 * double(d) * threads, "n_samples, dim");
  std::vector<double> sum(static_cast<std::size_t>(n_chunks)), sum2(sum.size());
  const GammaPower power(gamma);
  ParallelErrors errors;
  ProbingBarrier done;
#pragma omp parallel num_threads(threads)
  {
    std::vector<double> buf;
    errors.run([&] { buf.resize(static_cast<std::size_t>(d)); });
#pragma omp for schedule(static) nowait
    for (std::int64_t c = 0; c < n_chunks; ++c) {
      if (errors.failed() || cancel.checkpoint()) continue;
      Rng rng(seed, static_cast<std::uint64_t>(c));
      const std::int64_t end = std::min(n_samples, (c + 1) * kChunk);
      double s = 0.0, s2 = 0.0;
      for (std::int64_t k = c * kChunk; k < end; ++k) {
        const double Da = ball_point_sq_norm(rng, d, buf.data());
        const double Db = ball_point_sq_norm(rng, d, buf.data());
        const double p = pair_choice(power, Da, Db).prob_closer();
        s += p;
        s2 += p * p;
      }
      sum[static_cast<std::size_t>(c)] = s;
      sum2[static_cast<std::size_t>(c)] = s2;
    }
    done.arrive(cancel);
  }
  errors.rethrow();
  cancel.throw_if_stopped();
  double s = 0.0, s2 = 0.0;
  for (std::size_t c = 0; c < sum.size(); ++c) {
    s += sum[c];
    s2 += sum2[c];
  }
  const double nn = double(n_samples);
  const double mean = s / nn;
  const double var = n_samples > 1 ? std::max(0.0, (s2 - nn * mean * mean) / (nn - 1.0)) : 0.0;
  return {mean, std::sqrt(var / nn)};
}

}  // namespace tripletsearch
