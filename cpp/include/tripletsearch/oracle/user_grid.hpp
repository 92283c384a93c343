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
// index/2 times; exact to a few dozen ulps. One pass of three square roots gives the powers
// for every grid value (the database search's likelihood update for the whole grid).
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

// Every grid power at once: out[j] = s^(kGammaValues[j] / 2), j < kGammaGrid.
TS_ALWAYS_INLINE void grid_powers(double s, double* out) {
  const double h = std::sqrt(s);
  double even = std::sqrt(h), odd = std::sqrt(h * even);
  for (int j = 0; j < kGammaGrid; j += 2) {
    out[j] = even;
    if (j + 1 < kGammaGrid) out[j + 1] = odd;
    even *= even;
    odd *= odd;
  }
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

  UserModel(double gamma, double lapse, bool gamma_auto_, bool lapse_auto_)
      : fixed(gamma, lapse), gamma_auto(gamma_auto_), lapse_auto(lapse_auto_) {}

  bool inferred() const { return gamma_auto || lapse_auto; }
  double lapse_of(int l) const { return lapse_auto ? kLapseValues[l] : fixed.lapse; }

  // P(a named | squared distances Da, Db) under hypothesis (g, l).
  double prob(int g, int l, double Da, double Db) const {
    if (!inferred()) return fixed.prob(Da, Db);
    const double lapse = lapse_of(l);
    return 0.5 * lapse + (1.0 - lapse) * prob_a(g, Da, Db);
  }
  double prob_of(int g, int l, double Da, double Db, bool a_named) const {
    const double p = prob(g, l, Da, Db);
    return a_named ? p : 1.0 - p;
  }
  double log_prob_of(int g, int l, double Da, double Db, bool a_named) const {
    if (!inferred()) return fixed.log_prob_of(Da, Db, a_named);
    const double lapse = lapse_of(l);
    if (lapse > 0.0) return std::log(prob_of(g, l, Da, Db, a_named));
    if (!gamma_auto) return fixed.log_prob_of(Da, Db, a_named);
    // no lapse: log P to relative precision (s^(gamma/2) may underflow)
    const double Dn = std::max(a_named ? Da : Db, kTinyDistance);
    const double Do = std::max(a_named ? Db : Da, kTinyDistance);
    const double s = std::min(Dn, Do) * (1.0 / std::max(Dn, Do));
    const double pw = grid_power(g, s);
    if (Dn <= Do) return -std::log1p(pw);
    return (pw > 1e-300 ? std::log(pw) : 0.5 * kGammaValues[g] * std::log(s)) - std::log1p(pw);
  }

 private:
  double prob_a(int g, double Da, double Db) const {
    if (!gamma_auto) return pair_choice(fixed.power, Da, Db).prob_a();
    Da = std::max(Da, kTinyDistance);
    Db = std::max(Db, kTinyDistance);
    const double s = std::min(Da, Db) * (1.0 / std::max(Da, Db));
    const double pw = grid_power(g, s);
    return (Da <= Db ? 1.0 : pw) * (1.0 / (1.0 + pw));  // choice.hpp's rounding
  }
};

}  // namespace tripletsearch
