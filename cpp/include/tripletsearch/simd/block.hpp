// The block layout of the item store that the SIMD kernels stream: items in blocks of
// kLanes, coordinate a of item i at data[(i / kLanes) * d * kLanes + a * kLanes + i % kLanes],
// in single precision (a pass over 1e6 items in 10 dimensions streams 40 MB, not 80 MB);
// all arithmetic is in double precision.
#pragma once

#include <cstdint>
#include <limits>

namespace tripletsearch {

constexpr std::int64_t kLanes = 64;  // items per block
using StoreFloat = float;

// A session's posterior weights in single precision (discrete/weights.hpp), and the
// rounding of a double-precision one for storage: 0 below float's smallest normal number
// (and for NaN), never a denormal.
using Weight = float;
constexpr double kWeightFloor = static_cast<double>(std::numeric_limits<Weight>::min());
inline Weight to_weight(double v) { return v >= kWeightFloor ? static_cast<Weight>(v) : Weight(0); }

// Weighted moments of a block accumulate in fixed partial sums (SIMD-friendly, merged in a
// fixed order): acc = [W (kAccLanes) | sum w (x - c) (d x kAccLanes) |
// sum w (x - c)(x - c)^T (d x d x 4, upper triangle used)].
constexpr int kAccLanes = 8;
inline std::int64_t moment_size(std::int64_t d) { return kAccLanes * (1 + d) + 4 * d * d; }

// The constants of a strip pre-test's lower bound of a squared Mahalanobis distance
// (simd::mirror_pretest; filled by discrete/gauss_strip.hpp's MirrorBound): lb = a ylow -
// b th^2 with ylow = yy - c1 max(yy, 0) - c0 (yy at its rounding's worst) and th = |D1 - D0|
// i4s + ed D0 + e1 D1 + et (|v1 . y| at its worst); no lane passes when every lane's ylow
// exceeds skip bar (skip = l1 (1 + 1e-6): D >= |y|^2 / l1), which one minimum tells.
struct MirrorForm {
  double a = 0.0, b = 0.0, i4s = 0.0, c1 = 0.0, c0 = 0.0, ed = 0.0, e1 = 0.0, et = 0.0;
  double skip = 0.0;
};

// Index of the lowest set bit of x != 0 (the lanes of a pre-test mask).
inline int lowest_bit(std::uint64_t x) {
#if defined(__GNUC__)
  return __builtin_ctzll(x);
#else
  int n = 0;
  while (!(x & 1)) {
    x >>= 1;
    ++n;
  }
  return n;
#endif
}

// Selection rules of the nearest-candidate scans (block_pretest and the exact scores).
enum class ScanRule : int { Weighted = 0, Paper = 1, Nearest = 2 };

}  // namespace tripletsearch
