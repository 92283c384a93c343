// SIMD dispatch: the instruction set of the kernels is chosen once per process.
//
// Every ISA-specific body of the core lives in simd/, one file per ISA and concept
// (kernels_*.hpp: the database search's block kernels; hypotheses_*.hpp: the update of the
// user hypotheses; rows_*.hpp: the embedding's triplet rows; information_*.hpp: the triplet
// sampler's scoring lanes; vmath_avx2.hpp: every vector exp and log they use), each kernel
// in a portable version (plain C++, vectorized by the compiler for the baseline ISA) and,
// on x86-64 with GCC or Clang, an AVX2/FMA version (intrinsics, or the portable body
// compiled for AVX2). Callers use one entry point per kernel (kernels.hpp, hypotheses.hpp,
// rows.hpp, vmath.hpp, and dynamic_dispatch below for a body written once), which runs the
// version of the active ISA. No -march flag: the AVX2 functions carry a target attribute
// and run only when the CPU has AVX2 and FMA. The active ISA is detected on first use;
// TRIPLETSEARCH_SIMD=portable in the environment, or set_active_isa(), forces the portable
// kernels (tests compare the two paths). An ISA's name is read by parse_isa only. Nothing
// outside simd/ names an ISA.
#pragma once

#include <atomic>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(TRIPLETSEARCH_NO_SIMD)
#define TS_SIMD_X86 1
#define TS_TARGET_AVX2 __attribute__((target("avx2,fma")))
#endif

// The body of an entry point: `return avx2::<call>` under the AVX2 ISA, else
// `return portable::<call>` (inside namespace simd).
#ifdef TS_SIMD_X86
#define TS_SIMD_DISPATCH(...)                                \
  do {                                                       \
    if (active_isa() == Isa::AVX2) return avx2::__VA_ARGS__; \
    return portable::__VA_ARGS__;                            \
  } while (0)
#else
#define TS_SIMD_DISPATCH(...) return portable::__VA_ARGS__
#endif

namespace tripletsearch {
namespace simd {

enum class Isa : int { Portable = 0, AVX2 = 1 };

inline const char* isa_name(Isa isa) { return isa == Isa::AVX2 ? "avx2" : "portable"; }

// The ISA named `name` (isa_name's spelling, exactly), or nothing: the one reader of an ISA's
// name, for the environment (silent: the detected ISA) and _core.set_simd_isa (require_isa).
inline std::optional<Isa> parse_isa(std::string_view name) {
  for (const Isa isa : {Isa::AVX2, Isa::Portable})
    if (name == isa_name(isa)) return isa;
  return std::nullopt;
}

// parse_isa, or std::invalid_argument "<arg>: expected 'avx2' or 'portable', got '<name>'".
inline Isa require_isa(std::string_view name, const char* arg) {
  if (const std::optional<Isa> isa = parse_isa(name)) return *isa;
  throw std::invalid_argument(std::string(arg) + ": expected '" + isa_name(Isa::AVX2) + "' or '" +
                              isa_name(Isa::Portable) + "', got '" + std::string(name) + "'");
}

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

// Whether this CPU and build can run the kernels of `isa`.
inline bool supported(Isa isa) { return isa == Isa::Portable || detected_isa() == Isa::AVX2; }

namespace detail {
inline std::atomic<int>& active_slot() {
  static std::atomic<int> slot([] {
    // TRIPLETSEARCH_SIMD: an ISA the CPU has; anything else (unset, unknown) the detected one
    const char* env = std::getenv("TRIPLETSEARCH_SIMD");
    const std::optional<Isa> isa = env != nullptr ? parse_isa(env) : std::nullopt;
    return int(isa && supported(*isa) ? *isa : detected_isa());
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
  if (!supported(isa)) return false;
  detail::active_slot().store(int(isa), std::memory_order_relaxed);
  return true;
}

// A kernel written once and compiled for each ISA (google/highway's HWY_DYNAMIC_DISPATCH):
// Kernel::run, a TS_ALWAYS_INLINE static function of plain C++, is inlined into one
// function per ISA -- the AVX2 one compiled with the target attribute, so that the
// compiler vectorizes its loops four doubles wide and fuses its multiply-adds -- and
// dynamic_dispatch<Kernel>(args...) calls the one of the active ISA.
#ifdef TS_SIMD_X86
template <class Kernel, class... Args>
TS_TARGET_AVX2 auto run_avx2(Args&&... args) {
  return Kernel::run(std::forward<Args>(args)...);
}
#endif

template <class Kernel, class... Args>
auto dynamic_dispatch(Args&&... args) {
#ifdef TS_SIMD_X86
  if (active_isa() == Isa::AVX2) return run_avx2<Kernel>(std::forward<Args>(args)...);
#endif
  return Kernel::run(std::forward<Args>(args)...);
}

}  // namespace simd
}  // namespace tripletsearch
