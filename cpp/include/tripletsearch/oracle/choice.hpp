// The gamma-CKL choice maths: the one place in the core where the scale-free oracle's
// probabilities are written (the paper's Eq. 2 and its k-alternative extension).
//
// A user with target z, shown candidates at squared distances D_c from z, names candidate
// c with probability D_c^(-gamma/2) / sum_j D_j^(-gamma/2). Every evaluation goes through
// ratios s = (smaller distance) / (larger distance) <= 1, computed as smaller * (1 /
// larger), and the power s^(gamma/2): nothing overflows for any gamma or coordinate scale.
// Squared distances are floored at the smallest normal number of the precision T
// (coincident points give finite answers). Templates on T serve float and double kernels.
//
// Users: the oracle models (oracle/models.hpp), the database search posterior and its
// information-gain scores, the continuous search's answer model, the simulated users and
// the Monte-Carlo estimate of Theorem 2.1. python/tripletsearch/_reference/choice.py is
// the NumPy twin.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "../core/mathutil.hpp"

namespace tripletsearch {

// Items per query: at most kMaxChoices (the simulated users and the kernels keep
// fixed-size buffers).
constexpr int kMaxChoices = 64;

// Squared Euclidean distance ||x - y||^2, accumulated in order in precision Acc.
template <class Acc = double, class T, class U>
TS_ALWAYS_INLINE Acc sqdist(const T* x, const U* y, std::int64_t d) {
  Acc s = 0;
  for (std::int64_t a = 0; a < d; ++a) {
    const Acc u = static_cast<Acc>(x[a]) - static_cast<Acc>(y[a]);
    s += u * u;
  }
  return s;
}

// The power s^(gamma/2) for s in [0, 1]. An integer gamma in [1, 256] is raised by
// repeated squaring (one sqrt for odd gamma) instead of exp/log: faster, and exact to a few
// ulps for any s.
class GammaPower {
 public:
  explicit GammaPower(double gamma) : half_gamma_(0.5 * gamma), int_gamma_(integer_gamma(gamma)) {}

  // gamma as an integer in [1, 256], or -1 (then the power goes through exp and log).
  static int integer_gamma(double gamma) {
    return (gamma == std::floor(gamma) && gamma >= 1.0 && gamma <= 256.0) ? int(gamma) : -1;
  }

  double half_gamma() const { return half_gamma_; }
  bool integer() const { return int_gamma_ > 0; }  // the power by repeated squaring

  template <class T>
  TS_ALWAYS_INLINE T operator()(T s) const {
    if (int_gamma_ > 0) {
      T pw = (int_gamma_ & 1) ? std::sqrt(s) : T(1);
      for (int e = int_gamma_ >> 1; e > 0; e >>= 1) {
        if (e & 1) pw *= s;
        s *= s;
      }
      return pw;
    }
    return std::exp(static_cast<T>(half_gamma_) * std::log(s));
  }

  // s[l] <- s[l]^(gamma/2) for l < n: the same arithmetic as operator(), the exponent loop
  // outside the lane loop so that the lanes vectorize. `base`: n values of scratch.
  template <class T>
  TS_ALWAYS_INLINE void lanes(T* __restrict s, int n, T* __restrict base) const {
    if (int_gamma_ > 0) {
      for (int l = 0; l < n; ++l) {
        base[l] = s[l];
        s[l] = (int_gamma_ & 1) ? std::sqrt(s[l]) : T(1);
      }
      for (int e = int_gamma_ >> 1; e > 0; e >>= 1) {
        if (e & 1)
          for (int l = 0; l < n; ++l) s[l] *= base[l];
        for (int l = 0; l < n; ++l) base[l] *= base[l];
      }
    } else {
      const T hg = static_cast<T>(half_gamma_);
      for (int l = 0; l < n; ++l) s[l] = std::exp(hg * std::log(s[l]));
    }
  }

 private:
  double half_gamma_;
  int int_gamma_;
};

// The answer to a pair query (a, b): P(a named | Da, Db) = Db^(g/2) / (Da^(g/2) + Db^(g/2)).
template <class T>
struct PairChoice {
  T s;            // min(Da, Db) / max(Da, Db) in [0, 1]
  T pw;           // s^(gamma/2)
  T inv;          // 1 / (1 + pw)
  bool a_closer;  // Da <= Db

  T prob_a() const {  // picked by index: the comparison is a coin flip, a branch mispredicts
    const T num[2] = {pw, T(1)};
    return num[a_closer] * inv;
  }
  T prob_b() const {
    const T num[2] = {T(1), pw};
    return num[a_closer] * inv;
  }
  T prob_closer() const { return inv; }
  // log P(a named), accurate to relative precision.
  T log_prob_a(T half_gamma) const {
    return a_closer ? -std::log1p(pw) : half_gamma * std::log(s) - std::log1p(pw);
  }
  // log P(a named) to absolute accuracy (what a sum of log-likelihoods needs), one log.
  T log_prob_a_abs(T half_gamma) const {
    const T p = prob_a();
    return p > T(1e-300) ? std::log(p) : half_gamma * std::log(s) - std::log1p(pw);
  }
  // The log-odds z = log(P(a) / P(b)) = (gamma/2) log(Db / Da).
  T log_odds(T half_gamma) const {
    const T z = half_gamma * std::log(s);
    return a_closer ? -z : z;
  }
};

// Da, Db already floored, with their reciprocals ra = 1/Da, rb = 1/Db at hand (the gradient
// needs them): s = min(Db ra, Da rb), which is bitwise min(Da, Db) * (1 / max(Da, Db)).
template <class T>
TS_ALWAYS_INLINE PairChoice<T> pair_choice_floored(const GammaPower& g, T Da, T Db, T ra, T rb) {
  PairChoice<T> c;
  c.s = std::min(Db * ra, Da * rb);
  c.pw = g(c.s);
  c.inv = T(1) / (T(1) + c.pw);
  c.a_closer = Da <= Db;
  return c;
}

template <class T>
TS_ALWAYS_INLINE PairChoice<T> pair_choice(const GammaPower& g, T Da, T Db) {
  Da = std::max(Da, tiny_distance<T>());
  Db = std::max(Db, tiny_distance<T>());
  PairChoice<T> c;
  c.s = std::min(Da, Db) * (T(1) / std::max(Da, Db));
  c.pw = g(c.s);
  c.inv = T(1) / (T(1) + c.pw);
  c.a_closer = Da <= Db;
  return c;
}

// One triplet row of the gamma-CKL objective from its squared distances Di (head to the
// item named closer) and Dj: log p (when kLoss), the gradient coefficients a, b of log p on
// x_i - x_t and x_j - x_t (models.hpp's RowEval), d log p / d log gamma (when kDG). The
// block kernels (simd/rows.hpp) compute the same, four rows at a time.
template <bool kLoss, bool kDG>
TS_ALWAYS_INLINE void gammackl_row(const GammaPower& g, double Di0, double Dj0, double& a,
                                   double& b, double& logp, double& dlg) {
  const double Di = std::max(Di0, kTinyDistance), Dj = std::max(Dj0, kTinyDistance);
  const double ri = 1.0 / Di, rj = 1.0 / Dj;
  const PairChoice<double> c = pair_choice_floored(g, Di, Dj, ri, rj);
  const double q = c.prob_b();  // d log p / dz, z the log-odds
  if constexpr (kLoss) logp = c.log_prob_a_abs(g.half_gamma());
  const double cq = 2.0 * g.half_gamma() * q;
  a = Di0 > kTinyDistance ? -cq * ri : 0.0;  // f'(D) = 0 below the floor
  b = Dj0 > kTinyDistance ? cq * rj : 0.0;
  if constexpr (kDG) dlg = q * c.log_odds(g.half_gamma());  // z is proportional to gamma
}

// k-alternative choice: out[c] = P(c named | D[0..k)) for every candidate c.
template <class T>
inline void choice_probs(const GammaPower& g, const T* D, int k, T* out) {
  T dmin = std::max(D[0], tiny_distance<T>());
  for (int j = 1; j < k; ++j) dmin = std::min(dmin, std::max(D[j], tiny_distance<T>()));
  T total = 0;
  for (int j = 0; j < k; ++j) {
    out[j] = g(dmin * (T(1) / std::max(D[j], tiny_distance<T>())));
    total += out[j];
  }
  const T inv = T(1) / total;
  for (int j = 0; j < k; ++j) out[j] *= inv;
}

// Likelihood of one answer for L targets at once: lik[l] = P(candidate `chosen` named |
// target l), D: k x L squared distances (candidate-major). The arithmetic of pair_choice
// (k = 2) and choice_probs, lane-wise; scratch: 4 L values.
template <class T, int L>
TS_ALWAYS_INLINE void choice_lik_lanes(const GammaPower& g, const T* __restrict D, int k,
                                       int chosen, T* __restrict lik, T* __restrict scratch) {
  const T tiny = tiny_distance<T>();
  T* s = scratch;
  T* base = scratch + L;
  if (k == 2) {
    const T* Dc = D + chosen * L;
    const T* Do = D + (1 - chosen) * L;
    for (int l = 0; l < L; ++l) {
      const T a = std::max(Dc[l], tiny), b = std::max(Do[l], tiny);
      s[l] = std::min(a, b) * (T(1) / std::max(a, b));
    }
    g.lanes(s, L, base);
    for (int l = 0; l < L; ++l) {
      const T num = std::max(Dc[l], tiny) <= std::max(Do[l], tiny) ? T(1) : s[l];
      lik[l] = num * (T(1) / (T(1) + s[l]));
    }
    return;
  }
  T* dmin = scratch + 2 * L;
  T* den = scratch + 3 * L;
  for (int l = 0; l < L; ++l) {
    T m = std::max(D[l], tiny);
    for (int j = 1; j < k; ++j) m = std::min(m, std::max(D[j * L + l], tiny));
    dmin[l] = m;
    den[l] = 0;
  }
  for (int j = 0; j < k; ++j) {
    for (int l = 0; l < L; ++l) s[l] = dmin[l] * (T(1) / std::max(D[j * L + l], tiny));
    g.lanes(s, L, base);
    for (int l = 0; l < L; ++l) den[l] += s[l];
    if (j == chosen)
      for (int l = 0; l < L; ++l) lik[l] = s[l];
  }
  for (int l = 0; l < L; ++l) lik[l] *= T(1) / den[l];
}

// Relative choice weights u[s] = (dmin[s] / D[s])^(gamma/2) of one candidate for n targets,
// dmin[s] the smallest squared distance of any candidate to target s (so u <= 1; D floored).
template <class T>
TS_ALWAYS_INLINE void relative_weights(const GammaPower& g, const T* __restrict dmin, int n,
                                       T* __restrict u /* in: D, out: weights */,
                                       T* __restrict base /* n scratch */) {
  for (int l = 0; l < n; ++l) u[l] = dmin[l] * (T(1) / u[l]);
  g.lanes(u, n, base);
}

// gamma-CKL answers to pair queries with a lapse rate: with probability `lapse` the answer is
// a coin flip, P(a named) = lapse / 2 + (1 - lapse) p.
struct PairAnswerModel {
  GammaPower power;
  double lapse;

  PairAnswerModel(double gamma, double lapse_) : power(gamma), lapse(lapse_) {}

  double prob(double Da, double Db) const {
    return 0.5 * lapse + (1.0 - lapse) * pair_choice(power, Da, Db).prob_a();
  }
  // P(the answer given): "a" when a_named, else "b".
  double prob_of(double Da, double Db, bool a_named) const {
    const double p = prob(Da, Db);
    return a_named ? p : 1.0 - p;
  }
  double log_prob_of(double Da, double Db, bool a_named) const {
    if (lapse > 0.0) return std::log(prob_of(Da, Db, a_named));
    return a_named ? pair_choice(power, Da, Db).log_prob_a(power.half_gamma())
                   : pair_choice(power, Db, Da).log_prob_a(power.half_gamma());
  }
};

}  // namespace tripletsearch
