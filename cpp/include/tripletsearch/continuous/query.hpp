// Queries of the particle methods: the candidate pair with the largest expected
// information, i.e. the variance over posterior draws of P(a named | z) (the quadratic-
// entropy information gain). Candidates: kDraws posterior draws and their mirror images
// through the weighted mean (clamped into Omega, so that every query is a point of the
// box); pairs (draw, mirror) and all pairs of draws. With the user's gamma and lapse
// inferred, each evaluation draw answers under its own hypothesis: the score accounts for
// the uncertainty about the user.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "../core/resample.hpp"
#include "../core/rng.hpp"
#include "../oracle/choice.hpp"
#include "../oracle/user_grid.hpp"
#include "particles.hpp"

namespace tripletsearch {

constexpr int kQueryDraws = 12;  // candidate draws
constexpr int kQueryEval = 256;  // draws the answer probability is averaged over

// The query (a, b) from the posterior of `parts` (weights w) in the box [lo, hi]; `edge`
// separates a and b when both candidates coincide.
inline void infogain_query(const Particles& parts, const std::vector<double>& w,
                           const UserModel& model, Rng& rng, double edge, const double* lo,
                           const double* hi, double* qa, double* qb) {
  const std::int64_t d = parts.d;
  std::vector<double> mu(static_cast<std::size_t>(d));
  parts.mean(w, mu.data());
  std::int64_t cand[kQueryDraws], eval[kQueryEval];
  systematic_resample(w.data(), parts.P, 1.0, kQueryDraws, rng.uniform(), cand);
  systematic_resample(w.data(), parts.P, 1.0, kQueryEval, rng.uniform(), eval);
  std::vector<double> pts(static_cast<std::size_t>(2 * kQueryDraws * d));
  for (int i = 0; i < kQueryDraws; ++i)
    for (std::int64_t a = 0; a < d; ++a) {
      const double x = parts.z[cand[i] * d + a];
      pts[i * d + a] = x;
      pts[(kQueryDraws + i) * d + a] = std::min(hi[a], std::max(lo[a], 2.0 * mu[a] - x));
    }
  int hg[kQueryEval], hl[kQueryEval];
  for (int s = 0; s < kQueryEval; ++s) {
    hg[s] = parts.g(eval[s]);
    hl[s] = parts.l(eval[s]);
  }
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < kQueryDraws; ++i) pairs.emplace_back(i, kQueryDraws + i);
  for (int i = 0; i < kQueryDraws; ++i)
    for (int j = i + 1; j < kQueryDraws; ++j) pairs.emplace_back(i, j);
  // squared distances from every evaluation draw to every candidate point
  std::vector<double> D(static_cast<std::size_t>(2 * kQueryDraws * kQueryEval));
  for (int c = 0; c < 2 * kQueryDraws; ++c)
    for (int s = 0; s < kQueryEval; ++s)
      D[c * kQueryEval + s] = sqdist(pts.data() + c * d, parts.z.data() + eval[s] * d, d);
  double best = -1.0;
  std::size_t arg = 0;
  for (std::size_t t = 0; t < pairs.size(); ++t) {
    const double* Da = D.data() + pairs[t].first * kQueryEval;
    const double* Db = D.data() + pairs[t].second * kQueryEval;
    double s1 = 0.0, s2 = 0.0;
    for (int s = 0; s < kQueryEval; ++s) {
      const double p = model.prob(hg[s], hl[s], Da[s], Db[s]);
      s1 += p;
      s2 += p * p;
    }
    const double var = s2 / kQueryEval - (s1 / kQueryEval) * (s1 / kQueryEval);
    if (var > best) {
      best = var;
      arg = t;
    }
  }
  for (std::int64_t a = 0; a < d; ++a) {
    qa[a] = pts[pairs[arg].first * d + a];
    qb[a] = pts[pairs[arg].second * d + a];
  }
  if (sqdist(qa, qb, d) == 0.0)  // distinct, inside the box
    qb[0] += qb[0] + 1e-9 * edge <= hi[0] ? 1e-9 * edge : -1e-9 * edge;
}

}  // namespace tripletsearch
