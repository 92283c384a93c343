// The block kernels of the database search, each one entry point that runs the version of
// the active ISA (dispatch.hpp). Blocks follow block.hpp's layout; D arrays are k x kLanes.
#pragma once

#include <cstdint>
#include <limits>

#include "dispatch.hpp"
#include "kernels_avx2.hpp"
#include "kernels_portable.hpp"

namespace tripletsearch {
namespace simd {

// out[j * kLanes + l] = ||x_l - z_j||^2 for the items l of block xb and k points z (k x d).
inline void block_sqdist(const StoreFloat* xb, std::int64_t d, const double* z, int k,
                         double* out) {
  TS_SIMD_DISPATCH(block_sqdist(xb, d, z, k, out));
}

// block_sqdist's values, and yy[l] = |x_l - c|^2 in single precision (c32: c rounded) from
// the same pass over the block.
inline void block_sqdist_yy(const StoreFloat* xb, std::int64_t d, const double* z, int k,
                            const float* c32, double* out, double* yy) {
  TS_SIMD_DISPATCH(block_sqdist_yy(xb, d, z, k, c32, out, yy));
}

// Adds the weighted moments of block xb (weights w) around c to acc (block.hpp layout);
// y and wy: d x kLanes scratch each.
inline void block_moments(const StoreFloat* xb, const double* w, std::int64_t d, const double* c,
                          double* acc, double* y, double* wy) {
  TS_SIMD_DISPATCH(block_moments(xb, w, d, c, acc, y, wy));
}

// The weight and first moment of block xb around c into acc (block.hpp layout, no second
// moment), and the block's weighted second moment around c applied to the p rows of Q32
// (p x d, single precision) added to proj (kernels_portable.hpp). c32: c in single
// precision; y32: d x kLanes, s32: p x kLanes scratch.
inline void block_moment1_project(const StoreFloat* xb, const double* w, std::int64_t d,
                                  const double* c, const float* c32, const float* Q32, int p,
                                  double* acc, double* proj, float* y32, float* s32) {
  TS_SIMD_DISPATCH(block_moment1_project(xb, w, d, c, c32, Q32, p, acc, proj, y32, s32));
}

// ||x_l - z||^2 for lane l of block xb: exactly block_sqdist's value for that lane.
inline double lane_sqdist(const StoreFloat* xb, std::int64_t d, int l, const double* z) {
  TS_SIMD_DISPATCH(lane_sqdist(xb, d, l, z));
}

// yy[l] = ||x_l - c||^2, yv[e * kLanes + l] = (x_l - c) . v_e for the ne rows of V (ne x
// d), in single precision from c32 and V32 (the inputs of a scan's pre-test along
// principal axes; rounding differs by ISA).
inline void block_axis_proj(const StoreFloat* xb, std::int64_t d, const float* c32,
                            const float* V32, int ne, double* yy, double* yv) {
  TS_SIMD_DISPATCH(block_axis_proj(xb, d, c32, V32, ne, yy, yv));
}

// Dt = a lower bound of each lane's squared distance to the proto center + s v from the
// lane's |y|^2, its bound sy >= |y| and y . v (discrete/scan.hpp's AxisForm).
inline void axis_lower_bound(const double* yy, const double* sy, const double* yv, double s,
                             double g8, double cn, double zz, double* Dt) {
  TS_SIMD_DISPATCH(axis_lower_bound(yy, sy, yv, s, g8, cn, zz, Dt));
}

// Bit l set when lane l may beat the threshold thr of a scan (slightly relaxed by the
// caller: the exact score decides): D / w <= thr (Weighted), w sqrt(D) <= thr (Paper),
// D <= thr (Nearest). thr = inf passes every lane.
inline std::uint64_t block_pretest(const double* D, const double* w, double thr, ScanRule rule) {
  if (!(thr < std::numeric_limits<double>::infinity())) return ~std::uint64_t(0);
  TS_SIMD_DISPATCH(block_pretest(D, w, thr, rule));
}

// Bit l set when a lower bound of lane l's squared Mahalanobis distance to the belief's
// mean, from D0, D1 (a mirrored pair's distances, block_sqdist) and yy = |x - mean|^2
// (block_sqdist_yy), may be at most bar (discrete/gauss_strip.hpp's MirrorBound).
inline std::uint64_t mirror_pretest(const double* D0, const double* D1, const double* yy,
                                    const MirrorForm& f, double bar) {
  TS_SIMD_DISPATCH(mirror_pretest(D0, D1, yy, f, bar));
}

// lik[l] = P(shown item `chosen` of k named | target = item l) under gamma-CKL, from the
// squared distances D (k x kLanes) of the shown items to the block's items.
inline void block_choice_lik(const GammaPower& g, const double* D, int k, int chosen, double* lik) {
  TS_SIMD_DISPATCH(block_choice_lik(g, D, k, chosen, lik));
}

// D[s] = max(||xc - x_s||^2, DBL_MIN) for S points stored dimension-major (xsT: d x S).
inline void points_sqdist(const double* xc, const double* xsT, int S, std::int64_t d, double* D) {
  TS_SIMD_DISPATCH(points_sqdist(xc, xsT, S, d, D));
}

// u[s] <- (dmin[s] / u[s])^(gamma/2) for s < S (choice.hpp's relative_weights); base: S
// scratch.
inline void relative_weights(const GammaPower& g, const double* dmin, int S, double* u,
                             double* base) {
  TS_SIMD_DISPATCH(relative_weights(g, dmin, S, u, base));
}

// For a pair with relative choice weights ui, uj over S targets (in[s] = 1 for the targets
// counted, 0 otherwise): a = sum_s in[s] P(i | s) and cond = sum_s in[s] 2 P(i|s) P(j|s),
// in four interleaved partial sums added in a fixed order.
inline void pair_gini(const double* ui, const double* uj, const double* in, int S, double* a,
                      double* cond) {
  TS_SIMD_DISPATCH(pair_gini(ui, uj, in, S, a, cond));
}

}  // namespace simd
}  // namespace tripletsearch
