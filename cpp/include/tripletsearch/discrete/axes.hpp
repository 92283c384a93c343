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

namespace tripletsearch {

constexpr std::int64_t kJacobiMaxDim = 32;
constexpr int kGuardVectors = 4;         // extra vectors of the subspace block
constexpr int kSubspaceIterations = 10;  // per query; the warm start carries them on

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
};

}  // namespace tripletsearch
