// The triplet sampler's scoring lanes (collect/information.hpp): one entry point per kernel,
// running the version of the active ISA (dispatch.hpp): portable
// (information_portable.hpp) or AVX2/FMA (information_avx2.hpp).
#pragma once

#include <cstdint>

#include "dispatch.hpp"
#include "information_avx2.hpp"
#include "information_portable.hpp"

namespace tripletsearch {
namespace simd {

// F[m] = f(||S_m - x||^2) for the M support points (ST: d x M, transposed).
inline void log_odds_lanes(const LogOdds& f, const double* ST, std::int64_t M, std::int64_t d,
                           const double* x, double* F) {
  TS_SIMD_DISPATCH(log_odds_lanes(f, ST, M, d, x, F));
}

// A candidate pair's sums over L support points (log-odds terms Fa, Fb; weights w, and in
// w32 as floats, below FLT_MIN as 0).
inline PairSums pair_sums(const double* Fa, const double* Fb, const double* w, const float* w32,
                          std::int64_t L, double lapse) {
  TS_SIMD_DISPATCH(pair_sums(Fa, Fb, w, w32, L, lapse));
}

// acc[l] += log P(c closer | head at point l) for one answer whose items have log-odds terms
// Fc, Ff (L points), the model mixed with the lapse.
inline void add_answer_log_prob(const double* Fc, const double* Ff, double* acc, std::int64_t L,
                                double lapse) {
  TS_SIMD_DISPATCH(add_answer_log_prob(Fc, Ff, acc, L, lapse));
}

}  // namespace simd
}  // namespace tripletsearch
