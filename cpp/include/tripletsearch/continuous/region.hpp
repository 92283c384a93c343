// Regions of the continuous search (Section 3): hypercubes (center, edge) and the nested
// geometry relative to a region X of edge e:
//   slack S     : same center, edge 3e/2, tiled by 6^d tiles of edge e/4;
//   children    : the 5^d cubes of edge e/2 made of 2 x ... x 2 tiles, centers at
//                 offsets (m - 2) e/4, m in {0..4}, along each axis;
//   parent u(X) : same center, edge 4e (the union of all regions having X as a child).
// Depth counts halvings from Omega: a child is one deeper, the parent two shallower.
#pragma once

#include <cstdint>
#include <vector>

namespace tripletsearch {

struct Region {
  std::vector<double> center;
  double edge = 1.0;
  std::int64_t depth = 0;

  // The child with per-axis position m[a] in {0..4}.
  Region child(const int* m) const {
    Region r{center, 0.5 * edge, depth + 1};
    for (std::size_t a = 0; a < center.size(); ++a) r.center[a] += (m[a] - 2) * 0.25 * edge;
    return r;
  }
  Region parent() const { return Region{center, 4.0 * edge, depth - 2}; }
};

}  // namespace tripletsearch
