// Errors of the core. The core throws std::invalid_argument (pybind11: ValueError) with a
// message that starts with the Python argument's name, always before a parallel region:
// nothing throws inside OpenMP. Index arrays are checked here.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

namespace tripletsearch {

// Position of the first entry outside [0, n) in a[0..count), or -1 (int64 or int32 entries).
template <class I>
std::int64_t first_out_of_range(const I* a, std::int64_t count, std::int64_t n) {
  for (std::int64_t k = 0; k < count; ++k)
    if (a[k] < 0 || static_cast<std::int64_t>(a[k]) >= n) return k;
  return -1;
}

// Throws "name: index v at position (row, col) is out of range for n items ..." for the
// first bad entry of a (count entries, `cols` per row; 1: a vector).
template <class I>
[[noreturn]] void throw_out_of_range(const I* a, std::int64_t count, std::int64_t n,
                                     std::int64_t cols, const char* name) {
  const std::int64_t k = first_out_of_range(a, count, n);
  const std::string where =
      cols == 1 ? std::to_string(k) : std::to_string(k / cols) + ", " + std::to_string(k % cols);
  throw std::invalid_argument(std::string(name) + ": index " +
                              std::to_string(k >= 0 ? std::int64_t(a[k]) : -1) + " at position (" +
                              where + ") is out of range for " + std::to_string(n) +
                              " items (valid: 0.." + std::to_string(n - 1) + ")");
}

// Checks every entry of a[0..count) against [0, n).
template <class I>
void require_in_range(const I* a, std::int64_t count, std::int64_t n, std::int64_t cols,
                      const char* name) {
  if (first_out_of_range(a, count, n) >= 0) throw_out_of_range(a, count, n, cols, name);
}

// The shortest text that reads back as `value` (like Python's repr of a float).
inline std::string format_number(double value) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, res.ptr);
}
inline std::string format_number(std::int64_t value) { return std::to_string(value); }
inline std::string format_number(int value) { return std::to_string(value); }

// Throws "name: must <what>, got <value>" (a parameter that fails its range check).
template <class V>
[[noreturn]] void throw_bad_value(const char* name, const std::string& what, V value) {
  throw std::invalid_argument(std::string(name) + ": must " + what + ", got " +
                              format_number(value));
}

// Range checks of configuration values, each naming the Python argument.
inline void require_finite(double v, const char* name) {
  if (!std::isfinite(v)) throw_bad_value(name, "be finite", v);
}
inline void require_positive(double v, const char* name) {
  require_finite(v, name);
  if (!(v > 0.0)) throw_bad_value(name, "be > 0", v);
}
inline void require_nonnegative(double v, const char* name) {
  require_finite(v, name);
  if (!(v >= 0.0)) throw_bad_value(name, "be >= 0", v);
}
inline void require_open_interval(double v, double lo, double hi, const char* name) {
  if (!(v > lo && v < hi))
    throw_bad_value(name, "lie in (" + format_number(lo) + ", " + format_number(hi) + ")", v);
}
inline void require_half_open(double v, double lo, double hi, const char* name) {
  if (!(v >= lo && v < hi))
    throw_bad_value(name, "lie in [" + format_number(lo) + ", " + format_number(hi) + ")", v);
}
template <class I>
void require_at_least(I v, I minimum, const char* name) {
  if (v < minimum) throw_bad_value(name, "be >= " + format_number(minimum), v);
}
template <class I>
void require_between(I v, I lo, I hi, const char* name) {
  if (v < lo || v > hi)
    throw_bad_value(name, "lie in [" + format_number(lo) + ", " + format_number(hi) + "]", v);
}

// Bytes of physical memory (0 when unknown).
inline double physical_memory() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && size > 0) return double(pages) * double(size);
#endif
  return 0.0;
}

// Throws "name: ... needs X GiB, more than this machine's memory" before an allocation of
// `bytes` (given as a double: sizes whose product overflows 64 bits still compare) that
// could not succeed.
inline void require_allocation(double bytes, const char* name) {
  const double ram = physical_memory();
  const double limit = ram > 0.0 ? ram : 0x1p50;
  if (!(bytes <= limit))
    throw std::invalid_argument(std::string(name) + ": needs " +
                                format_number(std::round(bytes / 0x1p30 * 10.0) / 10.0) +
                                " GiB of memory, more than this machine has (" +
                                format_number(std::round(limit / 0x1p30 * 10.0) / 10.0) + " GiB)");
}

}  // namespace tripletsearch
