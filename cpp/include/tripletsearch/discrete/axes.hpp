// Proto-queries along the principal axes of a belief (gamma-CKLSearch, the paper's
// appendix): points mean +- r sqrt(lambda_e) v_e on the top eigen-directions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../core/linalg.hpp"

namespace tripletsearch {

// The top `count` eigenpairs of a covariance (count <= d), largest first.
struct Axes {
  int count;
  std::vector<double> values, vectors;  // count, count x d

  Axes(const std::vector<double>& cov, std::int64_t d, int count_)
      : count(count_),
        values(static_cast<std::size_t>(count_)),
        vectors(static_cast<std::size_t>(count_ * d)) {
    top_eigenpairs(cov, d, count, values.data(), vectors.data());
  }

  // The point mean + step * sqrt(lambda_e) v_e.
  void point(const std::vector<double>& mean, int e, double step, double* z) const {
    const std::int64_t d = static_cast<std::int64_t>(mean.size());
    const double s = step * std::sqrt(values[static_cast<std::size_t>(e)]);
    for (std::int64_t a = 0; a < d; ++a) z[a] = mean[a] + s * vectors[e * d + a];
  }

  // k protos at radius r: proto c on axis floor(c/2) mod count with sign (-1)^c; beyond
  // `count` axes the radius grows by one r per round.
  void protos(const std::vector<double>& mean, int k, double r, double* out) const {
    const std::int64_t d = static_cast<std::int64_t>(mean.size());
    for (int c = 0; c < k; ++c) {
      const int e = (c / 2) % count;
      const double round = 1.0 + double((c / 2) / count);
      point(mean, e, (c % 2 == 0 ? 1.0 : -1.0) * round * r, out + c * d);
    }
  }
};

}  // namespace tripletsearch
