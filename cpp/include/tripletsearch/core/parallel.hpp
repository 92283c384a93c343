// OpenMP helpers. Work is split into chunks whose boundaries depend on the problem
// size only, never on the thread count, and partial results are merged in chunk
// order: outputs are bitwise identical for any number of threads.
#pragma once

#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace tripletsearch {

inline int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

inline bool openmp_enabled() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

// Half-open range [begin, end) of chunk c out of n_chunks over n items.
inline std::int64_t chunk_begin(std::int64_t n, std::int64_t n_chunks, std::int64_t c) {
  return static_cast<std::int64_t>((static_cast<__int128>(n) * c) / n_chunks);
}

// Number of work chunks for at most `limit` (a bound derived from the problem size):
// capped at 64 and rounded down to a multiple of 4 so that 1, 2 and 4 threads get equal
// shares under schedule(static). Never depends on the thread count.
inline std::int64_t balanced_chunks(std::int64_t limit) {
  std::int64_t c = std::min<std::int64_t>(64, limit);
  if (c >= 4) c -= c % 4;
  return std::max<std::int64_t>(1, c);
}

}  // namespace tripletsearch
