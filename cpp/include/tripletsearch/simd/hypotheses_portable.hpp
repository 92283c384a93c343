// The update of the user hypotheses' weights by one answer, for one block of the store
// (discrete/hypotheses.hpp): the portable version, and the body that hypotheses_avx2.hpp
// compiles a second time for AVX2. See hypotheses.hpp for what it computes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "../core/mathutil.hpp"
#include "../oracle/choice.hpp"
#include "../oracle/user_grid.hpp"
#include "block.hpp"

namespace tripletsearch {
namespace simd {

// What one block's hypothesis update reads and writes (discrete/hypotheses.hpp's
// HypothesisWeights::update_block).
struct HypothesisBlock {
  const GammaPower* power;  // the fixed gamma (gamma_auto false)
  bool gamma_auto, lapse_auto;
  double lapse;  // the fixed lapse rate (lapse_auto false)
  Weight* wh;    // hypothesis 0's lanes of the block; hypothesis h at wh + h * stride
  std::size_t stride;
  double* w;     // the block's item weights (out: sums over h in order)
  double* hacc;  // the hypotheses' masses (+= the block's)
};

// A block's mass per hypothesis: eight lane-parallel partial sums, added in a fixed order.
constexpr int kMassLanes = 8;
TS_ALWAYS_INLINE double mass_of(const double* part) {
  return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

namespace portable {

// The body, compiled for the portable and the AVX2 kernels: every grid power from s^(1/4)
// and s^(3/8) by squarings (user_grid.hpp's grid_power for all g at once), lane-wise so
// that the lanes vectorize.
TS_ALWAYS_INLINE void hypothesis_update_body(const HypothesisBlock& hb, const double* D, int k,
                                             int choice, double scale) {
  const int ng = hb.gamma_auto ? kGammaGrid : 1, nl = hb.lapse_auto ? kLapseGrid : 1;
  double num[kGammaGrid][kLanes], den[kGammaGrid][kLanes], dmin[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    double m = std::max(D[l], kTinyDistance);
    for (int j = 1; j < k; ++j) m = std::min(m, std::max(D[j * kLanes + l], kTinyDistance));
    dmin[l] = m;
  }
  for (int g = 0; g < ng; ++g)
    for (int l = 0; l < kLanes; ++l) den[g][l] = 0.0;
  double even[kLanes], odd[kLanes];
  for (int c = 0; c < k; ++c) {
    for (int l = 0; l < kLanes; ++l) {  // the closest items' ratios are 1 exactly
      const double Dc = std::max(D[c * kLanes + l], kTinyDistance);
      even[l] = Dc == dmin[l] ? 1.0 : dmin[l] * (1.0 / Dc);
    }
    if (!hb.gamma_auto) {
      for (int l = 0; l < kLanes; ++l) {
        const double p = (*hb.power)(even[l]);
        den[0][l] += p;
        if (c == choice) num[0][l] = p;
      }
      continue;
    }
    for (int l = 0; l < kLanes; ++l) {
      const double h = std::sqrt(even[l]);
      even[l] = std::sqrt(h);
      odd[l] = std::sqrt(h * even[l]);
    }
    for (int g = 0; g < kGammaGrid; g += 2) {
      for (int l = 0; l < kLanes; ++l) den[g][l] += even[l];
      if (c == choice)
        for (int l = 0; l < kLanes; ++l) num[g][l] = even[l];
      if (g + 1 < kGammaGrid) {
        for (int l = 0; l < kLanes; ++l) den[g + 1][l] += odd[l];
        if (c == choice)
          for (int l = 0; l < kLanes; ++l) num[g + 1][l] = odd[l];
      }
      for (int l = 0; l < kLanes; ++l) {
        even[l] *= even[l];
        odd[l] *= odd[l];
      }
    }
  }
  for (int l = 0; l < kLanes; ++l) hb.w[l] = 0.0;
  for (int g = 0; g < ng; ++g)
    for (int e = 0; e < nl; ++e) {
      const int h = g * nl + e;
      const double eps = hb.lapse_auto ? kLapseValues[e] : hb.lapse;
      Weight* __restrict wh = hb.wh + static_cast<std::size_t>(h) * hb.stride;
      double* __restrict w = hb.w;
      double v[kLanes];  // the new weights in double precision: the sums and masses use them
      for (int l = 0; l < kLanes; ++l) {
        const double p = num[g][l] * (1.0 / den[g][l]);
        v[l] = static_cast<double>(wh[l]) * ((eps / k + (1.0 - eps) * p) * scale);
        wh[l] = to_weight(v[l]);
        w[l] += v[l];
      }
      double part[kMassLanes] = {};  // lane-parallel partial masses (a chain of 8, not 64)
      for (int l0 = 0; l0 < kLanes; l0 += kMassLanes)
        for (int q = 0; q < kMassLanes; ++q) part[q] += v[l0 + q];
      hb.hacc[h] += mass_of(part);
    }
}

inline void hypothesis_update(const HypothesisBlock& hb, const double* D, int k, int choice,
                              double scale) {
  hypothesis_update_body(hb, D, k, choice, scale);
}

}  // namespace portable
}  // namespace simd
}  // namespace tripletsearch
