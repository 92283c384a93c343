// GaussSearch's strip kept across answers: the K items nearest the belief's mean (in its
// Mahalanobis distance) at the last full scan, and a bound that says when they still hold
// the strip, so most answers score K items instead of all n.
//
// The bound. At the full scan s the belief was N(mu_s, L_s L_s'), every item neither shown
// nor passed over outside the list had D_s(x) = |L_s^-1 (x - mu_s)|^2 >= tau. Now, at t,
// with A = L_s^-1 L_t: L_s^-1 w = A L_t^-1 w, so |L_s^-1 w| <= |A|_2 |L_t^-1 w|, and by the
// triangle inequality |L_s^-1 (x - mu_t)| >= sqrt(D_s(x)) - delta, delta = |L_s^-1 (mu_t -
// mu_s)|. Hence every such item has D_t(x) >= (sqrt(tau) - delta)_+^2 / |A|_2^2. This holds
// for any two beliefs (the computed factors themselves, no assumption that the belief only
// narrows; narrowing, |A|_2 <= 1, only makes it tight). Shown and passed-over items stay so,
// and the strip leaves them out, so the list's eligible items of D_t below the bound are
// exactly the best of all items. |A|_2^2 is the top eigenvalue of A A' (Jacobi, up to
// kJacobiMaxDim dimensions; beyond, no list); relative margins of 1e-6 cover the rounding
// of the distances and the eigenvalue.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "../core/linalg.hpp"
#include "axes.hpp"

namespace tripletsearch {

// Items kept per strip of m guesses next to k choices, about K = max(kShortlistMin,
// kShortlistPerItem (m + k)) in all: the full scan keeps ceil(K / C) (at least m + k) of each
// of its C chunks, tau the lowest next-best of a chunk. At 1e6 items in d = 10 the list
// holds the strip in about half the answers (the mean moves about a standard deviation an
// answer, the nearest items' radius is about one): larger lists cost more per full scan.
constexpr std::int64_t kShortlistMin = 2048;
constexpr std::int64_t kShortlistPerItem = 256;

struct StripShortlist {
  bool valid = false;
  std::vector<std::int64_t> items;  // at the full scan: the K best, neither shown nor passed
  std::vector<double> mean, L;      // mu_s and L_s
  double tau = 0.0;                 // D_s of every other eligible item >= tau (inf: none)

  // After a full scan: its best (each with .index) under the belief (mean_s, L_s), tau_s.
  template <class Best>
  void renew(bool use, const std::vector<Best>& best, double tau_s,
             const std::vector<double>& mean_s, const std::vector<double>& L_s) {
    valid = use;
    if (!use) return;
    items.resize(best.size());
    for (std::size_t i = 0; i < best.size(); ++i) items[i] = best[i].index;
    tau = tau_s, mean = mean_s, L = L_s;
  }

  static std::int64_t size_for(int m, int k) {
    return std::max<std::int64_t>(kShortlistMin, kShortlistPerItem * (m + k));
  }

  static bool usable(const std::vector<double>& L, std::int64_t d) {
    if (d > kJacobiMaxDim) return false;
    for (std::int64_t a = 0; a < d; ++a)
      if (!(L[static_cast<std::size_t>(a * d + a)] > 0.0)) return false;
    return true;
  }

  // A lower bound of D_t(x) for every eligible item x not in the list, under the belief
  // (mean_t, L_t); 0 when none can be given (the caller then scans in full).
  double bound(const std::vector<double>& mean_t, const std::vector<double>& Lt,
               std::int64_t d) const {
    if (!valid || !usable(Lt, d)) return 0.0;
    if (std::isinf(tau)) return std::numeric_limits<double>::infinity();
    std::vector<double> A(static_cast<std::size_t>(d * d), 0.0), y(static_cast<std::size_t>(d)),
        col(y.size());
    for (std::int64_t j = 0; j < d; ++j) {  // column j of L_s^-1 L_t (lower triangular)
      for (std::int64_t a = 0; a < d; ++a) col[a] = Lt[static_cast<std::size_t>(a * d + j)];
      lower_solve_sq_norm(L, d, col.data(), y.data());
      for (std::int64_t a = 0; a < d; ++a) A[static_cast<std::size_t>(a * d + j)] = y[a];
    }
    std::vector<double> G(A.size(), 0.0);  // A A'
    for (std::int64_t a = 0; a < d; ++a)
      for (std::int64_t c = 0; c <= a; ++c)
        G[a * d + c] = G[c * d + a] = dot(A.data() + a * d, A.data() + c * d, d);
    double top = 0.0;
    std::vector<double> vec(static_cast<std::size_t>(d));
    top_eigenpairs(G, d, 1, &top, vec.data());
    double fro = 0.0;  // |A|_F^2 >= |A|_2^2: a guard should Jacobi stop early
    for (double v : A) fro += v * v;
    top = std::min(top * (1.0 + 1e-6), fro * (1.0 + 1e-12));
    for (std::int64_t a = 0; a < d; ++a) col[a] = mean_t[a] - mean[a];
    const double delta = std::sqrt(lower_solve_sq_norm(L, d, col.data(), y.data()));
    const double gap = std::max(std::sqrt(tau) * (1.0 - 1e-6) - delta * (1.0 + 1e-6), 0.0);
    if (!(top > 0.0) || !std::isfinite(top)) return 0.0;
    return gap * gap / top * (1.0 - 1e-6);
  }
};

}  // namespace tripletsearch
