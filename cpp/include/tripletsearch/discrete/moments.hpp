// The weighted moments of the item store, for GammaCKLPosterior: the pass's per-chunk
// accumulators merged in a fixed order, the covariance on request (beyond kJacobiMaxDim
// the pass keeps only the mean), and the covariance applied to a block of vectors (the
// principal axes by subspace iteration). Sums in chunk order: identical for any thread
// count.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../core/parallel.hpp"
#include "../simd/block.hpp"
#include "../simd/kernels.hpp"
#include "item_store.hpp"
#include "scan.hpp"
#include "weights.hpp"

namespace tripletsearch {

// The chunks' accumulators (chunks x msz, block.hpp's moment layout; with `full` the
// second moment too) merged in chunk order, then the lanes in order. Returns the total
// weight W; when W > 0, m1 = the first moment around the accumulators' center (d values)
// and, with `full`, cov (d x d) = the covariance; otherwise m1 empty and cov untouched.
inline double merge_moments(const std::vector<double>& acc, std::int64_t chunks, std::int64_t d,
                            bool full, std::vector<double>& m1, std::vector<double>& cov) {
  const std::int64_t msz = acc.size() / static_cast<std::size_t>(chunks);
  std::vector<double> m(static_cast<std::size_t>(msz), 0.0);
  for (std::int64_t ch = 0; ch < chunks; ++ch)
    for (std::int64_t t = 0; t < msz; ++t)
      m[static_cast<std::size_t>(t)] += acc[static_cast<std::size_t>(ch * msz + t)];
  auto lane_sum = [&](std::int64_t off) {
    double s = 0.0;
    for (int q = 0; q < kAccLanes; ++q) s += m[static_cast<std::size_t>(off + q)];
    return s;
  };
  const double W = lane_sum(0);
  m1.clear();
  if (!(W > 0.0)) return W;  // no mass left
  m1.resize(static_cast<std::size_t>(d));
  for (std::int64_t a = 0; a < d; ++a) m1[a] = lane_sum(kAccLanes * (1 + a)) / W;
  if (!full) return W;
  const std::int64_t moff = kAccLanes * (1 + d);
  for (std::int64_t a = 0; a < d; ++a)
    for (std::int64_t b = a; b < d; ++b) {
      const double* mq = m.data() + moff + (a * d + b) * 4;
      const double v = ((mq[0] + mq[1]) + (mq[2] + mq[3])) / W - m1[a] * m1[b];
      cov[a * d + b] = cov[b * d + a] = v;
    }
  return W;
}

// cov (d x d) = the covariance of the items under the weights w (block-padded) around
// `mean`, by one serial pass with the full moment kernel (one accumulator of O(d^2)).
inline void weighted_cov(const ItemStore& store, const Weight* w, const double* mean, double* cov) {
  const std::int64_t d = store.d();
  std::vector<double> acc(static_cast<std::size_t>(moment_size(d)), 0.0);
  std::vector<double> y(static_cast<std::size_t>(d * kLanes)), wy(y.size());
  alignas(32) double wb[kLanes];
  for (std::int64_t b = 0; b < store.blocks(); ++b) {
    load_weights(w + b * kLanes, wb);
    simd::block_moments(store.block(b), wb, d, mean, acc.data(), y.data(), wy.data());
  }
  double W = 0.0;
  for (int q = 0; q < kAccLanes; ++q) W += acc[static_cast<std::size_t>(q)];
  const double* M = acc.data() + kAccLanes * (1 + d);
  for (std::int64_t a = 0; a < d; ++a)
    for (std::int64_t b = a; b < d; ++b) {
      const double* mq = M + (a * d + b) * 4;
      cov[a * d + b] = cov[b * d + a] = W > 0.0 ? ((mq[0] + mq[1]) + (mq[2] + mq[3])) / W : 0.0;
    }
}

// out = C Q for the p rows of Q (p x d), C the covariance under the weights w (total W)
// around `mean`: sum_i w_i y_i (y_i . q_j) / W, y_i = x_i - mean, per-chunk accumulators
// merged in chunk order (block_moment1_project: single-precision products).
inline void apply_weighted_cov(const ItemStore& store, const Weight* w, const double* mean,
                               double W, std::int64_t chunks, int threads, const double* Q, int p,
                               double* out) {
  const std::int64_t nb = store.blocks(), d = store.d(), C = chunks;
  const std::size_t pd = static_cast<std::size_t>(p) * static_cast<std::size_t>(d);
  std::vector<double> acc(static_cast<std::size_t>(C) * pd, 0.0);
  const std::vector<float> Q32(Q, Q + pd), c32(mean, mean + d);
  ParallelErrors errors;
#pragma omp parallel num_threads(threads) if (nb >= kParallelBlocks)
  {
    std::vector<double> m;  // the first moment: not needed here
    std::vector<float> y32, s32;
    alignas(32) double wb[kLanes];
    errors.run([&] {
      m.resize(static_cast<std::size_t>(kAccLanes * (1 + d)));
      y32.resize(static_cast<std::size_t>(d * kLanes));
      s32.resize(static_cast<std::size_t>(p * kLanes));
    });
#pragma omp for schedule(static)
    for (std::int64_t ch = 0; ch < C; ++ch) {
      if (errors.failed()) continue;
      double* a_out = acc.data() + static_cast<std::size_t>(ch) * pd;
      for (std::int64_t b = chunk_begin(nb, C, ch); b < chunk_begin(nb, C, ch + 1); ++b) {
        load_weights(w + b * kLanes, wb);
        simd::block_moment1_project(store.block(b), wb, d, mean, c32.data(), Q32.data(), p,
                                    m.data(), a_out, y32.data(), s32.data());
      }
    }
  }
  errors.rethrow();
  std::fill(out, out + pd, 0.0);
  for (std::int64_t ch = 0; ch < C; ++ch)
    for (std::size_t k = 0; k < pd; ++k) out[k] += acc[static_cast<std::size_t>(ch) * pd + k];
  const double inv = W > 0.0 ? 1.0 / W : 0.0;
  for (std::size_t k = 0; k < pd; ++k) out[k] *= inv;
}

}  // namespace tripletsearch
