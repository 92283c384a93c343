// Likelihoods of trials with more than a triplet per screen: ranked choices (a head, k
// candidates, r picks; Plackett-Luce: each pick a choice among the candidates left) and
// odd-one-out (three items; the odd one is the choice of the closest pair).
//
// Every trial is a sequence of choices among k alternatives, each alternative a pair of
// items (u_j, v_j) at squared distance D_j with log-weight w_j = -f(D_j): gamma-CKL
// f(D) = (gamma/2) log D (P(c) proportional to d^-gamma), CKL, t-STE and STE their own f
// (models.hpp). Rows (python/tripletsearch/trials.py's rows()):
//  * ranked: [h, p_1 .. p_r, the other candidates]; alternative j is (h, row[1 + j]); the
//    picks are alternatives 0..r-1, in order; ordered: log p = sum_s (w_s - LSE_{j>=s} w_j);
//    unordered: the log of the sum of that probability over the r! orders of the picks;
//  * odd-one-out: [a, b, o]; alternatives (a, b), (a, o), (b, o); the odd item o names the
//    pair (a, b): log p = w_0 - LSE(w_0, w_1, w_2).
// Squared distances are floored at DBL_MIN (finite answers for coincident points; the
// derivative there is 0). python/tripletsearch/_reference/trials.py is the NumPy twin.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "../core/errors.hpp"
#include "../core/interrupt.hpp"
#include "../core/parallel.hpp"
#include "../simd/dispatch.hpp"
#include "choice.hpp"
#include "gradient.hpp"
#include "models.hpp"
#include "trial_choice.hpp"

namespace tripletsearch {

// The trials of several sets, indexed as one sequence (set after set).
struct TrialSets {
  std::vector<TrialSet> sets;
  std::vector<std::int64_t> start;  // start[s]: the first global index of set s; back: total

  explicit TrialSets(std::vector<TrialSet> s) : sets(std::move(s)) {
    start.push_back(0);
    for (const TrialSet& t : sets) start.push_back(start.back() + t.m);
  }
  std::int64_t total() const { return start.back(); }
  void validate(std::int64_t n) const {
    for (const TrialSet& t : sets) t.validate(n);
  }
};

// An odd-one-out trial's gradient, each item's row of X read once and of G written once:
// with c_j = d log p / d D_j times 2 for its pairs (a, b), (a, o), (b, o),
//   G_a += c0 (x_a - x_b) + c1 (x_a - x_o), G_b += c2 (x_b - x_o) - c0 (x_a - x_b),
//   G_o -= c1 (x_a - x_o) + c2 (x_b - x_o),
// as sums of the three rows (a, b, o distinct: the rows of G do not overlap). Half the
// loads and stores of the pair by pair update (a THINGS-sized fit 65 -> 52 s on 2 cores).
TS_ALWAYS_INLINE void odd_one_out_update(const double* __restrict xa,
                                         const double* __restrict xb,
                                         const double* __restrict xo, double* __restrict ga,
                                         double* __restrict gb, double* __restrict go,
                                         std::int64_t d, double c0, double c1, double c2) {
  const double ca = c0 + c1, cb = c0 + c2, co = c1 + c2;
  for (std::int64_t k = 0; k < d; ++k) {
    const double a = xa[k], b = xb[k], o = xo[k];
    ga[k] += ca * a - c0 * b - c1 * o;
    gb[k] += cb * b - c0 * a - c2 * o;
    go[k] += co * o - c1 * a - c2 * b;
  }
}

// The kernel of a range of trials [g0, g1) of one set: sums and the gradient of log p
// added into G; written once, compiled for each ISA (simd::dynamic_dispatch).
template <bool kDG, class LW>
struct TrialRange {
  TS_ALWAYS_INLINE static LossGrad run(const LW& lw, const TrialSet& S, const double* X,
                                       std::int64_t d, std::int64_t g0, std::int64_t g1,
                                       double* G) {
    LossGrad sum;
    double D[kMaxChoices], e[kMaxChoices], dw[kMaxChoices], lws[kMaxChoices];
    const int w = S.width();
    for (std::int64_t t = g0; t < g1; ++t) {
      const std::int64_t* R = S.rows + t * w;
      for (int j = 0; j < S.k; ++j) {
        std::int64_t u, v;
        S.pair(R, j, u, v);
        D[j] = pair_sqdist(X + u * d, X + v * d, d);
      }
      double dlg = 0.0;
      sum.logp += trial_terms<kDG>(lw, S, D, e, dw, lws, dlg);
      if constexpr (kDG) sum.dlg += dlg;
      if (S.kind == TrialKind::OddOneOut && R[0] != R[1] && R[0] != R[2] && R[1] != R[2]) {
        odd_one_out_update(X + R[0] * d, X + R[1] * d, X + R[2] * d, G + R[0] * d,
                           G + R[1] * d, G + R[2] * d, d, 2.0 * e[0] * dw[0],
                           2.0 * e[1] * dw[1], 2.0 * e[2] * dw[2]);
        continue;
      }
      for (int j = 0; j < S.k; ++j) {
        const double c = 2.0 * e[j] * dw[j];  // d log p / d x_u = c (x_u - x_v)
        if (c == 0.0) continue;
        std::int64_t u, v;
        S.pair(R, j, u, v);
        const double* xu = X + u * d;
        const double* xv = X + v * d;
        double* gu = G + u * d;
        double* gv = G + v * d;
        for (std::int64_t a = 0; a < d; ++a) {
          const double y = c * (xu[a] - xv[a]);
          gu[a] += y;
          gv[a] -= y;
        }
      }
    }
    return sum;
  }
};

// Work buffers kept between calls (the trainer calls once per step).
struct TrialWorkspace {
  std::vector<double> acc, partial;
};

// G (n, d) = gradient of sum log p over every trial; returns the sums of log p and (kDG)
// of d log p / d log gamma. Chunks of the global trial sequence whose boundaries depend on
// the sizes only, private gradients merged in chunk order: identical for any thread count.
template <bool kDG, class Model>
LossGrad trials_loss_grad(const Model& model, const double* X, std::int64_t n, std::int64_t d,
                          const TrialSets& TS, double* G, TrialWorkspace& ws, int threads,
                          Cancel& cancel = no_cancel()) {
  using LW = LogWeight<Model>;
  const LW lw(model);
  const std::int64_t nd = n * d, m = TS.total();
  const std::int64_t C = grad_chunks(m, n, d);
  double* acc = sized(ws.acc, static_cast<std::size_t>(C * nd));
  double* part = sized(ws.partial, static_cast<std::size_t>(2 * C));
  ProbingBarrier done;
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static) nowait
    for (std::int64_t c = 0; c < C; ++c) {
      double* Gc = acc + c * nd;
      std::fill(Gc, Gc + nd, 0.0);
      LossGrad s;
      const std::int64_t a = chunk_begin(m, C, c), b = chunk_begin(m, C, c + 1);
      for (std::size_t q = 0; q < TS.sets.size() && !cancel.checkpoint(); ++q) {
        const std::int64_t lo = std::max(a, TS.start[q]), hi = std::min(b, TS.start[q + 1]);
        if (lo >= hi) continue;
        const LossGrad t = simd::dynamic_dispatch<TrialRange<kDG, LW>>(
            lw, TS.sets[q], X, d, lo - TS.start[q], hi - TS.start[q], Gc);
        s.logp += t.logp;
        s.dlg += t.dlg;
      }
      part[2 * c] = s.logp;
      part[2 * c + 1] = s.dlg;
    }
    done.arrive(cancel);
#pragma omp barrier
#pragma omp for schedule(static)
    for (std::int64_t k = 0; k < nd; ++k) {
      double s = 0.0;
      for (std::int64_t c = 0; c < C; ++c) s += acc[c * nd + k];
      G[k] = s;
    }
  }
  cancel.throw_if_stopped();
  return detail::sum_partials(part, C);
}

// Calls fn(model) for a model with a choice among k (Probit has none: a clear error).
template <class Fn>
auto with_choice_model(const OracleSpec& spec, Fn&& fn) {
  if (spec.kind == ModelKind::Probit)
    throw std::invalid_argument(
        "model: Probit models pairs only (triplets); ranked and odd-one-out trials need "
        "gamma-ckl, ckl, t-ste or ste");
  return with_model(spec, [&](const auto& model) {
    using M = std::decay_t<decltype(model)>;
    if constexpr (M::kPairTerms) {
      return fn(GammaCKLModel(3.0));  // never reached: Probit is refused above
    } else {
      return fn(model);
    }
  });
}

// out[t] = log p of each trial (in global order).
inline void trials_log_prob(const OracleSpec& spec, const double* X, std::int64_t n,
                            std::int64_t d, const TrialSets& TS, double* out, int threads) {
  check_call(spec, threads);
  TS.validate(n);
  with_choice_model(spec, [&](const auto& model) {
    using LW = LogWeight<std::decay_t<decltype(model)>>;
    const LW lw(model);
    for (std::size_t q = 0; q < TS.sets.size(); ++q) {
      const TrialSet& S = TS.sets[q];
      const int w = S.width();
      double* o = out + TS.start[q];
#pragma omp parallel for schedule(static) num_threads(threads)
      for (std::int64_t t = 0; t < S.m; ++t) {
        double D[kMaxChoices], e[kMaxChoices], dw[kMaxChoices], lws[kMaxChoices], dlg = 0.0;
        for (int j = 0; j < S.k; ++j) {
          std::int64_t u, v;
          S.pair(S.rows + t * w, j, u, v);
          D[j] = pair_sqdist(X + u * d, X + v * d, d);
        }
        o[t] = trial_terms<false>(lw, S, D, e, dw, lws, dlg);
      }
    }
    return 0;
  });
}

}  // namespace tripletsearch
