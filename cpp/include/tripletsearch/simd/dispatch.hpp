// SIMD dispatch: the instruction set of the block kernels is chosen once per process.
//
// Every kernel of simd/kernels.hpp exists in a portable version (plain C++, vectorized by
// the compiler for the baseline ISA) and, on x86-64 with GCC or Clang, an AVX2/FMA version
// (kernels_avx2.hpp: intrinsics, or the portable body compiled for AVX2). No -march flag:
// the AVX2 functions carry a target attribute and run only when the CPU has AVX2 and FMA.
// The active ISA is detected on first use; TRIPLETSEARCH_SIMD=portable in the environment,
// or set_active_isa(), forces the portable kernels (tests compare the two paths).
#pragma once

#include <atomic>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(TRIPLETSEARCH_NO_SIMD)
#define TS_SIMD_X86 1
#define TS_TARGET_AVX2 __attribute__((target("avx2,fma")))
#endif

namespace tripletsearch {
namespace simd {

enum class Isa : int { Portable = 0, AVX2 = 1 };

inline const char* isa_name(Isa isa) { return isa == Isa::AVX2 ? "avx2" : "portable"; }

// The best ISA this CPU and build support.
inline Isa detected_isa() {
#ifdef TS_SIMD_X86
  static const Isa isa = [] {
    __builtin_cpu_init();
    return (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) ? Isa::AVX2
                                                                             : Isa::Portable;
  }();
  return isa;
#else
  return Isa::Portable;
#endif
}

namespace detail {
inline std::atomic<int>& active_slot() {
  static std::atomic<int> slot([] {
    const char* env = std::getenv("TRIPLETSEARCH_SIMD");
    if (env != nullptr && std::strcmp(env, "portable") == 0) return int(Isa::Portable);
    return int(detected_isa());
  }());
  return slot;
}
}  // namespace detail

// The ISA the kernels use now.
inline Isa active_isa() {
  return static_cast<Isa>(detail::active_slot().load(std::memory_order_relaxed));
}

// Selects the kernels' ISA; returns false (and changes nothing) when the CPU or the build
// lacks it. Meant for tests and benchmarks, between searches.
inline bool set_active_isa(Isa isa) {
  if (isa == Isa::AVX2 && detected_isa() != Isa::AVX2) return false;
  detail::active_slot().store(int(isa), std::memory_order_relaxed);
  return true;
}

}  // namespace simd
}  // namespace tripletsearch
