// Nearest-candidate scans of the item store: for each of P points ("proto-queries"), the
// kb unshown items of lowest score, where the score of item l at squared distance D from
// the proto is D / w_l (Weighted), w_l sqrt(D) (Paper) or D (Nearest), w the posterior
// weights. OpenMP over fixed chunks of blocks, per-chunk lists merged in a strict total
// order: identical for any thread count.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "../core/linalg.hpp"
#include "../core/parallel.hpp"
#include "../oracle/choice.hpp"
#include "../simd/kernels.hpp"
#include "item_store.hpp"
#include "weights.hpp"

namespace tripletsearch {

constexpr std::int64_t kParallelBlocks = 8;  // below this many blocks a pass runs serially

struct Cand {
  double score;
  std::int64_t index;
};
inline bool better(const Cand& a, const Cand& b) {
  return a.score < b.score || (a.score == b.score && a.index < b.index);
}

// Inserts cand into the sorted list tc[0..k) (k best), unless it is not better than the
// last entry or its item is already listed.
inline void insert_top(Cand* tc, int k, const Cand& cand) {
  if (!better(cand, tc[k - 1])) return;
  for (int t = 0; t < k; ++t)
    if (tc[t].index == cand.index) return;
  int pos = k - 1;
  while (pos > 0 && better(cand, tc[pos - 1])) {
    tc[pos] = tc[pos - 1];
    --pos;
  }
  tc[pos] = cand;
}

// Offers the block's items of positive weight (w: kLanes weights of items base, base + 1,
// ...) to the top k by weight in tc (scores -w, ties: lower index), blocks in index order.
inline void keep_top(const double* w, std::int64_t base, Cand* tc, int k) {
  double mx[4] = {0.0, 0.0, 0.0, 0.0};
  for (int l = 0; l < kLanes; l += 4)
    for (int q = 0; q < 4; ++q) mx[q] = w[l + q] > mx[q] ? w[l + q] : mx[q];
  // an item after those in tc is better than the k-th only with a higher weight
  const double thr = -tc[k - 1].score;
  if (!(std::max(std::max(mx[0], mx[1]), std::max(mx[2], mx[3])) > thr)) return;
  for (int l = 0; l < kLanes; ++l)
    if (w[l] > 0.0) insert_top(tc, k, Cand{-w[l], base + l});
}

// What a scan reads: the store, the block-padded posterior weights (nullptr: all 1), the
// items shown, the chunking of the blocks and the threads.
// A second computation over a scan's items while they are in cache (GaussSearch's strip,
// gauss_strip.hpp): fn(chunk, block, D, yy) right after the scan's own work on each block,
// by the one thread that owns the chunk; D: the block's distances to the protos (P x
// kLanes; nullptr with an axis form), yy: |x - center|^2 in single precision when center32
// is given (block_sqdist_yy), else nullptr. fn must not throw.
struct BlockHook {
  const float* center32 = nullptr;
  std::function<void(std::int64_t, std::int64_t, const double*, const double*)> fn;
};

struct ScanInput {
  const ItemStore& store;
  const Weight* w;
  const ShownSet& shown;
  std::int64_t chunks;
  int threads;
};

// Protos on principal axes, z_c = center + s_c v_{axis_c} (Axes::point): the pre-test then
// costs ne + 1 dot products per item instead of P distances, from ||x - z_c||^2 =
// ||y||^2 - 2 s_c y . v + s_c^2 with y = x - center, in single precision, less a bound on
// its rounding; lanes that pass get the exact distance (lane_sqdist), so the result is the
// plain scan's.
struct AxisProtos {
  const double* center;  // d
  const double* V;       // ne x d, unit rows
  int ne;
  std::vector<int> axis;     // per proto
  std::vector<double> step;  // per proto: s_c

  // Worth it for P protos in d dimensions when its ne + 1 dot products and ~3 operations
  // per proto and item (the bound, vectorized) cost less than the P distances.
  bool pays(int P, std::int64_t d) const { return (ne + 1) * d + 3 * P < P * d; }
};

inline double scan_score(ScanRule rule, double D, double w) {
  if (rule == ScanRule::Weighted) return w > 0.0 ? D / w : std::numeric_limits<double>::infinity();
  if (rule == ScanRule::Paper) return w * std::sqrt(D);
  return D;
}

// The rounding of the single-precision projections (AxisForm below): with g = (d + 4)
// 2^-24, y's squared norm and dot products with a unit vector are within g (|y|^2 + |c| |y|)
// and g (|y| + |c|) of their values (c the centre); the bounds built on it (AxisForm,
// gauss_strip.hpp's) take a multiple of that as their margin.
inline double proj_rounding(std::int64_t d) { return double(d + 4) * 5.9604644775390625e-8; }

namespace detail {

// The blocks [b0, b1) into the per-proto lists top (P x k): a vectorized pre-test against
// each list's current k-th best, exact scores for the few lanes that pass.
// The axis form in single precision, and the bound on its rounding: with g = (d + 4) u,
// u = 2^-24, y and its dot products are within g (|y|^2 + |c| |y|) and g (|y| + |c|) of
// their values (c the center, |v| = 1), so ||x - z||^2 is within 2 g ((|y| + 2|s|)^2 +
// |c| (|y| + 2|s|)); the margin takes four times that, plus 1e-9 ((|y| + |s|)^2 + |z|^2)
// for the double-precision protos and distances.
struct AxisForm {
  std::vector<float> c32, V32;
  double cnorm, g;
  std::vector<double> zz;  // |z_c|^2
};

inline void scan_blocks(const ScanInput& in, const double* protos, int P, int k, ScanRule rule,
                        const AxisProtos* ax, const AxisForm* form, std::int64_t b0,
                        std::int64_t b1, double* Dall, const double* ones, Cand* top,
                        const BlockHook* hook, std::int64_t ch) {
  const std::int64_t n = in.store.n(), d = in.store.d();
  alignas(32) double yy[kLanes], sy[kLanes], Dt[kLanes], wb[kLanes], hy[kLanes];
  const bool with_yy = ax == nullptr && hook != nullptr && hook->center32 != nullptr;
  std::vector<double> yv(ax != nullptr ? static_cast<std::size_t>(ax->ne * kLanes) : 0);
  for (std::int64_t b = b0; b < b1; ++b) {
    const double* w = ones;
    if (in.w != nullptr) {
      load_weights(in.w + b * kLanes, wb);
      w = wb;
    }
    const std::int64_t lanes = std::min<std::int64_t>(kLanes, n - b * kLanes);
    const StoreFloat* xb = in.store.block(b);
    if (with_yy) {
      simd::block_sqdist_yy(xb, d, protos, P, hook->center32, Dall, hy);
    } else if (ax == nullptr) {
      simd::block_sqdist(xb, d, protos, P, Dall);
    } else {
      simd::block_axis_proj(xb, d, form->c32.data(), form->V32.data(), ax->ne, yy, yv.data());
      for (int l = 0; l < kLanes; ++l) sy[l] = std::sqrt(std::max(yy[l], 0.0)) * (1.0 + form->g);
    }
    for (int c = 0; c < P; ++c) {
      const double* D = Dall + c * kLanes;
      if (ax != nullptr) {  // a lower bound of every lane's distance
        simd::axis_lower_bound(yy, sy, yv.data() + ax->axis[static_cast<std::size_t>(c)] * kLanes,
                               ax->step[static_cast<std::size_t>(c)], 8.0 * form->g, form->cnorm,
                               form->zz[static_cast<std::size_t>(c)], Dt);
        D = Dt;
      }
      Cand* tc = top + c * k;
      std::uint64_t mask = simd::block_pretest(D, w, tc[k - 1].score * (1.0 + 1e-12), rule);
      if (lanes < kLanes) mask &= (std::uint64_t(1) << lanes) - 1;
      while (mask) {
        const int l = lowest_bit(mask);
        mask &= mask - 1;
        const double Dl = ax == nullptr ? D[l] : simd::lane_sqdist(xb, d, l, protos + c * d);
        const Cand cand{scan_score(rule, Dl, w[l]), b * kLanes + l};
        if (!better(cand, tc[k - 1]) || in.shown[cand.index]) continue;
        insert_top(tc, k, cand);
      }
    }
    if (hook != nullptr) hook->fn(ch, b, ax == nullptr ? Dall : nullptr, with_yy ? hy : nullptr);
  }
}

}  // namespace detail

// For each of P protos (P x d), the kb unshown items with the lowest scores, sorted
// (missing entries have index -1). `seeds`: items to enter every list first (real
// candidates, so the result is unchanged; the pre-test then rejects most lanes at once).
// With `ax` (the protos' axis form) the pre-test runs on projections (see AxisProtos);
// `hook` runs on every block after it (BlockHook).
inline std::vector<Cand> scan_top(const ScanInput& in, const double* protos, int P, int kb,
                                  ScanRule rule, const std::vector<std::int64_t>& seeds,
                                  const AxisProtos* ax = nullptr,
                                  const BlockHook* hook = nullptr) {
  const std::int64_t nb = in.store.blocks(), d = in.store.d(), C = in.chunks;
  const Cand worst{std::numeric_limits<double>::infinity(),
                   std::numeric_limits<std::int64_t>::max()};
  std::vector<Cand> best(static_cast<std::size_t>(C * P * kb), worst);
  std::vector<double> x(static_cast<std::size_t>(d));
  for (std::int64_t i : seeds) {
    in.store.row(i, x.data());
    const double wi = in.w != nullptr ? static_cast<double>(in.w[i]) : 1.0;
    for (int c = 0; c < P; ++c) {
      const Cand cand{scan_score(rule, sqdist(x.data(), protos + c * d, d), wi), i};
      for (std::int64_t ch = 0; ch < C; ++ch) insert_top(best.data() + (ch * P + c) * kb, kb, cand);
    }
  }
  detail::AxisForm form;
  if (ax != nullptr) {
    form.c32.assign(ax->center, ax->center + d);
    form.V32.assign(ax->V, ax->V + ax->ne * d);
    form.cnorm = std::sqrt(dot(ax->center, ax->center, d));
    form.g = proj_rounding(d);
    for (int c = 0; c < P; ++c) form.zz.push_back(dot(protos + c * d, protos + c * d, d));
  }
  ParallelErrors errors;
#pragma omp parallel num_threads(in.threads) if (nb >= kParallelBlocks)
  {
    std::vector<double> Dall;
    const std::vector<double> ones(static_cast<std::size_t>(kLanes), 1.0);
    errors.run([&] { Dall.resize(static_cast<std::size_t>(P * kLanes)); });
#pragma omp for schedule(static)
    for (std::int64_t ch = 0; ch < C; ++ch)
      if (!errors.failed())
        detail::scan_blocks(in, protos, P, kb, rule, ax, &form, chunk_begin(nb, C, ch),
                            chunk_begin(nb, C, ch + 1), Dall.data(), ones.data(),
                            best.data() + ch * P * kb, hook, ch);
  }
  errors.rethrow();
  // merge chunks (any order gives the same set: strict total order on (score, index))
  std::vector<Cand> merged(static_cast<std::size_t>(P * kb), worst);
  for (std::int64_t ch = 0; ch < C; ++ch)
    for (int c = 0; c < P; ++c)
      for (int t = 0; t < kb; ++t)
        insert_top(merged.data() + c * kb, kb,
                   best[static_cast<std::size_t>((ch * P + c) * kb + t)]);
  for (auto& c : merged)
    if (c.index == worst.index) c.index = -1;
  return merged;
}

// From per-proto ranked lists (P x kb, scan_top's output): for proto c in order, the first
// listed item not taken by an earlier proto (-1 when none is left).
inline void distinct_picks(const std::vector<Cand>& ranked, int P, int kb, std::int64_t* q) {
  for (int c = 0; c < P; ++c) {
    q[c] = -1;
    for (int t = 0; t < kb; ++t) {
      const std::int64_t idx = ranked[static_cast<std::size_t>(c * kb + t)].index;
      bool used = idx < 0;
      for (int s = 0; s < c; ++s) used = used || q[s] == idx;
      if (!used) {
        q[c] = idx;
        break;
      }
    }
  }
}

// For proto c (in order), the unshown item with the lowest score not taken by an earlier
// proto: k protos, k picks (`hook`: scan_top's).
inline void nearest_items(const ScanInput& in, const double* protos, int k, ScanRule rule,
                          const std::vector<std::int64_t>& seeds, std::int64_t* q,
                          const BlockHook* hook = nullptr) {
  distinct_picks(scan_top(in, protos, k, k, rule, seeds, nullptr, hook), k, k, q);
}

}  // namespace tripletsearch
