// A session's first screen by one rule shared by every method (Opening::Uniform): k
// distinct items uniformly at random from the session's seed, so that no method can be told
// by the screen it opens on (issue 40). The methods differ from the second screen on.
//
// The draws: stream (seed, Opening, 1) (index 0 is the rotation of Opening::Random); item
// c is the r-th item, in index order, of those not drawn yet, r = below(n - c): every
// ordered k-tuple of distinct items is as likely, whatever the method, d or the embedding.
// python/tripletsearch/_reference/discrete.py (uniform_opening) is its twin.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../core/seeding.hpp"

namespace tripletsearch {

// The stream index of the uniform opening under Purpose::Opening.
constexpr std::uint64_t kUniformOpeningStream = 1;

// k distinct items of 0..n-1 (k <= n) into q, in the order drawn: O(k^2), not O(n).
inline void uniform_opening(std::uint64_t seed, std::int64_t n, int k, std::int64_t* q) {
  Rng rng = stream(seed, Purpose::Opening, kUniformOpeningStream);
  std::vector<std::int64_t> drawn;  // ascending
  drawn.reserve(static_cast<std::size_t>(k));
  for (int c = 0; c < k; ++c) {
    auto item = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n - c)));
    auto it = drawn.begin();
    for (; it != drawn.end() && *it <= item; ++it) ++item;  // skip the drawn at or below
    drawn.insert(it, item);
    q[c] = item;
  }
}

}  // namespace tripletsearch
