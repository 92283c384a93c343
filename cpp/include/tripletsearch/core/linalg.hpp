// Small dense linear algebra of the core: dot products, symmetric eigenpairs (cyclic
// Jacobi), Cholesky factors and triangular solves. Row-major d x d matrices.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tripletsearch {

inline double dot(const double* a, const double* b, std::int64_t n) {
  double s = 0.0;
  for (std::int64_t k = 0; k < n; ++k) s += a[k] * b[k];
  return s;
}

inline bool all_finite(const double* a, std::int64_t n) {
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

}  // namespace tripletsearch
