// gamma-CKLSearch's information-gain selection rule, in three steps:
//  1. candidates: the weighted-nearest items to proto-queries at five radii
//     r * {1/4, 1/2, 3/4, 1, 3/2} along the top eigen-directions (pairs: five directions --
//     three gave 2 % more queries in d = 5 -- and the four most probable items);
//  2. tuples: pairs: every plus-side item against every minus-side item of a direction and
//     every pair involving a most probable item; k > 2: the k protos of each radius;
//  3. scores: each tuple's expected one-step information about the target in the quadratic
//     (Gini) entropy, outcomes {target shown as item c, user picks c}: G(Y) - E_t G(Y | t),
//     G(P) = 1 - sum P^2, the expectation over 128 items drawn from the posterior (with
//     gamma inferred: 128 (item, gamma) pairs from the joint posterior, each draw's choices
//     under its own gamma, so the score accounts for the uncertainty about the user).
// The tuple with the highest score (the first among equals) is asked. A session's first
// query takes its axes turned by a rotation of the session's own (Axes::rotate).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../core/seeding.hpp"
#include "../oracle/choice.hpp"
#include "../simd/kernels.hpp"
#include "axes.hpp"
#include "config.hpp"
#include "gammackl_posterior.hpp"
#include "scan.hpp"

namespace tripletsearch {

class InfoGainSelector {
 public:
  static constexpr int kRadii = 5;
  static constexpr int kSamples = 128;  // posterior draws per score
  static constexpr int kTopItems = 4;   // most probable items among the pair candidates
  // Principal axes the candidates come from (at most d): pairs use five up to
  // kJacobiMaxDim dimensions and three beyond, where each axis costs a projection per
  // item and answer (the posterior's subspace step).
  static constexpr int axes_for(int k, std::int64_t d) {
    return k == 2 ? (d <= kJacobiMaxDim ? 5 : 3) : (k + 1) / 2;
  }

  // Writes the best tuple into q (k items) and returns true; false when no tuple can be
  // formed (a degenerate posterior: the caller falls back to the weighted rule).
  bool select(const GammaCKLPosterior& post, const ScanInput& in, const SearchConfig& cfg,
              std::uint64_t seed, std::int64_t query, int k, std::int64_t* q);

 private:
  std::vector<std::int64_t> tuples(const GammaCKLPosterior& post, const ScanInput& in,
                                   const SearchConfig& cfg, int k, std::uint64_t seed,
                                   std::int64_t query) const;
  void index_candidates(const std::vector<std::int64_t>& tuples, int k, std::int64_t n);
  void choice_weights(const ScanInput& in, const std::vector<std::int64_t>& sample, double gamma,
                      const int* grid_gamma);
  std::int64_t best_tuple(const GammaCKLPosterior& post, int k, int threads) const;
  double tuple_score(const GammaCKLPosterior& post, const int* pos, int k, double* in,
                     double* A) const;

  std::vector<std::int32_t> mark_;          // 1 + candidate position per item, 0 between calls
  std::vector<std::int64_t> cands_;         // distinct candidate items, ascending
  std::vector<int> tpos_;                   // tuples as positions into cands_ (n_tuples x k)
  std::vector<double> u_;                   // relative choice weights (candidates x kSamples)
  std::vector<std::vector<int>> draws_of_;  // per candidate: the draws equal to it
};

inline constexpr double kInfoGainRadii[InfoGainSelector::kRadii] = {0.25, 0.5, 0.75, 1.0, 1.5};

// Step 1 and 2: candidate items and the tuples they form (n_tuples x k item indices).
inline std::vector<std::int64_t> InfoGainSelector::tuples(const GammaCKLPosterior& post,
                                                          const ScanInput& in,
                                                          const SearchConfig& cfg, int k,
                                                          std::uint64_t seed,
                                                          std::int64_t query) const {
  const std::int64_t d = in.store.d();
  const int count = static_cast<int>(std::min<std::int64_t>(axes_for(k, d), d));
  const Axes axes = cfg.opening == Opening::Random && query == 0  // sessions open differently
                        ? Axes::opening(post, count, d, seed)
                        : post.axes(count);
  const int ne = axes.count, P = k == 2 ? ne * kRadii * 2 : kRadii * k;
  std::vector<double> protos(static_cast<std::size_t>(P * d));
  AxisProtos ax{post.mean().data(), axes.vectors.data(), ne,
                std::vector<int>(static_cast<std::size_t>(P)),
                std::vector<double>(static_cast<std::size_t>(P))};
  auto place = [&](int c, int e, double step) {  // proto c on axis e
    axes.point(post.mean(), e, step, protos.data() + c * d);
    ax.axis[static_cast<std::size_t>(c)] = e;
    ax.step[static_cast<std::size_t>(c)] = axes.scaled(e, step);
  };
  for (int a = 0; a < kRadii; ++a) {
    if (k != 2) {
      for (int c = 0; c < k; ++c)
        place(a * k + c, axes.proto_axis(c), axes.proto_step(c, kInfoGainRadii[a] * cfg.r));
      continue;
    }
    for (int e = 0; e < ne; ++e)
      for (int sgn = 0; sgn < 2; ++sgn)
        place((e * kRadii + a) * 2 + sgn, e, (sgn == 0 ? 1.0 : -1.0) * kInfoGainRadii[a] * cfg.r);
  }
  const std::vector<Cand> top = scan_top(in, protos.data(), P, k, ScanRule::Weighted,
                                         post.most_probable(k), ax.pays(P, d) ? &ax : nullptr);
  std::vector<std::int64_t> out;
  if (k != 2) {
    std::vector<std::int64_t> t(static_cast<std::size_t>(k));
    for (int a = 0; a < kRadii; ++a) {
      const std::vector<Cand> radius(top.begin() + a * k * k, top.begin() + (a + 1) * k * k);
      distinct_picks(radius, k, k, t.data());
      if (std::find(t.begin(), t.end(), -1) == t.end()) out.insert(out.end(), t.begin(), t.end());
    }
    return out;
  }
  auto push = [&](std::int64_t i, std::int64_t j) {
    if (i < 0 || j < 0 || i == j) return;
    out.push_back(std::min(i, j));
    out.push_back(std::max(i, j));
  };
  auto item = [&](int e, int a, int sgn) {
    return top[static_cast<std::size_t>(((e * kRadii + a) * 2 + sgn) * k)].index;
  };
  std::vector<std::int64_t> items;
  for (int e = 0; e < ne; ++e)
    for (int a = 0; a < kRadii; ++a) {
      items.push_back(item(e, a, 0));
      items.push_back(item(e, a, 1));
      for (int b = 0; b < kRadii; ++b) push(item(e, a, 0), item(e, b, 1));
    }
  const std::vector<std::int64_t> probable = post.most_probable(kTopItems);
  for (std::size_t a = 0; a < probable.size(); ++a) {
    for (std::size_t b = a + 1; b < probable.size(); ++b) push(probable[a], probable[b]);
    for (std::int64_t c : items) push(probable[a], c);
  }
  return out;
}

// The distinct candidate items (ascending) and the tuples as positions into them; pairs
// are deduplicated, in ascending (first, second) item order.
inline void InfoGainSelector::index_candidates(const std::vector<std::int64_t>& tuples, int k,
                                               std::int64_t n) {
  if (mark_.size() != static_cast<std::size_t>(n)) mark_.assign(static_cast<std::size_t>(n), 0);
  cands_.clear();
  for (std::int64_t item : tuples)
    if (!mark_[static_cast<std::size_t>(item)]) {
      mark_[static_cast<std::size_t>(item)] = 1;
      cands_.push_back(item);
    }
  std::sort(cands_.begin(), cands_.end());
  const int nc = static_cast<int>(cands_.size());
  for (int c = 0; c < nc; ++c)
    mark_[static_cast<std::size_t>(cands_[static_cast<std::size_t>(c)])] = c + 1;
  auto position = [&](std::int64_t item) { return mark_[static_cast<std::size_t>(item)] - 1; };
  tpos_.clear();
  if (k != 2) {
    for (std::int64_t item : tuples) tpos_.push_back(position(item));
    return;
  }
  std::vector<char> seen(static_cast<std::size_t>(nc) * static_cast<std::size_t>(nc), 0);
  for (std::size_t t = 0; t < tuples.size(); t += 2)
    seen[static_cast<std::size_t>(position(tuples[t]) * nc + position(tuples[t + 1]))] = 1;
  for (int i = 0; i < nc; ++i)
    for (int j = i + 1; j < nc; ++j)
      if (seen[static_cast<std::size_t>(i * nc + j)]) {
        tpos_.push_back(i);
        tpos_.push_back(j);
      }
}

// u_[c][s] = (min_c' D_sc' / D_sc)^(gamma/2) for candidate c and draw s (choice.hpp), and
// the draws that are candidate items themselves.
inline void InfoGainSelector::choice_weights(const ScanInput& in,
                                             const std::vector<std::int64_t>& sample, double gamma,
                                             const int* grid_gamma) {
  const std::int64_t d = in.store.d();
  const int nc = static_cast<int>(cands_.size());
  std::vector<double> xc(static_cast<std::size_t>(nc * d)),
      xsT(static_cast<std::size_t>(d * kSamples));
  for (int c = 0; c < nc; ++c) in.store.row(cands_[static_cast<std::size_t>(c)], xc.data() + c * d);
  draws_of_.assign(static_cast<std::size_t>(nc), {});
  for (int s = 0; s < kSamples; ++s) {
    const std::int64_t it = sample[static_cast<std::size_t>(s)];
    for (std::int64_t b = 0; b < d; ++b)
      xsT[static_cast<std::size_t>(b * kSamples + s)] = in.store.coord(it, b);
    if (mark_[static_cast<std::size_t>(it)])
      draws_of_[static_cast<std::size_t>(mark_[static_cast<std::size_t>(it)] - 1)].push_back(s);
  }
  u_.resize(static_cast<std::size_t>(kSamples * nc));
  double dmin[kSamples], base[kSamples];
  for (int c = 0; c < nc; ++c)
    simd::points_sqdist(xc.data() + c * d, xsT.data(), kSamples, d, u_.data() + c * kSamples);
  for (int s = 0; s < kSamples; ++s) dmin[s] = u_[static_cast<std::size_t>(s)];
  for (int c = 1; c < nc; ++c)
    for (int s = 0; s < kSamples; ++s)
      dmin[s] = std::min(dmin[s], u_[static_cast<std::size_t>(c * kSamples + s)]);
  if (grid_gamma != nullptr) {  // each draw's own gamma (grid indices)
    for (int c = 0; c < nc; ++c)
      for (int s = 0; s < kSamples; ++s) {
        double& u = u_[static_cast<std::size_t>(c * kSamples + s)];
        u = grid_power(grid_gamma[s], dmin[s] * (1.0 / u));
      }
    return;
  }
  const GammaPower power(gamma);
  for (int c = 0; c < nc; ++c)
    simd::relative_weights(power, dmin, kSamples, u_.data() + c * kSamples, base);
}

// Expected Gini information of one tuple (positions pos[0..k)). `in` (kSamples, all 1 on
// entry and exit) masks the draws equal to the tuple's items: for them the outcome is
// "found", they stay out of the sums. A: k doubles of scratch.
inline double InfoGainSelector::tuple_score(const GammaCKLPosterior& post, const int* pos, int k,
                                            double* in, double* A) const {
  double found_sq = 0.0, mass_in = 0.0;
  for (int c = 0; c < k; ++c) {
    const double pc = post.weight(cands_[static_cast<std::size_t>(pos[c])]) / post.total();
    found_sq += pc * pc;
    mass_in += pc;
  }
  int outside = kSamples;
  for (int c = 0; c < k; ++c)
    for (int s : draws_of_[static_cast<std::size_t>(pos[c])]) {
      in[s] = 0.0;
      --outside;
    }
  const double* u = u_.data();
  double cond = 0.0;  // sum over outside draws of 1 - sum_c P(c|s)^2
  if (k == 2) {
    simd::pair_gini(u + pos[0] * kSamples, u + pos[1] * kSamples, in, kSamples, &A[0], &cond);
    A[1] = double(outside) - A[0];
  } else {
    std::fill(A, A + k, 0.0);
    for (int s = 0; s < kSamples; ++s) {
      if (in[s] == 0.0) continue;
      double den = 0.0, sq = 0.0;
      for (int c = 0; c < k; ++c) den += u[pos[c] * kSamples + s];
      for (int c = 0; c < k; ++c) {
        const double pcs = den > 0.0 ? u[pos[c] * kSamples + s] / den : 1.0 / k;
        A[c] += pcs;
        sq += pcs * pcs;
      }
      cond += 1.0 - sq;
    }
  }
  const double wout = outside > 0 ? std::max(0.0, 1.0 - mass_in) / outside : 0.0;
  double asq = 0.0;
  for (int c = 0; c < k; ++c) asq += (A[c] * wout) * (A[c] * wout);
  for (int c = 0; c < k; ++c)
    for (int s : draws_of_[static_cast<std::size_t>(pos[c])]) in[s] = 1.0;
  return 1.0 - found_sq - asq - wout * cond;
}

// Step 3: every tuple scored independently (in parallel when worthwhile), the argmax in
// order.
inline std::int64_t InfoGainSelector::best_tuple(const GammaCKLPosterior& post, int k,
                                                 int threads) const {
  const std::int64_t nt = static_cast<std::int64_t>(tpos_.size()) / k;
  std::vector<double> scores(static_cast<std::size_t>(nt));
#pragma omp parallel num_threads(threads) if (nt * kSamples >= 8192 && threads > 1)
  {
    double A[kMaxChoices], in[kSamples];
    std::fill(in, in + kSamples, 1.0);
#pragma omp for schedule(static)
    for (std::int64_t t = 0; t < nt; ++t)
      scores[static_cast<std::size_t>(t)] = tuple_score(post, tpos_.data() + t * k, k, in, A);
  }
  std::int64_t best = 0;
  for (std::int64_t t = 1; t < nt; ++t)
    if (scores[static_cast<std::size_t>(t)] > scores[static_cast<std::size_t>(best)]) best = t;
  return best;
}

inline bool InfoGainSelector::select(const GammaCKLPosterior& post, const ScanInput& in,
                                     const SearchConfig& cfg, std::uint64_t seed,
                                     std::int64_t query, int k, std::int64_t* q) {
  const std::vector<std::int64_t> items = tuples(post, in, cfg, k, seed, query);
  index_candidates(items, k, in.store.n());
  struct ClearMarks {  // mark_ is all zero between calls
    std::vector<std::int32_t>& mark;
    const std::vector<std::int64_t>& items;
    ~ClearMarks() {
      for (std::int64_t item : items) mark[static_cast<std::size_t>(item)] = 0;
    }
  } clear{mark_, cands_};
  const std::int64_t nt = static_cast<std::int64_t>(tpos_.size()) / k;
  if (nt == 0) return false;
  std::int64_t best = 0;
  if (nt > 1) {
    Rng rng = stream(seed, Purpose::PosteriorDraws, static_cast<std::uint64_t>(query));
    const std::vector<std::int64_t> sample = post.sample(kSamples, rng.uniform());
    int grid_gamma[kSamples];
    if (cfg.gamma_auto) {  // each draw's gamma from P(gamma | item), in draw order
      const int nl = cfg.lapse_auto ? kLapseGrid : 1;
      for (int s = 0; s < kSamples; ++s)
        grid_gamma[s] =
            post.draw_hypothesis(sample[static_cast<std::size_t>(s)], rng.uniform()) / nl;
    }
    choice_weights(in, sample, cfg.gamma, cfg.gamma_auto ? grid_gamma : nullptr);
    best = best_tuple(post, k, in.threads);
  }
  for (int c = 0; c < k; ++c)
    q[c] = cands_[static_cast<std::size_t>(tpos_[static_cast<std::size_t>(best * k + c)])];
  return true;
}

}  // namespace tripletsearch
