// What a database-search session keeps per item: its posterior weights, in single precision,
// and which items it has shown, one bit each. At a million items a session is then 4 MB of
// weights (and 4 MB per user hypothesis) where double precision took twice that.
//
// The weights are linear and renormalised by every pass over the store: each answer's pass
// multiplies them by the likelihood and by kWeightTotal / (their sum before it), so after a
// pass they sum to kWeightTotal times the answer's predictive probability. kWeightTotal =
// 2^64 puts the largest weight far below float's maximum (3.4e38) and leaves an item 2^-190
// (about 6e-58) of the total before it reaches float's smallest normal number. Below that an
// item's weight is set to zero (flushed) rather than kept as a denormal: such an item has no
// say in any query, and denormals are slow. Every pass computes in double precision and
// rounds the weights once on the way out: an item's weight carries a relative error of at
// most 2^-24 per answer (6e-6 after a hundred answers) on top of the double-precision one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "../simd/block.hpp"

namespace tripletsearch {

// Weight, kWeightFloor and to_weight: simd/block.hpp (the kernels read and write them).

// The weights' sum after a pass that needs no likelihood (the prior, a restart).
constexpr double kWeightTotal = 18446744073709551616.0;  // 2^64

// A block's kLanes stored weights read into double precision.
inline void load_weights(const Weight* src, double* dst) {
  for (int l = 0; l < kLanes; ++l) dst[l] = static_cast<double>(src[l]);
}
// A block's kLanes weights rounded for storage into dst, and w set to what was stored.
inline void store_weights(double* w, Weight* dst) {
  for (int l = 0; l < kLanes; ++l) {
    dst[l] = to_weight(w[l]);
    w[l] = static_cast<double>(dst[l]);
  }
}

// Which of n items have been shown: a bit each.
class ShownSet {
 public:
  explicit ShownSet(std::int64_t n) : n_(n), bits_(static_cast<std::size_t>((n + 63) / 64), 0) {}
  std::int64_t size() const { return n_; }
  bool operator[](std::int64_t i) const {
    return (bits_[static_cast<std::size_t>(i >> 6)] >> (i & 63)) & 1u;
  }
  // Marks item i shown; true when it was not before.
  bool insert(std::int64_t i) {
    std::uint64_t& word = bits_[static_cast<std::size_t>(i >> 6)];
    const std::uint64_t bit = std::uint64_t(1) << (i & 63);
    const bool fresh = (word & bit) == 0;
    word |= bit;
    return fresh;
  }
  std::size_t bytes() const { return bits_.size() * sizeof(std::uint64_t); }

 private:
  std::int64_t n_;
  std::vector<std::uint64_t> bits_;
};

}  // namespace tripletsearch
