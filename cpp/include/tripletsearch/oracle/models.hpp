// The triplet oracle models: gamma-CKL, CKL, t-STE, STE and Probit.
//
// A triplet row (t, i, j) states "item i was judged closer to head t than item j", with
// Di = ||x_i - x_t||^2 and Dj = ||x_j - x_t||^2. gamma-CKL is evaluated by choice.hpp;
// CKL, t-STE and STE have the form p = sigmoid(f(Dj) - f(Di)) with f(D) = log(mu + D),
// ((alpha+1)/2) log(1 + D/alpha) and D; Probit is p = Phi((Dj - Di) / (2 sigma ||x_i - x_j||)).
//
// Conventions (mirrored by python/tripletsearch/_reference/oracles.py):
//  * coincident points: a squared distance below DBL_MIN enters a logarithm (or a ratio)
//    as DBL_MIN, so every answer is finite; its derivative there is taken as 0;
//  * Probit with x_i == x_j: p = 1/2 and zero gradient.
// The index rules (t == i, t == j, i == j) are applied by rows.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "../core/errors.hpp"
#include "../core/mathutil.hpp"
#include "../simd/rows.hpp"
#include "choice.hpp"
#include "row_dist.hpp"

namespace tripletsearch {

enum class ModelKind : int { GammaCKL = 0, CKL = 1, TSTE = 2, STE = 3, Probit = 4 };

// One model with its single parameter: gamma (gamma-CKL), mu (CKL), alpha (t-STE, already
// resolved by the caller), unused (STE), sigma (Probit).
struct OracleSpec {
  ModelKind kind = ModelKind::GammaCKL;
  double param = 3.0;

  // Throws std::invalid_argument naming the parameter when it is out of range.
  void validate() const;
  // Whether p is invariant to X -> c X (gamma-CKL; CKL with mu = 0).
  bool scale_free() const {
    return kind == ModelKind::GammaCKL || (kind == ModelKind::CKL && param == 0.0);
  }
};

// One row's log p and its gradient, as coefficients on di = x_i - x_t, dj = x_j - x_t and
// e = x_i - x_j:  g_i = a di + c e,  g_j = b dj - c e,  g_t = -(a di + b dj);
// dlg = d log p / d log gamma (gamma-CKL only).
struct RowEval {
  double logp, a, b, c, dlg;
};

// ---------------------------------------------------------------- gamma-CKL

struct GammaCKLModel {
  static constexpr bool kPairTerms = false;
  static constexpr bool kChoice = true;  // has a k-alternative choice model
  GammaPower g;

  explicit GammaCKLModel(double gamma) : g(gamma) {}

  double prob(const RowDist& r) const { return pair_choice(g, r.Di, r.Dj).prob_a(); }
  double log_prob(const RowDist& r) const {
    return pair_choice(g, r.Di, r.Dj).log_prob_a(g.half_gamma());
  }

  template <bool kLoss, bool kDG>
  RowEval eval(const RowDist& r) const {
    RowEval e{0.0, 0.0, 0.0, 0.0, 0.0};
    gammackl_row<kLoss, kDG>(g, r.Di, r.Dj, e.a, e.b, e.logp, e.dlg);
    return e;
  }

  // The coefficients of a block of rows at once (simd/rows.hpp): the gradient's pairwise
  // path uses it.
  static constexpr bool kBlockEval = true;
  template <bool kLoss, bool kDG>
  void eval_block(const double* Di, const double* Dj, int n, simd::RowCoefs& out) const {
    simd::gammackl_rows<kLoss, kDG>(g, Di, Dj, n, out);
  }
  // The row path's block: distances, coefficients, and the gradient scattered into G
  // (simd/rows.hpp's gammackl_row_block).
  template <bool kLoss, bool kDG>
  void row_block(const double* X, std::int64_t d, const simd::RowBlock& rows, double* G,
                 simd::RowCoefs& out) const {
    simd::gammackl_row_block<kLoss, kDG>(g, X, d, rows, G, out);
  }

  // out[c] = P(candidate c named | squared distances D[0..k) to the head)
  void choice(const double* D, int k, double* out) const { choice_probs(g, D, k, out); }
};

// ---------------------------------------------------------------- difference models

struct CKLKernel {
  double mu;
  double f(double D) const { return safe_log(mu + D); }
  double fprime(double D) const { return mu + D > kTinyDistance ? 1.0 / (mu + D) : 0.0; }
};

struct TSTEKernel {
  double alpha, half_ap1;  // half_ap1 = (alpha + 1) / 2
  explicit TSTEKernel(double alpha_) : alpha(alpha_), half_ap1(0.5 * (alpha_ + 1.0)) {}
  double f(double D) const { return half_ap1 * std::log1p(D / alpha); }
  double fprime(double D) const { return half_ap1 / (alpha + D); }
};

struct STEKernel {
  double f(double D) const { return D; }
  double fprime(double) const { return 1.0; }
};

// p = sigmoid(f(Dj) - f(Di)); as a Luce choice model, candidate c has weight exp(-f(D_c)).
// No gamma: eval leaves dlg at 0.
template <class K>
struct DiffModel {
  static constexpr bool kPairTerms = false;
  static constexpr bool kBlockEval = false;
  static constexpr bool kChoice = true;
  K k;

  double z(const RowDist& r) const { return k.f(r.Dj) - k.f(r.Di); }
  double prob(const RowDist& r) const { return sigmoid(z(r)); }
  double log_prob(const RowDist& r) const { return log_sigmoid(z(r)); }

  template <bool kLoss, bool kDG>
  RowEval eval(const RowDist& r) const {
    const double zz = z(r);
    const double q = sigmoid(-zz);  // d log sigmoid(z) / dz
    RowEval e{0.0, 0.0, 0.0, 0.0, 0.0};
    if constexpr (kLoss) e.logp = log_sigmoid(zz);
    e.a = -2.0 * q * k.fprime(r.Di);
    e.b = 2.0 * q * k.fprime(r.Dj);
    return e;
  }

  void choice(const double* D, int kc, double* out) const {
    double wmax = -std::numeric_limits<double>::infinity();
    for (int a = 0; a < kc; ++a) {
      out[a] = -k.f(D[a]);
      wmax = std::max(wmax, out[a]);
    }
    double total = 0.0;
    for (int a = 0; a < kc; ++a) total += (out[a] = std::exp(out[a] - wmax));
    for (int a = 0; a < kc; ++a) out[a] /= total;
  }
};

// ---------------------------------------------------------------- Probit

struct ProbitModel {
  static constexpr bool kPairTerms = true;
  static constexpr bool kBlockEval = false;
  static constexpr bool kChoice = false;
  double sigma;

  double zval(const RowDist& r) const { return r.N / (2.0 * sigma * std::sqrt(r.S2)); }
  double prob(const RowDist& r) const { return r.S2 > 0.0 ? normal_tail(zval(r)).cdf : 0.5; }
  double log_prob(const RowDist& r) const {
    return r.S2 > 0.0 ? normal_tail(zval(r)).log_cdf : -0.69314718055994530942;
  }
  template <bool kLoss, bool kDG>
  RowEval eval(const RowDist& r) const {
    if (!(r.S2 > 0.0)) return {-0.69314718055994530942, 0.0, 0.0, 0.0, 0.0};
    const double s = std::sqrt(r.S2);
    const double z = r.N / (2.0 * sigma * s);
    const NormalTail nt = normal_tail(z);
    const double B = nt.mills / (sigma * s);
    return {kLoss ? nt.log_cdf : 0.0, -B, B, -nt.mills * z / r.S2, 0.0};
  }
};

inline void OracleSpec::validate() const {
  switch (kind) {
    case ModelKind::GammaCKL:
      require_positive(param, "gamma");
      return;
    case ModelKind::CKL:
      require_nonnegative(param, "mu");
      return;
    case ModelKind::TSTE:
      require_positive(param, "alpha");
      return;
    case ModelKind::STE:
      return;
    case ModelKind::Probit:
      require_positive(param, "sigma");
      return;
  }
  throw std::invalid_argument("oracle: unknown model kind");
}

// Calls fn(model) with the concrete model of spec.
template <class Fn>
auto with_model(const OracleSpec& spec, Fn&& fn) {
  switch (spec.kind) {
    case ModelKind::GammaCKL:
      return fn(GammaCKLModel(spec.param));
    case ModelKind::CKL:
      return fn(DiffModel<CKLKernel>{CKLKernel{spec.param}});
    case ModelKind::TSTE:
      return fn(DiffModel<TSTEKernel>{TSTEKernel(spec.param)});
    case ModelKind::STE:
      return fn(DiffModel<STEKernel>{STEKernel{}});
    case ModelKind::Probit:
      return fn(ProbitModel{spec.param});
  }
  throw std::invalid_argument("oracle: unknown model kind");
}

}  // namespace tripletsearch
