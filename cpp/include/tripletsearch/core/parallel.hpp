// OpenMP helpers. Work is split into chunks whose boundaries depend on the problem
// size only, never on the thread count, and partial results are merged in chunk
// order: outputs are bitwise identical for any number of threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>

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

// The calling thread's number in the current parallel region (0 outside any).
inline int thread_num() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

// The number of threads of the current parallel region's team (1 outside any).
inline int team_size() {
#ifdef _OPENMP
  return omp_get_num_threads();
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

// Exceptions may not leave an OpenMP region. Inside one, run() executes a piece of work and
// keeps the first exception any thread throws (later work is skipped); after the region,
// rethrow() throws it on the calling thread.
class ParallelErrors {
 public:
  template <class Fn>
  void run(Fn&& fn) noexcept {
    if (failed()) return;
    try {
      fn();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!first_) first_ = std::current_exception();
      failed_.store(true, std::memory_order_relaxed);
    }
  }
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
  std::atomic<bool> failed_{false};
};

}  // namespace tripletsearch
