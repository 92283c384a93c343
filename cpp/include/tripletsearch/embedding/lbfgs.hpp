// Full-batch L-BFGS with a backtracking (Armijo) line search, restarts from steepest
// descent when the direction or the line search fails.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../core/linalg.hpp"
#include "../core/mathutil.hpp"
#include "../simd/dispatch.hpp"
#include "objective.hpp"

namespace tripletsearch {
namespace detail {

// The last H pairs (s, y) of a circular history and the two-loop recursion.
class LbfgsHistory {
 public:
  LbfgsHistory(int H, std::int64_t N)
      : H_(H),
        N_(N),
        S_(static_cast<std::size_t>(H) * static_cast<std::size_t>(N)),
        Y_(S_.size()),
        rho_(static_cast<std::size_t>(H)),
        alpha_(static_cast<std::size_t>(H)) {}

  bool empty() const { return stored_ == 0; }
  void clear() { stored_ = head_ = 0; }

  // p = -H g by the two-loop recursion; returns the first trial step (1, or 1 / ||g||
  // without history).
  TS_ALWAYS_INLINE double direction(const double* g, double* p) {
    for (std::int64_t k = 0; k < N_; ++k) p[k] = -g[k];
    for (int h = 0; h < stored_; ++h) {
      const int idx = slot(h);
      const double a = rho_[static_cast<std::size_t>(idx)] * dot_long(s(idx), p, N_);
      alpha_[static_cast<std::size_t>(idx)] = a;
      for (std::int64_t k = 0; k < N_; ++k) p[k] -= a * y(idx)[k];
    }
    if (stored_ == 0) return 1.0 / std::max(1.0, std::sqrt(dot_long(g, g, N_)));
    const int last = slot(0);
    const double scale = dot_long(s(last), y(last), N_) / dot_long(y(last), y(last), N_);
    for (std::int64_t k = 0; k < N_; ++k) p[k] *= scale;
    for (int h = stored_ - 1; h >= 0; --h) {
      const int idx = slot(h);
      const double b = rho_[static_cast<std::size_t>(idx)] * dot_long(y(idx), p, N_);
      const double a = alpha_[static_cast<std::size_t>(idx)];
      for (std::int64_t k = 0; k < N_; ++k) p[k] += (a - b) * s(idx)[k];
    }
    return 1.0;
  }

  // Stores s = x_new - x, y = g_new - g unless the curvature condition fails.
  TS_ALWAYS_INLINE void push(const double* x, const double* x_new, const double* g,
                             const double* g_new) {
    double* sh = s(head_);
    double* yh = y(head_);
    for (std::int64_t k = 0; k < N_; ++k) {
      sh[k] = x_new[k] - x[k];
      yh[k] = g_new[k] - g[k];
    }
    const double sy = dot_long(sh, yh, N_);
    if (sy > 1e-12 * dot_long(yh, yh, N_)) {
      rho_[static_cast<std::size_t>(head_)] = 1.0 / sy;
      head_ = (head_ + 1) % H_;
      stored_ = std::min(stored_ + 1, H_);
    }
  }

 private:
  int slot(int h) const { return (head_ - 1 - h + H_) % H_; }  // h-th newest
  double* s(int idx) { return S_.data() + static_cast<std::size_t>(idx) * N_; }
  double* y(int idx) { return Y_.data() + static_cast<std::size_t>(idx) * N_; }

  int H_;
  std::int64_t N_;
  std::vector<double> S_, Y_, rho_, alpha_;
  int stored_ = 0, head_ = 0;
};

// Armijo backtracking from `step` along p (slope g.p < 0): on success x_new, g_new and
// f_new hold the accepted point.
template <class I>
TS_ALWAYS_INLINE bool armijo_search(Objective& F, const double* x, const I* T, std::int64_t m,
                                    double f, double slope, const double* p, double step,
                                    double* x_new, double* g_new, double& f_new) {
  const std::int64_t N = F.size();
  for (int ls = 0; ls < 40; ++ls) {
    for (std::int64_t k = 0; k < N; ++k) x_new[k] = x[k] + step * p[k];
    f_new = F(x_new, T, m, g_new);
    if (std::isfinite(f_new) && f_new <= f + 1e-4 * step * slope && all_finite(g_new, N))
      return true;
    step *= 0.5;
  }
  return false;
}

// The L-BFGS loop, written once and compiled for each ISA (simd::dynamic_dispatch): its
// vector arithmetic (the two-loop recursion, the line search's steps) four lanes wide with
// FMA under AVX2; the gradient keeps its own dispatch.
struct LbfgsLoop {
  template <class I>
  TS_ALWAYS_INLINE static TrainResult run(Objective& F, double* x, const I* T, std::int64_t m,
                                          const TrainOptions& opt, const EpochCallback& cb,
                                          Validation<I>& val) {
    TrainResult res;
    const std::int64_t N = F.size();
    const auto sz = static_cast<std::size_t>(N);
    std::vector<double> g(sz), g_new(sz), p(sz), x_new(sz);
    detail::LbfgsHistory hist(std::max(1, opt.lbfgs_history), N);
    double f = F(x, T, m, g.data());
    if (!std::isfinite(f) || !all_finite(g.data(), N)) {
      res.status = TrainStatus::Diverged;
      return res;
    }
    val.start(F, x, res);
    for (std::int64_t it = 1; it <= opt.max_epochs; ++it) {
      double step0 = hist.direction(g.data(), p.data());
      double slope = dot_long(g.data(), p.data(), N);
      if (!(slope < 0.0)) {  // not a descent direction: restart from steepest descent
        hist.clear();
        step0 = hist.direction(g.data(), p.data());
        slope = dot_long(g.data(), p.data(), N);
      }
      double f_new = f;
      const bool accepted = detail::armijo_search(F, x, T, m, f, slope, p.data(), step0,
                                                  x_new.data(), g_new.data(), f_new);
      res.epochs = it;
      if (!accepted && !hist.empty()) {  // retry from steepest descent with a fresh history
        hist.clear();
        continue;
      }
      if (!accepted) {  // no decrease along steepest descent: at a (numerical) minimum
        res.loss.push_back(f);
        res.gamma.push_back(F.gamma(x));
        res.status = TrainStatus::Converged;
        return res;
      }
      hist.push(x, x_new.data(), g.data(), g_new.data());
      const double f_old = f;
      std::copy(x_new.begin(), x_new.end(), x);
      std::swap(g, g_new);
      f = f_new;
      res.loss.push_back(f);
      res.gamma.push_back(F.gamma(x));
      if (cb && !cb(it, f, F.gamma(x))) {
        res.status = TrainStatus::Stopped;
        return res;
      }
      if (val.update(F, x, it, opt.n_iter_no_change, res)) {
        res.status = TrainStatus::EarlyStopped;
        return res;
      }
      if (f_old - f <= opt.tol * std::max({std::fabs(f_old), std::fabs(f), 1.0})) {
        res.status = TrainStatus::Converged;
        return res;
      }
    }
    res.status = TrainStatus::MaxEpochs;
    return res;
  }
};

}  // namespace detail

template <class I>
TrainResult train_lbfgs(Objective& F, double* x, const I* T, std::int64_t m,
                        const TrainOptions& opt, const EpochCallback& cb, Validation<I>& val) {
  return simd::dynamic_dispatch<detail::LbfgsLoop>(F, x, T, m, opt, cb, val);
}

}  // namespace tripletsearch
