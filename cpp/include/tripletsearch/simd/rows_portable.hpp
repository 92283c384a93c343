// The gamma-CKL rows of the embedding's gradient, a block at a time (rows.hpp): the
// portable versions, oracle/choice.hpp's gammackl_row in a loop and oracle/row_dist.hpp's
// distances, and the scatter of a row's gradient that every model's row path uses.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../oracle/choice.hpp"
#include "../oracle/row_dist.hpp"

namespace tripletsearch {
namespace simd {

constexpr int kRowBlock = 64;  // rows per block of the row path

// A block's per-row results (rows beyond the block's count are scratch).
struct RowCoefs {
  alignas(32) double a[kRowBlock];
  alignas(32) double b[kRowBlock];
  alignas(32) double logp[kRowBlock];
  alignas(32) double dlg[kRowBlock];
};

// The rows of one block: their items and which are live (indices in range, t != i and
// t != j: rows for the model; i == j is live, p = 1/2 with no gradient).
struct RowBlock {
  std::int64_t t[kRowBlock], i[kRowBlock], j[kRowBlock];
  bool live[kRowBlock];
  int n = 0;  // rows in the block (<= kRowBlock)
};

namespace portable {

template <bool kLoss, bool kDG>
inline void gammackl_rows(const GammaPower& g, const double* Di, const double* Dj, int n,
                          RowCoefs& out) {
  for (int k = 0; k < n; ++k)
    gammackl_row<kLoss, kDG>(g, Di[k], Dj[k], out.a[k], out.b[k], out.logp[k], out.dlg[k]);
}

// g_i += a di + c e, g_j += b dj - c e, g_t -= a di + b dj for one row whose three items
// are distinct (a, b, c: ca, cb, cc; restrict: the compiler may vectorize).
template <bool kPair>
inline void scatter_row(double ca, double cb, double cc, const double* __restrict xt,
                        const double* __restrict xi, const double* __restrict xj,
                        double* __restrict gt, double* __restrict gi, double* __restrict gj,
                        std::int64_t d) {
  for (std::int64_t a = 0; a < d; ++a) {
    const double di = xi[a] - xt[a];
    const double dj = xj[a] - xt[a];
    const double vi = ca * di;
    const double vj = cb * dj;
    if constexpr (kPair) {
      const double ve = cc * (di - dj);
      gi[a] += vi + ve;
      gj[a] += vj - ve;
    } else {
      gi[a] += vi;
      gj[a] += vj;
    }
    gt[a] -= vi + vj;
  }
}

template <bool kLoss, bool kDG>
inline void gammackl_row_block(const GammaPower& g, const double* X, std::int64_t d,
                               const RowBlock& rows, double* G, RowCoefs& co) {
  alignas(32) double Di[kRowBlock], Dj[kRowBlock];
  const int n = rows.n;
  for (int k = 0; k < n; ++k) {
    Di[k] = Dj[k] = 1.0;
    if (rows.live[k]) {
      const RowDist r = row_dist<false>(X + rows.t[k] * d, X + rows.i[k] * d, X + rows.j[k] * d, d);
      Di[k] = r.Di;
      Dj[k] = r.Dj;
    }
  }
  for (int k = n; k < ((n + 3) & ~3); ++k) Di[k] = Dj[k] = 1.0;
  portable::gammackl_rows<kLoss, kDG>(g, Di, Dj, n, co);
  for (int k = 0; k < n; ++k) {
    if (!rows.live[k] || rows.i[k] == rows.j[k]) continue;  // p = 1/2 whatever X: no gradient
    const std::int64_t t = rows.t[k], i = rows.i[k], j = rows.j[k];
    portable::scatter_row<false>(co.a[k], co.b[k], 0.0, X + t * d, X + i * d, X + j * d, G + t * d,
                                 G + i * d, G + j * d, d);
  }
}

}  // namespace portable
}  // namespace simd
}  // namespace tripletsearch
