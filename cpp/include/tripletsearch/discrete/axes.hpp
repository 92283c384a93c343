// Proto-queries along the principal axes of a belief (gamma-CKLSearch, the paper's
// appendix): points mean +- r sqrt(lambda_e) v_e on the top eigen-directions.
//
// Up to kJacobiMaxDim dimensions the eigenpairs come from the full covariance by Jacobi
// rotations (exact; the NumPy twin's eigh gives the same). Beyond, by subspace iteration
// warm-started from the previous query's directions (core/linalg.hpp), at most
// kSubspaceIterations per query: O(d^2) per query for an explicit covariance, O(n d) for
// one applied by passes over the items, instead of O(d^3) per Jacobi sweep. Well separated
// axes converge within a query or two; a spectrum too flat to separate them (isotropic
// data in hundreds of dimensions) leaves directions of nearly maximal variance, which
// serve the proto-queries as well.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../core/linalg.hpp"
#include "../core/rng.hpp"
#include "../core/seeding.hpp"

namespace tripletsearch {

constexpr std::int64_t kJacobiMaxDim = 32;
constexpr int kGuardVectors = 4;         // extra vectors of the subspace block
constexpr int kSubspaceIterations = 10;  // per query; the warm start carries them on
// A session's opening turns the top min(d, max(count, kOpeningAxes)) axes: a random frame
// of the span of the largest variances, of which the query takes its `count` axes. Beyond
// kJacobiMaxDim, the `count` axes the searcher tracks anyway (more would cost passes over
// the items at every session's start).
constexpr int kOpeningAxes = 8;
inline int opening_axes(int count, std::int64_t d) {
  if (d > kJacobiMaxDim) return count;
  return static_cast<int>(std::min<std::int64_t>(d, std::max(count, kOpeningAxes)));
}

// The block of a warm-started subspace iteration, kept by a searcher between queries.
struct AxesWarmStart {
  std::vector<double> block;  // p x d

  // A block of p rows for dimension d: kept when it fits, else deterministic Gaussian rows.
  std::vector<double>& ready(int p, std::int64_t d) {
    if (block.size() != static_cast<std::size_t>(p) * static_cast<std::size_t>(d)) {
      block.assign(static_cast<std::size_t>(p) * static_cast<std::size_t>(d), 0.0);
      Rng rng(0x5EED5EED5EED5EEDULL, static_cast<std::uint64_t>(d));
      for (double& v : block) v = rng.normal();
    }
    return block;
  }
};

// The top `count` eigenpairs of a covariance (count <= d), largest first.
struct Axes {
  int count;
  std::vector<double> values, vectors;  // count, count x d

  Axes(int count_, std::int64_t d)
      : count(count_),
        values(static_cast<std::size_t>(count_)),
        vectors(static_cast<std::size_t>(count_ * d)) {}

  // Of an explicit covariance: Jacobi up to kJacobiMaxDim, warm-started subspace iteration
  // beyond.
  static Axes of(const std::vector<double>& cov, std::int64_t d, int count, AxesWarmStart& warm) {
    Axes axes(count, d);
    if (d <= kJacobiMaxDim) {
      top_eigenpairs(cov, d, count, axes.values.data(), axes.vectors.data());
      return axes;
    }
    auto apply = [&](const double* Q, int p, double* out) {
      for (int j = 0; j < p; ++j)
        for (std::int64_t a = 0; a < d; ++a) out[j * d + a] = dot(cov.data() + a * d, Q + j * d, d);
    };
    subspace_eigenpairs(apply, d, count, warm.ready(block_rows(count, d), d), axes.values.data(),
                        axes.vectors.data(), 1e-8, kSubspaceIterations);
    return axes;
  }

  // Of a covariance given as apply(Q, p, out): out = C Q (always subspace iteration).
  template <class Apply>
  static Axes of_operator(Apply&& apply, std::int64_t d, int count, AxesWarmStart& warm) {
    Axes axes(count, d);
    subspace_eigenpairs(apply, d, count, warm.ready(block_rows(count, d), d), axes.values.data(),
                        axes.vectors.data(), 1e-8, kSubspaceIterations);
    return axes;
  }

  static int block_rows(int count, std::int64_t d) {
    return static_cast<int>(std::min<std::int64_t>(count + kGuardVectors, d));
  }

  // The point mean + scaled(e, step) v_e.
  void point(const std::vector<double>& mean, int e, double step, double* z) const {
    const std::int64_t d = static_cast<std::int64_t>(mean.size());
    const double s = scaled(e, step);
    for (std::int64_t a = 0; a < d; ++a) z[a] = mean[a] + s * vectors[e * d + a];
  }
  double scaled(int e, double step) const {
    return step * std::sqrt(values[static_cast<std::size_t>(e)]);
  }

  // k protos at radius r: proto c on axis floor(c/2) mod count with sign (-1)^c; beyond
  // `count` axes the radius grows by one r per round.
  int proto_axis(int c) const { return (c / 2) % count; }
  double proto_step(int c, double r) const {
    const double round = 1.0 + double((c / 2) / count);
    return (c % 2 == 0 ? 1.0 : -1.0) * round * r;
  }
  void protos(const std::vector<double>& mean, int k, double r, double* out) const {
    const std::int64_t d = static_cast<std::int64_t>(mean.size());
    for (int c = 0; c < k; ++c) point(mean, proto_axis(c), proto_step(c, r), out + c * d);
  }

  // A session's opening: the axes turned by a random rotation of their span, seeded by the
  // session (stream (seed, Opening, 0)). Q: the rows of a count x count matrix of standard
  // normals (row-major draws) made orthonormal by modified Gram-Schmidt (a Haar rotation);
  // axis e becomes sum_j Q_ej v_j with variance sum_j Q_ej^2 lambda_j. Every direction of
  // the span is as likely, so sessions open on different screens (a uniform prior's axes
  // are the same for every session) and a participant cannot tell the method by its
  // opening; the directions keep the span of the largest variances.
  void rotate(std::uint64_t seed) {
    const int m = count;
    if (m == 0) return;
    const std::int64_t d = static_cast<std::int64_t>(vectors.size()) / m;
    Rng rng = stream(seed, Purpose::Opening, 0);
    std::vector<double> Q(static_cast<std::size_t>(m * m));
    for (double& q : Q) q = rng.normal();
    for (int e = 0; e < m; ++e) {
      double* qe = Q.data() + e * m;
      for (int f = 0; f < e; ++f) {
        const double* qf = Q.data() + f * m;
        double dot = 0.0;
        for (int j = 0; j < m; ++j) dot += qe[j] * qf[j];
        for (int j = 0; j < m; ++j) qe[j] -= dot * qf[j];
      }
      double norm = 0.0;
      for (int j = 0; j < m; ++j) norm += qe[j] * qe[j];
      norm = std::sqrt(norm);
      for (int j = 0; j < m; ++j) qe[j] /= norm;
    }
    std::vector<double> v(static_cast<std::size_t>(m * d), 0.0), lam(static_cast<std::size_t>(m));
    for (int e = 0; e < m; ++e) {
      double var = 0.0;
      for (int j = 0; j < m; ++j) {
        const double q = Q[static_cast<std::size_t>(e * m + j)];
        var += q * q * values[static_cast<std::size_t>(j)];
        for (std::int64_t a = 0; a < d; ++a)
          v[static_cast<std::size_t>(e * d + a)] += q * vectors[static_cast<std::size_t>(j * d + a)];
      }
      lam[static_cast<std::size_t>(e)] = var;
    }
    vectors.swap(v);
    values.swap(lam);
  }

  // The first `m` axes only.
  void keep(int m) {
    if (m >= count) return;
    const std::size_t d = vectors.size() / static_cast<std::size_t>(count);
    values.resize(static_cast<std::size_t>(m));
    vectors.resize(static_cast<std::size_t>(m) * d);
    count = m;
  }

  // A session's opening axes: the top opening_axes(count, d) axes of `post`, turned by the
  // session's rotation, the first `count` kept.
  template <class Posterior>
  static Axes opening(const Posterior& post, int count, std::int64_t d, std::uint64_t seed) {
    Axes axes = post.axes(opening_axes(count, d));
    axes.rotate(seed);
    axes.keep(count);
    return axes;
  }
};

}  // namespace tripletsearch
