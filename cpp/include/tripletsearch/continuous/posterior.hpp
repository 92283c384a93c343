// The posterior method (Section 3.3) inside the paper's stages: per stage a posterior over
// the parent domain u(X) within Omega (particles: a grid for d <= 3, uniform draws for
// d >= 4, resample-move when the effective sample size falls), discarded at each new
// stage. After every answer, the heaviest half-edge box on the quarter lattice of u(X)
// decides once its mass exceeds alpha: a child of X means proceed (and descend further
// while a child of the child also holds mass > alpha), any other box means backtrack; the
// per-stage query cap backtracks too.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "searcher.hpp"

namespace tripletsearch {

class PosteriorSearcher final : public ParticleSearcher {
 public:
  PosteriorSearcher(const ContinuousConfig& cfg, std::uint64_t seed, int threads)
      : ParticleSearcher(cfg, seed, threads) {
    begin_posterior_stage();
  }

  // The median of the more concentrated of this stage's posterior and the last stage's
  // final one, which proceeded here (the decisions never see it).
  void estimate_unit(double* out) const override {
    std::vector<double> w;
    particles_.weights(w);
    const double spread = particles_.median(w, out);
    if (!anchor_.empty() && anchor_spread_ < spread) std::copy(anchor_.begin(), anchor_.end(), out);
  }

 protected:
  bool observe(bool a_closer) override {
    std::vector<double> w;
    const double ess = record(a_closer, w);
    if (decide(w)) return true;
    if (stage_queries_ >= cfg_.resolved_stage_cap()) {
      backtrack();
      return true;
    }
    refresh(ess, 0.0);
    return false;
  }

 private:
  // The parent domain u(X) (edge 4e) within Omega, where the target lies.
  void begin_posterior_stage() {
    std::vector<double> lo(static_cast<std::size_t>(d_)), hi(lo.size());
    for (std::int64_t a = 0; a < d_; ++a) {
      lo[a] = std::max(cfg_.low[a], region_.center[a] - 2.0 * region_.edge);
      hi[a] = std::min(cfg_.high[a], region_.center[a] + 2.0 * region_.edge);
      if (!(lo[a] < hi[a])) {  // X has left Omega entirely: keep u(X)
        lo[a] = region_.center[a] - 2.0 * region_.edge;
        hi[a] = region_.center[a] + 2.0 * region_.edge;
      }
    }
    begin_stage(lo, hi);
  }

  void backtrack() {
    anchor_.clear();
    region_ = region_.parent();
    ++n_stages_;
    begin_posterior_stage();
  }

  bool decide(const std::vector<double>& w);
  std::pair<double, std::int64_t> heaviest_box(const std::vector<double>& w) const;
  double heaviest_child(const std::vector<double>& w, std::vector<int>& m) const;

  std::vector<double> anchor_;  // the last stage's final median (empty: none)
  double anchor_spread_ = 0.0;
};

// Mass and key of the heaviest box of 2 x ... x 2 quarter cells of u(X) (16 cells per axis,
// key: base 16, axis 0 least significant; ties: the lower key).
inline std::pair<double, std::int64_t> PosteriorSearcher::heaviest_box(
    const std::vector<double>& w) const {
  const double e = region_.edge, q = 0.25 * e;
  std::vector<std::pair<std::int64_t, double>> kw;  // (quarter cell key, weight)
  kw.reserve(static_cast<std::size_t>(particles_.P));
  for (std::int64_t p = 0; p < particles_.P; ++p) {
    if (w[p] == 0.0) continue;
    std::int64_t key = 0;
    for (std::int64_t a = d_ - 1; a >= 0; --a) {
      const double off = (particles_.z[p * d_ + a] - (region_.center[a] - 2.0 * e)) / q;
      key =
          key * 16 + std::min<std::int64_t>(
                         15, std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(off))));
    }
    kw.emplace_back(key, w[p]);
  }
  std::sort(kw.begin(), kw.end());
  std::vector<std::int64_t> keys;  // distinct cells, ascending, with their masses
  std::vector<double> mass_of;
  for (const auto& x : kw) {
    if (keys.empty() || keys.back() != x.first) {
      keys.push_back(x.first);
      mass_of.push_back(0.0);
    }
    mass_of.back() += x.second;
  }
  auto cell_mass = [&](std::int64_t key) {
    const auto f = std::lower_bound(keys.begin(), keys.end(), key);
    return (f != keys.end() && *f == key) ? mass_of[static_cast<std::size_t>(f - keys.begin())]
                                          : 0.0;
  };
  // a box above alpha holds a cell above alpha / 2^d: only boxes around such cells count
  const double need = cfg_.alpha / double(std::int64_t(1) << d_);
  const std::int64_t corners = std::int64_t(1) << d_;
  double best_mass = -1.0;
  std::int64_t best_box = -1;
  for (std::size_t h = 0; h < keys.size(); ++h) {
    if (mass_of[h] < need) continue;
    for (std::int64_t corner = 0; corner < corners; ++corner) {
      bool ok = true;  // box lower corner = cell - bit, per axis
      std::int64_t bkey = 0, unit = 1, r = keys[h];
      for (std::int64_t a = 0; a < d_; ++a, unit *= 16, r /= 16) {
        const std::int64_t b = r % 16 - ((corner >> a) & 1);
        ok = ok && b >= 0 && b <= 14;
        bkey += b * unit;
      }
      if (!ok) continue;
      double mass = 0.0;
      for (std::int64_t sub = 0; sub < corners; ++sub) {
        std::int64_t k2 = bkey, u2 = 1;
        for (std::int64_t a = 0; a < d_; ++a, u2 *= 16) k2 += ((sub >> a) & 1) * u2;
        mass += cell_mass(k2);
      }
      if (mass > best_mass || (mass == best_mass && bkey < best_box)) {
        best_mass = mass;
        best_box = bkey;
      }
    }
  }
  return {best_mass, best_box};
}

inline bool PosteriorSearcher::decide(const std::vector<double>& w) {
  const auto [best_mass, best_box] = heaviest_box(w);
  if (!(best_mass > cfg_.alpha)) return false;
  std::vector<int> m(static_cast<std::size_t>(d_));
  bool is_child = true;
  std::int64_t r = best_box;
  for (std::int64_t a = 0; a < d_; ++a, r /= 16) {
    const std::int64_t b = r % 16;  // box center offset (b - 7) e/4
    m[a] = static_cast<int>(b - 7 + 2);
    is_child = is_child && b >= 5 && b <= 9;
  }
  if (!is_child) {
    backtrack();
    return true;
  }
  anchor_.assign(static_cast<std::size_t>(d_), 0.0);
  anchor_spread_ = particles_.median(w, anchor_.data());
  region_ = region_.child(m.data());
  // the same posterior may already single out a child of the child: descend while one
  // holds mass > alpha (each level is a decision of Algorithm 1 on the same evidence)
  for (int level = 0; level < 8; ++level) {
    std::vector<int> bm;
    if (!(heaviest_child(w, bm) > cfg_.alpha)) break;
    region_ = region_.child(bm.data());
  }
  ++n_stages_;
  begin_posterior_stage();
  return true;
}

// Mass of the heaviest child of the current region under weights w (its position in m):
// each particle lies in at most two children per axis, so O(P 2^d) work.
inline double PosteriorSearcher::heaviest_child(const std::vector<double>& w,
                                                std::vector<int>& m) const {
  const double q = 0.25 * region_.edge;
  std::vector<std::pair<std::int64_t, double>> kw;
  std::vector<int> lo(static_cast<std::size_t>(d_)), nm(lo.size());
  for (std::int64_t p = 0; p < particles_.P; ++p) {
    if (w[p] == 0.0) continue;
    std::int64_t combos = 1;
    for (std::int64_t a = 0; a < d_ && combos > 0; ++a) {
      // child m covers [c + (m - 3) q, c + (m - 1) q]
      const double t = (particles_.z[p * d_ + a] - region_.center[a]) / q;
      lo[a] = std::max(0, static_cast<int>(std::ceil(t + 1.0)));
      nm[a] = std::max(0, std::min(4, static_cast<int>(std::floor(t + 3.0))) - lo[a] + 1);
      combos *= nm[a];
    }
    for (std::int64_t c = 0; c < combos; ++c) {
      std::int64_t rr = c, key = 0, unit = 1;             // base-5 code, axis 0 least significant
      for (std::int64_t a = 0; a < d_; ++a, unit *= 5) {  // axis 0 varies fastest
        key += (lo[a] + rr % nm[a]) * unit;
        rr /= nm[a];
      }
      kw.emplace_back(key, w[p]);
    }
  }
  if (kw.empty()) return 0.0;
  std::sort(kw.begin(), kw.end());
  double best = -1.0, cur = 0.0;
  std::int64_t best_key = 0;
  for (std::size_t k = 0; k < kw.size(); ++k) {
    cur += kw[k].second;
    if (k + 1 == kw.size() || kw[k + 1].first != kw[k].first) {
      if (cur > best) {
        best = cur;
        best_key = kw[k].first;
      }
      cur = 0.0;
    }
  }
  m.assign(static_cast<std::size_t>(d_), 2);
  for (std::int64_t a = 0; a < d_; ++a, best_key /= 5) m[a] = static_cast<int>(best_key % 5);
  return best;
}

}  // namespace tripletsearch
