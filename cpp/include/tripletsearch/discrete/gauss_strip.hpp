// GaussSearch's strip: the r items of lowest squared Mahalanobis distance to the belief's
// mean, D(x) = |L^-1 (x - mean)|^2 (L the belief's Cholesky factor; ties: lower index),
// neither shown nor passed over. Two ways to the same items:
//  - StripPass rides on the screen's own pass over the store (scan_top's BlockHook): each
//    block, while in cache, gets a lower bound of D from the distances to the screen's
//    mirrored pair and |x - mean|^2 (MirrorBound: one more single-precision sum of squares
//    in the screen's kernel), and the few lanes that pass get D; the answer then costs
//    about one pass, not two.
//  - scan_nearest_mean, a pass of its own for a strip asked without a fresh screen (a
//    restored session) or when the bound cannot be had: the six tightest axes' projections
//    as the pre-test (MahalanobisPretest), dearer per item.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "../core/linalg.hpp"
#include "../core/parallel.hpp"
#include "../simd/kernels.hpp"
#include "axes.hpp"
#include "scan.hpp"
#include "weights.hpp"

namespace tripletsearch {

// The mirrored pair of the screen (SampleMirror): z0 and z1 = z0 - 2 s v1 with s = v1 . (z0 -
// mean), v1 the belief's widest axis as computed (Jacobi: |v1| = 1 to rounding), l1 >= l2 the
// covariance's two largest eigenvalues of the same decomposition (l2 = l1 when d = 1).
struct MirrorPair {
  const double* z0;
  double s, l1, l2;
};

// A lower bound of D from the screen's own distances: with y = x - mean, D = sum_e (v_e .
// y)^2 / l_e >= t^2 / l1 + (|y|^2 - t^2) / l2 = a |y|^2 - b t^2 (l1 >= l2 >= ... the
// eigenvalues, a = 1 / l2, b = 1 / l2 - 1 / l1 >= 0), t = v1 . y = (D1 - D0) / (4 s) exactly
// (D0, D1 the distances to the mirrored pair) and |y|^2 in single precision from the same
// pass (block_sqdist_yy): two numbers the screen's pass has, one it adds. Margins: t's from
// the distances' rounding (d + 1 units each), z1's (2 units of |z0| + 2 |s| a coordinate),
// s's own and |v1|'s; |y|^2's as scan.hpp's AxisForm (single precision, twice over); the
// eigenpair's, about eps l1 / l2 of D (the bound is refused beyond l1 / l2 = 1e6, and beyond
// kJacobiMaxDim dimensions), as 1e-9 of a |y|^2; 1e-6 of the bound for D's own rounding.
// With s too small: D >= |y|^2 / l1. In 10 dimensions, after a few answers, well under 1 %
// of the items pass it at the strip's bar.
struct MirrorBound {
  bool ok = false;
  std::vector<float> c32;
  MirrorForm f;

  MirrorBound(const std::vector<double>& mean, std::int64_t d, const MirrorPair& pair) {
    const double l1 = pair.l1, l2 = pair.l2;
    if (d > kJacobiMaxDim || !(l2 > 0.0) || !(l1 <= 1e6 * l2) || !std::isfinite(l1)) return;
    const double eps = 2.220446049250313e-16, s = std::abs(pair.s);
    const bool mirror = s > 1e-8 * std::sqrt(l1);
    // |y|^2 at its worst: yy - 4 g (|y|^2 (1 + g)^2 + cn |y| (1 + g)) with |y| <= (yy + 1) / 2
    // (no square root), and 1e-9 of it for the eigenpair
    const double g = proj_rounding(d), cn = std::sqrt(dot(mean.data(), mean.data(), d));
    const double h = 0.5 * (1.0 + g), shrink = 1.0 - 1e-6;  // and 1e-6 of the bound
    f.c1 = 4.0 * g * ((1.0 + g) * (1.0 + g) + cn * h) + 1e-9;
    f.c0 = 4.0 * g * cn * h;
    f.skip = l1 * (1.0 + 1e-6);
    c32.assign(mean.begin(), mean.end());
    ok = true;
    if (!mirror) {
      f.a = shrink / l1;
      return;
    }
    // |t| at its worst: (D1 - D0) / (4 s) off by the distances' rounding, z1's and s's
    const double zn = std::sqrt(dot(pair.z0, pair.z0, d)), e = 4.0 * eps * (zn + 2.0 * s);
    const double errd = double(d + 1) * eps / s, erre = e / s;
    f.a = shrink / l2;
    f.b = shrink * std::max(1.0 / l2 - 1.0 / l1, 0.0);
    f.i4s = 1.0 / (4.0 * s);
    f.ed = errd;
    f.e1 = errd + erre;
    f.et = erre + (e * e + 16.0 * double(d) * eps * s * s) / s +
           4.0 * double(d) * eps * (zn + cn + 2.0 * s);
  }

  // Bit l set when lane l's D may be at most bar (lanes beyond the store's end included):
  // D: the block's distances to z0 and z1 (2 x kLanes), yy: |x - mean|^2.
  std::uint64_t block(const double* D, const double* yy, double bar) const {
    return simd::mirror_pretest(D, D + kLanes, yy, f, bar);
  }
};

// The strip fused into the screen's pass: per chunk of the pass, the r best items (neither
// shown nor passed over) in a heap. The bar starts at the r-th best of `seeds` (the last
// pass's candidates, still eligible, their D under this belief): no item above it can be
// among the r best, so from the first block most lanes fail the bound. Per chunk, no
// allocation in the hook; merged in chunk order after the pass (identical for any thread
// count: the exact r best, ties by index).
class StripPass {
 public:
  StripPass(const ItemStore& store, const ShownSet& shown, const ShownSet& passed,
            const std::vector<double>& mean, const std::vector<double>& L, int r,
            std::int64_t chunks, const std::vector<std::int64_t>& seeds, const MirrorPair& pair)
      : store_(store), shown_(shown), passed_(passed), mean_(mean), L_(L), r_(r),
        bound_(mean, store.d(), pair), chunks_(static_cast<std::size_t>(chunks)) {
    if (!bound_.ok) return;
    const std::int64_t d = store.d();
    std::vector<double> x(static_cast<std::size_t>(d)), t(x.size()), ds;
    for (std::int64_t i : seeds)
      if (!shown_[i] && !passed_[i]) ds.push_back(distance(i, x.data(), t.data()));
    if (static_cast<int>(ds.size()) >= r_) {
      std::nth_element(ds.begin(), ds.begin() + (r_ - 1), ds.end());
      bar0_ = ds[static_cast<std::size_t>(r_ - 1)];
    }
    for (Chunk& c : chunks_) {
      c.heap.reserve(static_cast<std::size_t>(r_));
      c.x.resize(static_cast<std::size_t>(d));
      c.t.resize(c.x.size());
    }
  }

  bool ok() const { return bound_.ok; }

  // The scan's hook (BlockHook): its centre, and the work on block b of chunk ch.
  BlockHook hook() {
    return BlockHook{bound_.c32.data(),
                     [this](std::int64_t ch, std::int64_t b, const double* D, const double* yy) {
                       block(ch, b, D, yy);
                     }};
  }

  // Block b of chunk ch (one thread per chunk): D, yy as MirrorBound::block.
  void block(std::int64_t ch, std::int64_t b, const double* D, const double* yy) {
    Chunk& c = chunks_[static_cast<std::size_t>(ch)];
    const std::int64_t n = store_.n(), d = store_.d();
    const StoreFloat* xb = store_.block(b);
    const bool full0 = static_cast<int>(c.heap.size()) == r_;
    std::uint64_t mask = bound_.block(D, yy, full0 ? std::min(bar0_, c.heap.front().score) : bar0_);
    const std::int64_t lanes = std::min<std::int64_t>(kLanes, n - b * kLanes);
    if (lanes < kLanes) mask &= (std::uint64_t(1) << lanes) - 1;
    while (mask) {  // the bar only falls within the block: the mask may keep a few too many
      const int l = lowest_bit(mask);
      mask &= mask - 1;
      const std::int64_t i = b * kLanes + l;
      if (shown_[i] || passed_[i]) continue;
      for (std::int64_t a = 0; a < d; ++a)
        c.x[a] = static_cast<double>(xb[a * kLanes + l]) - mean_[a];
      const Cand cand{lower_solve_sq_norm(L_, d, c.x.data(), c.t.data()), i};
      if (static_cast<int>(c.heap.size()) < r_) {
        c.heap.push_back(cand);
        std::push_heap(c.heap.begin(), c.heap.end(), better);  // front: the worst kept
      } else if (better(cand, c.heap.front())) {
        std::pop_heap(c.heap.begin(), c.heap.end(), better);
        c.heap.back() = cand;
        std::push_heap(c.heap.begin(), c.heap.end(), better);
      }
    }
  }

  // Every chunk's kept items, sorted: the first r are the r best of all.
  std::vector<Cand> merged() const {
    std::vector<Cand> all;
    for (const Chunk& c : chunks_) all.insert(all.end(), c.heap.begin(), c.heap.end());
    std::sort(all.begin(), all.end(), better);
    return all;
  }

 private:
  struct Chunk {
    std::vector<Cand> heap;
    std::vector<double> x, t;
  };

  double distance(std::int64_t i, double* x, double* t) const {
    const std::int64_t d = store_.d();
    store_.row(i, x);
    for (std::int64_t a = 0; a < d; ++a) x[a] -= mean_[a];
    return lower_solve_sq_norm(L_, d, x, t);
  }

  const ItemStore& store_;
  const ShownSet &shown_, &passed_;
  const std::vector<double>& mean_;
  const std::vector<double>& L_;
  int r_;
  double bar0_ = std::numeric_limits<double>::infinity();
  MirrorBound bound_;
  std::vector<Chunk> chunks_;
};

// A lower bound of D of a block's items from their projections on the belief's ne tightest
// principal axes in single precision (simd::block_axis_proj): sum_e (|p_e| - err)_+^2 /
// lambda_e, err twice the projections' rounding, less a relative 1e-6 for the eigenpairs'
// and the exact distance's own rounding. ne = min(d, 6): two groups of the AVX2 kernel; in
// d = 10 about 0.5 % of the items pass it. ne = 0 (no pre-test) beyond kJacobiMaxDim or when
// the belief is degenerate (its smallest variance below 1e-9 of the largest).
struct MahalanobisPretest {
  int ne = 0;
  std::int64_t d;
  std::vector<float> c32, V32;  // the mean, the ne axes (rows)
  std::vector<double> inv;      // 1 / lambda_e
  double cnorm = 0.0, g;

  MahalanobisPretest(const std::vector<double>& cov, const std::vector<double>& mean,
                     std::int64_t d_)
      : d(d_), g(proj_rounding(d_)) {
    if (d > kJacobiMaxDim) return;
    AxesWarmStart warm;
    const Axes all = Axes::of(cov, d, static_cast<int>(d), warm);  // largest first
    const double top = all.values[0], low = all.values[static_cast<std::size_t>(d - 1)];
    if (!(top > 0.0) || !(low > 1e-9 * top)) return;
    ne = static_cast<int>(std::min<std::int64_t>(d, 6));
    for (int e = 0; e < ne; ++e) {  // the tightest first
      const std::int64_t src = d - 1 - e;
      inv.push_back(1.0 / all.values[static_cast<std::size_t>(src)]);
      for (std::int64_t a = 0; a < d; ++a)
        V32.push_back(static_cast<float>(all.vectors[static_cast<std::size_t>(src * d + a)]));
    }
    c32.assign(mean.begin(), mean.end());
    cnorm = std::sqrt(dot(mean.data(), mean.data(), d));
  }

  // lb[l] <= each lane's exact distance (yv: ne x kLanes scratch).
  void block(const StoreFloat* xb, double* yv, double* lb) const {
    alignas(32) double yy[kLanes];
    simd::block_axis_proj(xb, d, c32.data(), V32.data(), ne, yy, yv);
    alignas(32) double err[kLanes];
    for (int l = 0; l < kLanes; ++l) {
      err[l] = 2.0 * g * (std::sqrt(std::max(yy[l], 0.0)) * (1.0 + g) + cnorm);
      lb[l] = 0.0;
    }
    for (int e = 0; e < ne; ++e) {  // lane by lane, vectorized
      const double iv = inv[static_cast<std::size_t>(e)];
      const double* p = yv + e * kLanes;
      for (int l = 0; l < kLanes; ++l) {
        const double a = std::max(std::abs(p[l]) - err[l], 0.0);
        lb[l] += a * a * iv;
      }
    }
    for (int l = 0; l < kLanes; ++l) lb[l] *= 1.0 - 1e-6;
  }
};

// Block xb's D into acc (lower_solve_sq_norm's arithmetic, lane by lane, y: d x kLanes
// scratch); false, acc unset, when every lane's partial sum already exceeds `bound` (no
// lane can beat it: the sum only grows).
inline bool block_mahalanobis(const StoreFloat* xb, std::int64_t d, const double* mean,
                              const double* L, double bound, double* y, double* acc) {
  for (int l = 0; l < kLanes; ++l) acc[l] = 0.0;
  for (std::int64_t a = 0; a < d; ++a) {
    double* ya = y + a * kLanes;
    const StoreFloat* xa = xb + a * kLanes;
    for (int l = 0; l < kLanes; ++l) ya[l] = static_cast<double>(xa[l]) - mean[a];
    for (std::int64_t c = 0; c < a; ++c) {
      const double lac = L[a * d + c];
      const double* yc = y + c * kLanes;
      for (int l = 0; l < kLanes; ++l) ya[l] -= lac * yc[l];
    }
    const double laa = L[a * d + a];
    if (laa > 0.0) {
      for (int l = 0; l < kLanes; ++l) ya[l] = ya[l] / laa;
    } else {
      for (int l = 0; l < kLanes; ++l) ya[l] = 0.0;
    }
    double lo = std::numeric_limits<double>::infinity();
    for (int l = 0; l < kLanes; ++l) {
      acc[l] += ya[l] * ya[l];
      lo = std::min(lo, acc[l]);
    }
    if (lo > bound) return false;
  }
  return true;
}

// The r best items (neither shown nor passed over) of each of C chunks of the blocks, all
// sorted: a threaded pass of its own, each chunk's best in a heap, merged in a strict total
// order (any thread count, the same); the first r are the r best of all.
inline std::vector<Cand> scan_nearest_mean(const ItemStore& store, const ShownSet& shown,
                                           const ShownSet& passed, const std::vector<double>& mean,
                                           const std::vector<double>& cov,
                                           const std::vector<double>& L, std::int64_t C,
                                           std::int64_t r, int threads) {
  const std::int64_t n = store.n(), d = store.d(), nb = store.blocks();
  const MahalanobisPretest pre(cov, mean, d);
  std::vector<std::vector<Cand>> heaps(static_cast<std::size_t>(C));
  ParallelErrors errors;
#pragma omp parallel num_threads(threads) if (nb >= kParallelBlocks)
  {
    std::vector<double> y, yv, x, t;
    errors.run([&] {
      y.resize(static_cast<std::size_t>(d * kLanes));
      yv.resize(static_cast<std::size_t>(std::max(pre.ne, 1) * kLanes));
      x.resize(static_cast<std::size_t>(d));
      t.resize(x.size());
    });
#pragma omp for schedule(static)
    for (std::int64_t ch = 0; ch < C; ++ch) {
      if (errors.failed()) continue;
      errors.run([&] {
        std::vector<Cand>& h = heaps[static_cast<std::size_t>(ch)];
        h.reserve(static_cast<std::size_t>(r));
        auto bar = [&] {  // the heap's worst while full: no item above it enters
          return static_cast<std::int64_t>(h.size()) < r ? std::numeric_limits<double>::infinity()
                                                         : h.front().score;
        };
        auto offer = [&](std::int64_t i, double score) {
          const Cand cand{score, i};
          if (shown[i] || passed[i]) return;
          if (static_cast<std::int64_t>(h.size()) < r) {
            h.push_back(cand);
            std::push_heap(h.begin(), h.end(), better);  // front: the worst
          } else if (better(cand, h.front())) {
            std::pop_heap(h.begin(), h.end(), better);
            h.back() = cand;
            std::push_heap(h.begin(), h.end(), better);
          }
        };
        const std::int64_t b1 = chunk_begin(nb, C, ch + 1);
        for (std::int64_t b = chunk_begin(nb, C, ch); b < b1; ++b) {
          const StoreFloat* xb = store.block(b);
          const std::int64_t lanes = std::min<std::int64_t>(kLanes, n - b * kLanes);
          if (pre.ne > 0) {
            alignas(32) double lb[kLanes];
            pre.block(xb, yv.data(), lb);
            for (std::int64_t l = 0; l < lanes; ++l) {
              if (lb[l] > bar()) continue;  // its distance is above the bar too
              for (std::int64_t a = 0; a < d; ++a)
                x[a] = static_cast<double>(xb[a * kLanes + l]) - mean[a];
              offer(b * kLanes + l, lower_solve_sq_norm(L, d, x.data(), t.data()));
            }
            continue;
          }
          alignas(32) double acc[kLanes];
          if (!block_mahalanobis(xb, d, mean.data(), L.data(), bar(), y.data(), acc)) continue;
          for (std::int64_t l = 0; l < lanes; ++l) offer(b * kLanes + l, acc[l]);
        }
      });
    }
  }
  errors.rethrow();
  std::vector<Cand> all;
  for (const auto& h : heaps) all.insert(all.end(), h.begin(), h.end());
  std::sort(all.begin(), all.end(), better);
  return all;
}

}  // namespace tripletsearch
