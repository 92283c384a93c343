// Small dense linear algebra of the core: dot products, symmetric eigenpairs (cyclic
// Jacobi), Cholesky factors and triangular solves. Row-major d x d matrices.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "mathutil.hpp"

namespace tripletsearch {

inline double dot(const double* a, const double* b, std::int64_t n) {
  double s = 0.0;
  for (std::int64_t k = 0; k < n; ++k) s += a[k] * b[k];
  return s;
}

// The dot product of long vectors (L-BFGS's): eight running sums, added in a fixed order,
// so the adds do not wait on each other and vectorize; the result is the same on every run.
TS_ALWAYS_INLINE double dot_long(const double* a, const double* b, std::int64_t n) {
  double s[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  const std::int64_t n8 = n - n % 8;
  for (std::int64_t k = 0; k < n8; k += 8)
    for (int u = 0; u < 8; ++u) s[u] += a[k + u] * b[k + u];
  double tail = 0.0;
  for (std::int64_t k = n8; k < n; ++k) tail += a[k] * b[k];
  return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7])) + tail;
}

TS_ALWAYS_INLINE bool all_finite(const double* a, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k)
    if (!std::isfinite(a[k])) return false;
  return true;
}

namespace detail {

// One Jacobi rotation zeroing A[p][q], applied to A (both sides) and accumulated in V.
inline void jacobi_rotate(std::vector<double>& A, std::vector<double>& V, std::int64_t d,
                          std::int64_t p, std::int64_t q) {
  const double apq = A[p * d + q];
  const double theta = (A[q * d + q] - A[p * d + p]) / (2.0 * apq);
  const double t =
      (theta >= 0.0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
  const double c = 1.0 / std::sqrt(t * t + 1.0), sn = t * c;
  for (std::int64_t r = 0; r < d; ++r) {  // A <- A J (columns p, q)
    const double arp = A[r * d + p], arq = A[r * d + q];
    A[r * d + p] = c * arp - sn * arq;
    A[r * d + q] = sn * arp + c * arq;
  }
  for (std::int64_t r = 0; r < d; ++r) {  // A <- J^T A (rows p, q)
    const double apr = A[p * d + r], aqr = A[q * d + r];
    A[p * d + r] = c * apr - sn * aqr;
    A[q * d + r] = sn * apr + c * aqr;
  }
  for (std::int64_t r = 0; r < d; ++r) {  // V <- V J
    const double vrp = V[r * d + p], vrq = V[r * d + q];
    V[r * d + p] = c * vrp - sn * vrq;
    V[r * d + q] = sn * vrp + c * vrq;
  }
}

}  // namespace detail

// Top `count` eigenpairs of a symmetric d x d matrix, largest first, by cyclic Jacobi
// rotations (exact to rounding, quadratic convergence, robust to repeated eigenvalues).
// Eigenvalues are clamped at 0 (covariances); each eigenvector's sign is fixed so that its
// entry of largest magnitude (the first such) is positive. Mirrored by the NumPy twin.
inline void top_eigenpairs(std::vector<double> A, std::int64_t d, int count, double* values,
                           double* vectors /* count x d */) {
  std::vector<double> V(static_cast<std::size_t>(d * d), 0.0);
  for (std::int64_t a = 0; a < d; ++a) V[a * d + a] = 1.0;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0.0, diag = 0.0;
    for (std::int64_t p = 0; p < d; ++p) {
      diag += A[p * d + p] * A[p * d + p];
      for (std::int64_t q = p + 1; q < d; ++q) off += A[p * d + q] * A[p * d + q];
    }
    if (off <= 1e-22 * diag || off == 0.0) break;
    for (std::int64_t p = 0; p < d; ++p)
      for (std::int64_t q = p + 1; q < d; ++q)
        if (A[p * d + q] != 0.0) detail::jacobi_rotate(A, V, d, p, q);
  }
  std::vector<std::int64_t> order(static_cast<std::size_t>(d));
  for (std::int64_t a = 0; a < d; ++a) order[a] = a;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t x, std::int64_t y) { return A[x * d + x] > A[y * d + y]; });
  for (int e = 0; e < count; ++e) {
    const std::int64_t col = order[static_cast<std::size_t>(e)];
    values[e] = std::max(A[col * d + col], 0.0);
    std::int64_t big = 0;
    for (std::int64_t a = 1; a < d; ++a)
      if (std::fabs(V[a * d + col]) > std::fabs(V[big * d + col])) big = a;
    const double sign = V[big * d + col] < 0.0 ? -1.0 : 1.0;
    for (std::int64_t a = 0; a < d; ++a) vectors[e * d + a] = sign * V[a * d + col];
  }
}

// Lower Cholesky factor of a covariance (tiny negative pivots clamped to 0, their column
// left zero: a degenerate direction).
inline std::vector<double> cholesky(const std::vector<double>& S, std::int64_t d) {
  std::vector<double> L(static_cast<std::size_t>(d * d), 0.0);
  for (std::int64_t j = 0; j < d; ++j) {
    double s = S[j * d + j];
    for (std::int64_t k = 0; k < j; ++k) s -= L[j * d + k] * L[j * d + k];
    const double piv = s > 0.0 ? std::sqrt(s) : 0.0;
    L[j * d + j] = piv;
    for (std::int64_t i = j + 1; i < d; ++i) {
      double t = S[i * d + j];
      for (std::int64_t k = 0; k < j; ++k) t -= L[i * d + k] * L[j * d + k];
      L[i * d + j] = piv > 0.0 ? t / piv : 0.0;
    }
  }
  return L;
}

// ||y||^2 for the solution of L y = b (forward substitution; zero pivots give y_a = 0).
inline double lower_solve_sq_norm(const std::vector<double>& L, std::int64_t d, const double* b,
                                  double* y) {
  double q = 0.0;
  for (std::int64_t a = 0; a < d; ++a) {
    double t = b[a];
    for (std::int64_t c = 0; c < a; ++c) t -= L[a * d + c] * y[c];
    y[a] = L[a * d + a] > 0.0 ? t / L[a * d + a] : 0.0;
    q += y[a] * y[a];
  }
  return q;
}

// Orthonormalizes the rows of V (p x d) in place by modified Gram-Schmidt, twice (stable to
// rounding); a row that is (numerically) dependent on the earlier ones is replaced by the
// coordinate axis least represented so far. Deterministic.
inline void orthonormalize(double* V, int p, std::int64_t d) {
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < p; ++i) {
      double* v = V + i * d;
      const double before = std::sqrt(dot(v, v, d));
      for (int j = 0; j < i; ++j) {
        const double c = dot(v, V + j * d, d);
        for (std::int64_t a = 0; a < d; ++a) v[a] -= c * V[j * d + a];
      }
      double norm = std::sqrt(dot(v, v, d));
      if (!(norm > 1e-10 * before) || !(norm > 0.0)) {  // dependent: restart from an axis
        std::int64_t axis = 0;
        double least = 2.0;
        for (std::int64_t a = 0; a < d; ++a) {
          double w = 0.0;
          for (int j = 0; j < i; ++j) w += V[j * d + a] * V[j * d + a];
          if (w < least) {
            least = w;
            axis = a;
          }
        }
        std::fill(v, v + d, 0.0);
        v[axis] = 1.0;
        for (int j = 0; j < i; ++j) {
          const double c = dot(v, V + j * d, d);
          for (std::int64_t a = 0; a < d; ++a) v[a] -= c * V[j * d + a];
        }
        norm = std::sqrt(dot(v, v, d));
      }
      for (std::int64_t a = 0; a < d; ++a) v[a] /= norm;
    }
}

namespace detail {

// Rayleigh-Ritz on the orthonormal block Q (p x d) given Z = A Q: theta (p, largest first)
// and the Ritz vectors V = S Q with A V = S Z, S the eigenvectors of H = Q A Q^T.
inline void rayleigh_ritz(const std::vector<double>& Q, const std::vector<double>& Z,
                          std::int64_t d, std::vector<double>& theta, std::vector<double>& V,
                          std::vector<double>& AV) {
  const int p = static_cast<int>(Q.size() / static_cast<std::size_t>(d));
  std::vector<double> H(static_cast<std::size_t>(p * p)), S(static_cast<std::size_t>(p * p));
  theta.resize(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i)
    for (int j = i; j < p; ++j)  // H = Q A Q^T (symmetrized)
      H[i * p + j] = H[j * p + i] = 0.5 * (dot(Q.data() + i * d, Z.data() + j * d, d) +
                                           dot(Q.data() + j * d, Z.data() + i * d, d));
  top_eigenpairs(H, p, p, theta.data(), S.data());  // S rows: eigenvectors of H
  V.assign(Q.size(), 0.0);
  AV.assign(Q.size(), 0.0);
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) {
      const double sij = S[i * p + j];
      for (std::int64_t a = 0; a < d; ++a) {
        V[i * d + a] += sij * Q[j * d + a];
        AV[i * d + a] += sij * Z[j * d + a];
      }
    }
}

// The largest residual ||A v - theta v|| of the first `count` Ritz pairs.
inline double ritz_residual(const std::vector<double>& V, const std::vector<double>& AV,
                            const std::vector<double>& theta, int count, std::int64_t d) {
  double worst = 0.0;
  for (int i = 0; i < count; ++i) {
    double r = 0.0;
    for (std::int64_t a = 0; a < d; ++a) {
      const double e = AV[i * d + a] - theta[i] * V[i * d + a];
      r += e * e;
    }
    worst = std::max(worst, std::sqrt(r));
  }
  return worst;
}

// The first `count` pairs out: values clamped at 0, unit vectors signed as top_eigenpairs.
inline void ritz_pairs_out(const std::vector<double>& V, const std::vector<double>& theta,
                           int count, std::int64_t d, double* values, double* vectors) {
  for (int e = 0; e < count; ++e) {
    values[e] = std::max(theta[e], 0.0);
    const double* v = V.data() + e * d;
    std::int64_t big = 0;
    for (std::int64_t a = 1; a < d; ++a)
      if (std::fabs(v[a]) > std::fabs(v[big])) big = a;
    const double sign = v[big] < 0.0 ? -1.0 : 1.0;
    const double norm = std::sqrt(dot(v, v, d));
    for (std::int64_t a = 0; a < d; ++a) vectors[e * d + a] = sign * v[a] / norm;
  }
}

}  // namespace detail

// One Rayleigh-Ritz step on the orthonormal block Q (p x d, p = Q.size() / d) given
// Z = A Q: the top `count` Ritz values of A in span(Q) (largest first, clamped at 0) and
// their unit vectors (signed as top_eigenpairs does) into values / vectors, and in Q the
// next block: A Q rotated to the Ritz basis and orthonormalized (one step of subspace
// iteration). A searcher whose A changes a little per query runs one step per query.
// Returns the largest residual ||A v - theta v|| of the wanted pairs over theta_max.
inline double ritz_step(std::vector<double>& Q, const std::vector<double>& Z, std::int64_t d,
                        int count, double* values, double* vectors) {
  const int p = static_cast<int>(Q.size() / static_cast<std::size_t>(d));
  std::vector<double> theta, V, AV;
  detail::rayleigh_ritz(Q, Z, d, theta, V, AV);
  const double worst = detail::ritz_residual(V, AV, theta, count, d);
  detail::ritz_pairs_out(V, theta, count, d, values, vectors);
  Q.swap(AV);
  orthonormalize(Q.data(), p, d);
  return worst / std::max(theta[0], 1e-300);
}

// Top `count` eigenpairs of a symmetric positive semi-definite d x d operator, by subspace
// iteration with Rayleigh-Ritz on a block of `block.size() / d` vectors (count plus guard
// vectors), warm-started from `block` (the previous call's Ritz vectors, or any start)
// and left there for the next call. apply(Q, p, out) writes out = A Q for the p rows of Q
// (p x d). Costs O(d^2 p) per iteration for an explicit matrix, O(n d p) for a covariance
// applied by passes over n items, instead of Jacobi's O(d^3) per sweep. Stops when every
// wanted Ritz pair has residual ||A v - theta v|| <= tol theta_max, when the Ritz values
// change by less than 1e-6 theta_max in an iteration (eigenvalues too close to separate
// their vectors: any direction among them serves), or after max_iter iterations (the
// Ritz pairs are then the best in the block). Values are clamped at 0 and
// vectors signed as top_eigenpairs does. Deterministic for a deterministic apply.
template <class Apply>
int subspace_eigenpairs(Apply&& apply, std::int64_t d, int count, std::vector<double>& block,
                        double* values, double* vectors, double tol = 1e-8, int max_iter = 60) {
  constexpr double kRitzSettled = 1e-6;  // relative change of the Ritz values per iteration
  const int p = static_cast<int>(block.size() / static_cast<std::size_t>(d));
  std::vector<double> Z(block.size()), theta, V, AV, previous(static_cast<std::size_t>(count), 0.0);
  int it = 0;
  for (; it < max_iter; ++it) {
    orthonormalize(block.data(), p, d);
    apply(block.data(), p, Z.data());
    detail::rayleigh_ritz(block, Z, d, theta, V, AV);
    const double worst = detail::ritz_residual(V, AV, theta, count, d);
    // converged: the residuals are small, or the Ritz values settled (a near-degenerate
    // cluster of eigenvalues: then any direction in it is as good, its vectors need not
    // converge)
    double moved = 0.0;
    for (int i = 0; i < count; ++i) moved = std::max(moved, std::fabs(theta[i] - previous[i]));
    const double scale = std::max(theta[0], 1e-300);
    const bool done = worst <= tol * scale || (it > 0 && moved <= kRitzSettled * scale);
    std::copy(theta.begin(), theta.begin() + count, previous.begin());
    block.swap(done ? V : AV);  // converged: keep the Ritz vectors; else iterate on A V
    if (done) break;
  }
  if (it == max_iter) {  // the last A V as a basis, and one more Rayleigh-Ritz on it
    orthonormalize(block.data(), p, d);
    apply(block.data(), p, Z.data());
    detail::rayleigh_ritz(block, Z, d, theta, V, AV);
    block = V;
  }
  // the wanted pairs: Ritz values and vectors of the final block, largest first
  detail::ritz_pairs_out(block, theta, count, d, values, vectors);
  return it;
}

}  // namespace tripletsearch
