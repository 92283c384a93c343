// Scalar numerics shared by the kernels: stable sigmoid / log-sigmoid, the log of the
// standard normal CDF with the inverse Mills ratio, a reentrant log-gamma.
#pragma once

#include <cfloat>
#include <cmath>
#include <limits>

#if defined(__GNUC__)
#define TS_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define TS_ALWAYS_INLINE inline
#endif

namespace tripletsearch {

// Squared distances below this floor are treated as this floor inside a logarithm
// (coincident points give finite, documented answers; see oracle.hpp).
constexpr double kTinyDistance = DBL_MIN;
// The same floor in the precision T of a kernel (FLT_MIN for float).
template <class T>
constexpr T tiny_distance() {
  return std::numeric_limits<T>::min();
}
constexpr double kHalfLog2Pi = 0.91893853320467274178;  // 0.5 * log(2 pi)
constexpr double kSqrt1_2 = 0.70710678118654752440;     // 1 / sqrt(2)

inline double sigmoid(double z) {
  if (z >= 0.0) return 1.0 / (1.0 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1.0 + e);
}

inline double log_sigmoid(double z) {
  if (z >= 0.0) return -std::log1p(std::exp(-z));
  return z - std::log1p(std::exp(z));
}

// log(max(D, floor)): finite for D = 0.
inline double safe_log(double D) { return std::log(D > kTinyDistance ? D : kTinyDistance); }

// log Gamma(x), reentrant (safe inside OpenMP regions, unlike std::lgamma's signgam).
inline double log_gamma(double x) {
#if defined(__GLIBC__)
  int sign;
  return lgamma_r(x, &sign);
#else
  return std::lgamma(x);
#endif
}

// Standard normal: log Phi(z), Phi(z) and lambda(z) = phi(z) / Phi(z).
struct NormalTail {
  double log_cdf;
  double cdf;
  double mills;  // d log Phi / dz
};

inline NormalTail normal_tail(double z) {
  NormalTail r;
  if (z > 0.0) {
    const double upper = 0.5 * std::erfc(z * kSqrt1_2);  // 1 - Phi(z), accurate
    r.cdf = 1.0 - upper;
    r.log_cdf = std::log1p(-upper);
    r.mills = std::exp(-0.5 * z * z - kHalfLog2Pi) / r.cdf;
  } else if (z > -37.0) {
    r.cdf = 0.5 * std::erfc(-z * kSqrt1_2);
    r.log_cdf = std::log(r.cdf);
    r.mills = std::exp(-0.5 * z * z - kHalfLog2Pi) / r.cdf;
  } else {
    // Asymptotic series: Phi(z) = phi(z)/(-z) * s, s = sum_k (-1)^k (2k-1)!! / z^(2k).
    const double inv_z2 = 1.0 / (z * z);
    double term = 1.0, s = 1.0;
    for (int k = 1; k <= 8; ++k) {
      term *= -(2.0 * k - 1.0) * inv_z2;
      s += term;
    }
    r.log_cdf = -0.5 * z * z - kHalfLog2Pi - std::log(-z) + std::log(s);
    r.cdf = std::exp(r.log_cdf);
    r.mills = -z / s;
  }
  return r;
}

}  // namespace tripletsearch
