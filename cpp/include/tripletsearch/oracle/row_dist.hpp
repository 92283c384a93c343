// The squared distances of a triplet row (t, i, j): Di = ||x_i - x_t||^2 and
// Dj = ||x_j - x_t||^2 (and Probit's pair terms), as every model's row kernels and the
// portable row-block kernel (simd/rows_portable.hpp) compute them.
#pragma once

#include <cstdint>

namespace tripletsearch {

// Per-row distance summary. N = Dj - Di and S2 = ||x_i - x_j||^2 only for Probit.
struct RowDist {
  double Di, Dj, N, S2;
};

// Squared distances of one row, accumulated in two interleaved partial sums (even and odd
// coordinates): this halves the latency chain of the reduction and maps onto one SIMD
// register. With kPair, also N = Dj - Di and S2 = ||x_i - x_j||^2 (Probit). The order
// depends on d only, so results stay deterministic.
template <bool kPair>
inline RowDist row_dist(const double* xt, const double* xi, const double* xj, std::int64_t d) {
  double Di0 = 0.0, Di1 = 0.0, Dj0 = 0.0, Dj1 = 0.0;
  double N0 = 0.0, N1 = 0.0, S0 = 0.0, S1 = 0.0;
  std::int64_t a = 0;
  for (; a + 2 <= d; a += 2) {
    const double di0 = xi[a] - xt[a], di1 = xi[a + 1] - xt[a + 1];
    const double dj0 = xj[a] - xt[a], dj1 = xj[a + 1] - xt[a + 1];
    Di0 += di0 * di0;
    Di1 += di1 * di1;
    Dj0 += dj0 * dj0;
    Dj1 += dj1 * dj1;
    if constexpr (kPair) {
      const double e0 = di0 - dj0, e1 = di1 - dj1;
      S0 += e0 * e0;
      S1 += e1 * e1;
      N0 += (dj0 - di0) * (dj0 + di0);
      N1 += (dj1 - di1) * (dj1 + di1);
    }
  }
  if (a < d) {
    const double di = xi[a] - xt[a], dj = xj[a] - xt[a];
    Di0 += di * di;
    Dj0 += dj * dj;
    if constexpr (kPair) {
      const double e = di - dj;
      S0 += e * e;
      N0 += (dj - di) * (dj + di);
    }
  }
  return {Di0 + Di1, Dj0 + Dj1, N0 + N1, S0 + S1};
}

}  // namespace tripletsearch
