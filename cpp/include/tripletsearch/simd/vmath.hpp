// exp and log of many values by the row kernels' vector code under the active ISA
// (vmath_avx2.hpp; the C library's for the last n % 4 values, and under 'portable'): the
// entry point the tests of its accuracy call (_core.vector_math).
#pragma once

#include <cmath>
#include <cstdint>

#include "dispatch.hpp"
#include "vmath_avx2.hpp"

namespace tripletsearch {
namespace simd {

namespace portable {
inline void vector_math(bool is_exp, const double* x, double* y, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) y[k] = is_exp ? std::exp(x[k]) : std::log(x[k]);
}
}  // namespace portable

// y[k] = exp(x[k]) (is_exp) or log(x[k]) for k < n.
inline void vector_math(bool is_exp, const double* x, double* y, std::int64_t n) {
  portable::vector_math(is_exp, x, y, n);
#ifdef TS_SIMD_X86
  if (active_isa() == Isa::AVX2)
    for (std::int64_t k = 0; k + 4 <= n; k += 4) avx2::vector_math(is_exp, x + k, y + k);
#endif
}

}  // namespace simd
}  // namespace tripletsearch
