// The gradient of the log-likelihood of triplet rows with respect to the embedding, and the
// sum of log p with it (the embedding trainer's objective). Two paths, both bitwise
// identical for any thread count (chunk boundaries depend on the problem size only,
// private accumulators merged in chunk order):
//  * rows: per row the model's coefficients, scattered into private gradients;
//  * pairwise, for dense sets (m >> n^2, e.g. 190k triplets on 100 items): squared
//    distances of all item pairs once, per row two lookups and two additions into a
//    pair-weight matrix W, then G = L X with the Laplacian of W + W^T.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "../core/interrupt.hpp"
#include "../core/linalg.hpp"
#include "../core/parallel.hpp"
#include "choice.hpp"
#include "models.hpp"
#include "rows.hpp"

namespace tripletsearch {

// Sums over the rows of one call: sum of log p and of d log p / d log gamma.
struct LossGrad {
  double logp = 0.0, dlg = 0.0;
};

// Buffers of the gradient kernels, kept between calls (the trainer calls them once per
// step): no allocation after the first call of a given size.
struct GradWorkspace {
  std::vector<double> acc;      // rows: private gradients; pairwise: pair weights
  std::vector<double> dist;     // pairwise: squared distances of all item pairs
  std::vector<double> partial;  // per chunk: sum log p, sum dlg
};

template <class T>
T* sized(std::vector<T>& v, std::size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

// Row path over rows [r0, r1): adds gradients into G and returns the row sums. Rows
// naming the head (index rule) and rows with i == j (p = 1/2 whatever X) contribute zero
// gradient; the index rule's log p (0 or -inf) enters the sum. `ok` is cleared when a row
// has an index out of range (that row is skipped). A block of rows at a time: the block
// models (gamma-CKL) by one kernel of the active ISA (simd/rows.hpp: distances,
// coefficients and scatter); the others coefficients first (independent rows: the
// divisions overlap), then the scatter.
template <bool kLoss, bool kDG, class Model>
LossGrad rows_loss_grad(const Model& model, const Problem& P, std::int64_t r0, std::int64_t r1,
                        double* G, bool& ok, Cancel& cancel) {
  constexpr std::int64_t kBlock = simd::kRowBlock;
  const std::int64_t d = P.d;
  LossGrad sum;
  simd::RowBlock rows;
  RowKind kinds[kBlock];
  for (std::int64_t b0 = r0; b0 < r1; b0 += kBlock) {
    if (cancel.checkpoint()) return sum;
    const std::int64_t nb = std::min(kBlock, r1 - b0);
    rows.n = static_cast<int>(nb);
    for (std::int64_t k = 0; k < nb; ++k) {
      kinds[k] = classify_row(P, b0 + k, rows.t[k], rows.i[k], rows.j[k]);
      rows.live[k] = kinds[k] == RowKind::Live;
      if (kinds[k] == RowKind::OutOfRange) ok = false;
    }
    if constexpr (Model::kBlockEval) {
      simd::RowCoefs co;
      model.template row_block<kLoss, kDG>(P.X, d, rows, G, co);
      for (std::int64_t k = 0; k < nb; ++k) {
        if (kinds[k] != RowKind::Live) {
          if (kLoss && kinds[k] != RowKind::OutOfRange) sum.logp += rule_log_prob(kinds[k]);
          continue;
        }
        if constexpr (kLoss) sum.logp += co.logp[k];
        if constexpr (kDG) sum.dlg += co.dlg[k];
      }
    } else {
      RowEval ev[kBlock];
      for (std::int64_t k = 0; k < nb; ++k) {
        ev[k] = RowEval{0.0, 0.0, 0.0, 0.0, 0.0};
        if (kinds[k] == RowKind::Live)
          ev[k] =
              model.template eval<kLoss, kDG>(live_row<Model>(P, rows.t[k], rows.i[k], rows.j[k]));
        else if (kLoss && kinds[k] != RowKind::OutOfRange)
          ev[k].logp = rule_log_prob(kinds[k]);
      }
      for (std::int64_t k = 0; k < nb; ++k) {
        if constexpr (kLoss) sum.logp += ev[k].logp;
        if constexpr (kDG) sum.dlg += ev[k].dlg;
        // the index rule, i == j (p = 1/2) and bad rows have no gradient
        if (kinds[k] != RowKind::Live || rows.i[k] == rows.j[k]) continue;
        const std::int64_t t = rows.t[k], i = rows.i[k], j = rows.j[k];
        simd::portable::scatter_row<Model::kPairTerms>(ev[k].a, ev[k].b, ev[k].c, P.X + t * d,
                                                       P.X + i * d, P.X + j * d, G + t * d,
                                                       G + i * d, G + j * d, d);
      }
    }
  }
  return sum;
}

// Number of private accumulators for the row path: a function of (m, n, d) only, so the
// summation order, and hence every bit of the result, is the same for any thread count.
// The accumulators hold at most 2^23 doubles, and at most a quarter of a double per row
// (2 bytes per row: a sixth of int32 rows) unless that leaves fewer than four: memory, and
// the zeroing and merging per gradient, stay small beside the rows.
inline std::int64_t grad_chunks(std::int64_t m, std::int64_t n, std::int64_t d) {
  const std::int64_t nd = std::max<std::int64_t>(1, n * d);
  const std::int64_t budget =
      std::min<std::int64_t>(std::int64_t(1) << 23, std::max<std::int64_t>(m / 4, 4 * nd));
  return balanced_chunks(std::min(m / std::max<std::int64_t>(1, 2 * n), budget / nd));
}

// The pairwise path for dense sets (difference-form models: Probit's third pair term stays
// on the row path).
inline bool use_pairwise(std::int64_t m, std::int64_t n) { return n * n <= m / 4 && n <= 4096; }

// Private pair-weight matrices for the pairwise path: a function of (m, n) only.
inline std::int64_t pair_chunks(std::int64_t m, std::int64_t n) {
  const std::int64_t nn = std::max<std::int64_t>(1, n * n);
  return balanced_chunks(std::min(m / nn, (std::int64_t(1) << 24) / nn));
}

namespace detail {

// Rows [r0, r1) into the pair weights Wc (n x n): W[t, i] += a, W[t, j] += b per row.
template <bool kLoss, bool kDG, class Model>
LossGrad pair_weights(const Model& model, const Problem& P, const double* D, std::int64_t r0,
                      std::int64_t r1, double* Wc, bool& bad) {
  const std::int64_t n = P.n;
  LossGrad s;
  if constexpr (Model::kBlockEval) {  // the rows' coefficients a block at a time
    constexpr std::int64_t kBlock = simd::kRowBlock;
    alignas(32) double Di[kBlock], Dj[kBlock];
    std::int64_t ti[kBlock], tj[kBlock];  // the rows' pairs in D and Wc; -1: no pair term
    RowKind kinds[kBlock];
    simd::RowCoefs co;
    for (std::int64_t b0 = r0; b0 < r1; b0 += kBlock) {
      const std::int64_t nb = std::min(kBlock, r1 - b0);
      for (std::int64_t k = 0; k < nb; ++k) {
        std::int64_t t, i, j;
        kinds[k] = classify_row(P, b0 + k, t, i, j);
        Di[k] = Dj[k] = 1.0;
        ti[k] = tj[k] = -1;
        if (kinds[k] == RowKind::Live && i != j) {
          ti[k] = t * n + i;
          tj[k] = t * n + j;
          Di[k] = D[ti[k]];
          Dj[k] = D[tj[k]];
        }
      }
      for (std::int64_t k = nb; k < ((nb + 3) & ~std::int64_t(3)); ++k) Di[k] = Dj[k] = 1.0;
      model.template eval_block<kLoss, kDG>(Di, Dj, static_cast<int>(nb), co);
      for (std::int64_t k = 0; k < nb; ++k) {  // in row order, as the scalar loop below
        if (kinds[k] != RowKind::Live) {
          bad = bad || kinds[k] == RowKind::OutOfRange;
          if (kLoss && kinds[k] != RowKind::OutOfRange) s.logp += rule_log_prob(kinds[k]);
          continue;
        }
        if (ti[k] < 0) {  // i == j: p = 1/2, no gradient
          if constexpr (kLoss) s.logp += -0.69314718055994530942;
          continue;
        }
        if constexpr (kLoss) s.logp += co.logp[k];
        if constexpr (kDG) s.dlg += co.dlg[k];
        Wc[ti[k]] += co.a[k];
        Wc[tj[k]] += co.b[k];
      }
    }
    return s;
  }
  for (std::int64_t r = r0; r < r1; ++r) {
    std::int64_t t, i, j;
    const RowKind kind = classify_row(P, r, t, i, j);
    if (kind != RowKind::Live) {
      bad = bad || kind == RowKind::OutOfRange;
      if (kLoss && kind != RowKind::OutOfRange) s.logp += rule_log_prob(kind);
      continue;
    }
    if (i == j) {  // p = 1/2, no gradient
      if constexpr (kLoss) s.logp += -0.69314718055994530942;
      continue;
    }
    const RowEval e =
        model.template eval<kLoss, kDG>(RowDist{D[t * n + i], D[t * n + j], 0.0, 0.0});
    if constexpr (kLoss) s.logp += e.logp;
    if constexpr (kDG) s.dlg += e.dlg;
    Wc[t * n + i] += e.a;
    Wc[t * n + j] += e.b;
  }
  return s;
}

// Inside a parallel region: D[t, k] = ||x_k - x_t||^2 for all pairs.
inline void all_pair_sqdist(const Problem& P, double* D) {
  const std::int64_t n = P.n, d = P.d;
#pragma omp for schedule(static)
  for (std::int64_t t = 0; t < n; ++t)
    for (std::int64_t k = 0; k < n; ++k) D[t * n + k] = sqdist(P.X + k * d, P.X + t * d, d);
}

// Inside a parallel region: W[0] <- sum_c W[c] (in chunk order), then
// g_k = sum_t (W[t,k] + W[k,t]) (x_k - x_t): row t's item k moved with weight W[t,k].
inline void laplacian_apply(const Problem& P, double* W, std::int64_t C, double* G) {
  const std::int64_t n = P.n, d = P.d, nn = n * n;
#pragma omp for schedule(static)
  for (std::int64_t k = 0; k < nn; ++k) {
    double s = W[k];
    for (std::int64_t c = 1; c < C; ++c) s += W[c * nn + k];
    W[k] = s;
  }
#pragma omp for schedule(static)
  for (std::int64_t k = 0; k < n; ++k) {
    double* gk = G + k * d;
    const double* xk = P.X + k * d;
    std::fill(gk, gk + d, 0.0);
    for (std::int64_t t = 0; t < n; ++t) {
      const double w = W[t * n + k] + W[k * n + t];
      if (w == 0.0) continue;
      const double* xt = P.X + t * d;
      for (std::int64_t a = 0; a < d; ++a) gk[a] += w * (xk[a] - xt[a]);
    }
  }
}

inline LossGrad sum_partials(const double* part, std::int64_t C) {
  LossGrad sum;
  for (std::int64_t c = 0; c < C; ++c) {
    sum.logp += part[2 * c];
    sum.dlg += part[2 * c + 1];
  }
  return sum;
}

}  // namespace detail

template <bool kLoss, bool kDG, class Model>
LossGrad pairwise_loss_grad(const Model& model, const Problem& P, double* G, GradWorkspace& ws,
                            int threads, Cancel& cancel) {
  const std::int64_t nn = P.n * P.n;
  const std::int64_t C = pair_chunks(P.m, P.n);
  double* D = sized(ws.dist, static_cast<std::size_t>(nn));
  double* W = sized(ws.acc, static_cast<std::size_t>(C * nn));
  double* part = sized(ws.partial, static_cast<std::size_t>(2 * C));
  bool bad = false;
  ProbingBarrier done;
#pragma omp parallel num_threads(threads)
  {
    detail::all_pair_sqdist(P, D);
#pragma omp for schedule(static) reduction(|| : bad) nowait
    for (std::int64_t c = 0; c < C; ++c) {
      double* Wc = W + c * nn;
      std::fill(Wc, Wc + nn, 0.0);
      if (cancel.checkpoint()) continue;
      const LossGrad s = detail::pair_weights<kLoss, kDG>(model, P, D, chunk_begin(P.m, C, c),
                                                          chunk_begin(P.m, C, c + 1), Wc, bad);
      part[2 * c] = s.logp;
      part[2 * c + 1] = s.dlg;
    }
    done.arrive(cancel);
#pragma omp barrier
    detail::laplacian_apply(P, W, C, G);
  }
  cancel.throw_if_stopped();
  if (bad) throw_bad_triplets(P);
  return detail::sum_partials(part, C);
}

// G (n, d) = gradient of sum_r log p_r with respect to X; returns the sums of log p (when
// kLoss) and of d log p / d log gamma (when kDG). Bitwise identical for any thread count.
template <bool kLoss, bool kDG, class Model>
LossGrad loss_grad(const Model& model, const Problem& P, double* G, GradWorkspace& ws, int threads,
                   Cancel& cancel = no_cancel()) {
  if constexpr (!Model::kPairTerms) {
    if (use_pairwise(P.m, P.n))
      return pairwise_loss_grad<kLoss, kDG>(model, P, G, ws, threads, cancel);
  }
  const std::int64_t nd = P.n * P.d;
  const std::int64_t C = grad_chunks(P.m, P.n, P.d);
  bool ok = true;
  if (C == 1) {
    std::fill(G, G + nd, 0.0);
    const LossGrad sum = rows_loss_grad<kLoss, kDG>(model, P, 0, P.m, G, ok, cancel);
    cancel.throw_if_stopped();
    if (!ok) throw_bad_triplets(P);
    return sum;
  }
  double* acc = sized(ws.acc, static_cast<std::size_t>(C * nd));
  double* part = sized(ws.partial, static_cast<std::size_t>(2 * C));
  bool bad = false;
  ProbingBarrier done;
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static) reduction(|| : bad) nowait
    for (std::int64_t c = 0; c < C; ++c) {
      double* Gc = acc + c * nd;
      std::fill(Gc, Gc + nd, 0.0);
      if (cancel.checkpoint()) continue;
      bool chunk_ok = true;
      const LossGrad s = rows_loss_grad<kLoss, kDG>(
          model, P, chunk_begin(P.m, C, c), chunk_begin(P.m, C, c + 1), Gc, chunk_ok, cancel);
      part[2 * c] = s.logp;
      part[2 * c + 1] = s.dlg;
      bad = bad || !chunk_ok;
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
  if (bad) throw_bad_triplets(P);
  return detail::sum_partials(part, C);
}

inline void grad(const OracleSpec& spec, const Problem& P, double* G, int threads,
                 Cancel& cancel = no_cancel()) {
  check_call(spec, threads);
  const SafeScale safe(spec, P.X, P.n, P.d);
  GradWorkspace ws;
  with_model(spec, [&](const auto& model) {
    loss_grad<false, false>(model, scaled(P, safe), G, ws, threads, cancel);
  });
  // d/dX f(c X) = c f'(c X), c = 2^exponent: the gradient at the scaled embedding, times c
  if (safe.exponent() == 0) return;
  for (std::int64_t k = 0; k < P.n * P.d; ++k) G[k] = std::ldexp(G[k], safe.exponent());
  if (!all_finite(G, P.n * P.d))  // the gradient scales as 1 / X: it may itself overflow
    throw std::invalid_argument(
        "X: at coordinates this small the gradient overflows double precision; rescale the "
        "embedding");
}

}  // namespace tripletsearch
