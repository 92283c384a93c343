// The core's vector maths (vmath_avx2.hpp) of many values under the active ISA, the C
// library's for the values left over (n % 4; n % 8 for the float exp) and under 'portable':
// the entry point the tests of its accuracy call (_core.vector_math).
#pragma once

#include <cmath>
#include <cstdint>

#include "dispatch.hpp"
#include "vmath_avx2.hpp"

namespace tripletsearch {
namespace simd {

// What vector_math computes: the double exp and log (exp_pd, log_pd), the float exp of
// x <= 0 (exp_neg_ps, in double on the values rounded to float).
enum class VectorFunction { Exp, Log, ExpNegFloat };

namespace portable {
inline void vector_math(VectorFunction f, const double* x, double* y, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k)
    y[k] = f == VectorFunction::Log ? std::log(x[k]) : std::exp(x[k]);
}
}  // namespace portable

// y[k] = f(x[k]) for k < n.
inline void vector_math(VectorFunction f, const double* x, double* y, std::int64_t n) {
  portable::vector_math(f, x, y, n);
#ifdef TS_SIMD_X86
  if (active_isa() != Isa::AVX2) return;
  if (f == VectorFunction::ExpNegFloat) {
    for (std::int64_t k = 0; k + 8 <= n; k += 8) avx2::vector_exp_neg_float(x + k, y + k);
  } else {
    const bool is_exp = f == VectorFunction::Exp;
    for (std::int64_t k = 0; k + 4 <= n; k += 4) avx2::vector_math(is_exp, x + k, y + k);
  }
#endif
}

}  // namespace simd
}  // namespace tripletsearch
