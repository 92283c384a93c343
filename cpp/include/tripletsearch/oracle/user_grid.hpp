// The user model the searches infer with gamma="auto" / lapse="auto": the person's gamma and
// lapse rate become part of the posterior, each on a fixed grid with a documented prior.
//
//   gamma in {0.5, 0.75, 1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32}: a prior log-uniform on
//     [0.5, 4] whose density falls as (4 / gamma)^2 beyond, up to 32 (gamma_log_prior),
//     each grid value carrying the prior mass of its cell (cell borders at the geometric
//     midpoints of neighbours);
//   lapse in {0, 0.02, 0.05, 0.1, 0.2, 0.3}: uniform over the grid.
//
// The gamma grid is chosen so that every power s^(gamma/2) comes from square roots and
// squarings only (no exp or log): s^(1/4) (even grid index) or s^(3/8) (odd index), squared
// index/2 times; exact to a few dozen ulps. Three square roots give the powers for every
// grid value at once (the database search's update: simd/hypotheses.hpp).
// python/tripletsearch/_reference/choice.py is the NumPy twin.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "choice.hpp"

namespace tripletsearch {

constexpr int kGammaGrid = 13;
constexpr double kGammaValues[kGammaGrid] = {0.5, 0.75, 1.0,  1.5,  2.0,  3.0, 4.0,
                                             6.0, 8.0,  12.0, 16.0, 24.0, 32.0};
constexpr double kGammaPriorLow = 0.5, kGammaPriorHigh = 32.0;
constexpr int kLapseGrid = 6;
constexpr double kLapseValues[kLapseGrid] = {0.0, 0.02, 0.05, 0.1, 0.2, 0.3};

// s^(kGammaValues[j] / 2) for s in [0, 1].
TS_ALWAYS_INLINE double grid_power(int j, double s) {
  const double h = std::sqrt(s), q = std::sqrt(h);
  double p = (j & 1) ? std::sqrt(h * q) : q;
  for (int e = j >> 1; e > 0; --e) p *= p;
  return p;
}

// log prior mass of grid value j, up to a constant: the integral over its cell of the
// density 1/gamma on [kGammaPriorLow, kGammaKnee] (log-uniform) and K^2 / gamma^3 on
// [kGammaKnee, kGammaPriorHigh] (falling as (K / gamma)^2 times log-uniform, continuous at
// K). Over-estimating a person's reliability is what breaks a search, under-estimating it
// costs some queries: the prior leans low.
constexpr double kGammaKnee = 4.0;
inline double gamma_log_prior(int j) {
  const double lo = j == 0 ? kGammaPriorLow : std::sqrt(kGammaValues[j - 1] * kGammaValues[j]);
  const double hi =
      j == kGammaGrid - 1 ? kGammaPriorHigh : std::sqrt(kGammaValues[j] * kGammaValues[j + 1]);
  const double K = kGammaKnee;
  double mass = 0.0;
  if (lo < K) mass += std::log(std::min(hi, K) / lo);
  if (hi > K) {
    const double a = std::max(lo, K);
    mass += 0.5 * K * K * (1.0 / (a * a) - 1.0 / (hi * hi));
  }
  return std::log(mass);
}

// The pair-answer model of a particle search: the fixed model (PairAnswerModel) or, with
// gamma and/or lapse inferred, the hypothesis (g, l) of each particle (grid indices; -1 for
// a fixed parameter).
struct UserModel {
  PairAnswerModel fixed;
  bool gamma_auto = false, lapse_auto = false;
  double log_prior[kGammaGrid];  // gamma_log_prior, once

  UserModel(double gamma, double lapse, bool gamma_auto_, bool lapse_auto_)
      : fixed(gamma, lapse), gamma_auto(gamma_auto_), lapse_auto(lapse_auto_) {
    for (int j = 0; j < kGammaGrid; ++j) log_prior[j] = gamma_log_prior(j);
  }

  bool inferred() const { return gamma_auto || lapse_auto; }
  double lapse_of(int l) const { return lapse_auto ? kLapseValues[l] : fixed.lapse; }

  // P(a named | squared distances Da, Db) under hypothesis (g, l).
  double prob(int g, int l, double Da, double Db) const {
    if (!inferred()) return fixed.prob(Da, Db);
    const double lapse = lapse_of(l);
    const double pa =
        gamma_auto ? choice(g, Da, Db).prob_a() : pair_choice(fixed.power, Da, Db).prob_a();
    return 0.5 * lapse + (1.0 - lapse) * pa;
  }
  double prob_of(int g, int l, double Da, double Db, bool a_named) const {
    const double p = prob(g, l, Da, Db);
    return a_named ? p : 1.0 - p;
  }
  double log_prob_of(int g, int l, double Da, double Db, bool a_named) const {
    if (!inferred()) return fixed.log_prob_of(Da, Db, a_named);
    if (lapse_of(l) > 0.0) return std::log(prob_of(g, l, Da, Db, a_named));
    if (!gamma_auto) return fixed.log_prob_of(Da, Db, a_named);
    // no lapse: log P to relative precision, as PairAnswerModel
    return (a_named ? choice(g, Da, Db) : choice(g, Db, Da)).log_prob_a(0.5 * kGammaValues[g]);
  }

 private:
  // choice.hpp's pair_choice with the grid power of gamma index g.
  static PairChoice<double> choice(int g, double Da, double Db) {
    Da = std::max(Da, kTinyDistance);
    Db = std::max(Db, kTinyDistance);
    PairChoice<double> c;
    c.s = std::min(Da, Db) * (1.0 / std::max(Da, Db));
    c.pw = grid_power(g, c.s);
    c.inv = 1.0 / (1.0 + c.pw);
    c.a_closer = Da <= Db;
    return c;
  }
};

}  // namespace tripletsearch
