// The gamma-CKL rows of the embedding's gradient, a block at a time: from each row's
// squared distances, log p, the gradient coefficients and d log p / d log gamma
// (oracle/choice.hpp's gammackl_row). One entry point per kernel, running the version of
// the active ISA (dispatch.hpp): portable (rows_portable.hpp) or AVX2/FMA (rows_avx2.hpp).
#pragma once

#include <cstdint>

#include "dispatch.hpp"
#include "rows_avx2.hpp"
#include "rows_portable.hpp"

namespace tripletsearch {
namespace simd {

// The rows of one block (n <= kRowBlock; Di and Dj readable up to n rounded up to 4).
template <bool kLoss, bool kDG>
inline void gammackl_rows(const GammaPower& g, const double* Di, const double* Dj, int n,
                          RowCoefs& out) {
  TS_SIMD_DISPATCH(gammackl_rows<kLoss, kDG>(g, Di, Dj, n, out));
}

// The row path's block of gamma-CKL rows over the embedding X (n x d, row-major): for the
// live rows, their squared distances and coefficients (co: a, b, and log p when kLoss,
// d log p / d log gamma when kDG), and the gradient of log p scattered into G for the
// rows with i != j. Rows that are not live: coefficients unspecified, G untouched.
template <bool kLoss, bool kDG>
inline void gammackl_row_block(const GammaPower& g, const double* X, std::int64_t d,
                               const RowBlock& rows, double* G, RowCoefs& co) {
  TS_SIMD_DISPATCH(gammackl_row_block<kLoss, kDG>(g, X, d, rows, G, co));
}

}  // namespace simd
}  // namespace tripletsearch
