// Embedding training: maximum likelihood of observed triplets by SGD, Adam or L-BFGS.
//
// Objective (minimized) over a set R of m_R rows:
//     F(X, theta) = -(1/m_R) sum_{r in R} log p_r(X)  +  l2 * (1/n) sum_k ||x_k||^2
// with theta = log gamma when gamma is learned (gamma-CKL only). Full batch by default;
// minibatches are consecutive slices of a per-epoch Fisher-Yates permutation drawn from
// Rng(seed, epoch), so a fit is reproducible for any thread count (every gradient is).
// python/tripletsearch/_reference/embedding.py is the NumPy twin of this file.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "oracle.hpp"
#include "rng.hpp"

namespace tripletsearch {

enum class Optimizer : int { SGD = 0, Adam = 1, LBFGS = 2 };
enum class TrainStatus : int { Converged = 0, MaxEpochs = 1, Diverged = 2, Stopped = 3 };

struct TrainOptions {
  Optimizer optimizer = Optimizer::LBFGS;
  double lr = 0.1;                     // SGD and Adam step size
  std::int64_t batch_size = 0;         // 0: full batch
  std::int64_t max_epochs = 1000;      // epochs (full batch: steps; L-BFGS: iterations)
  double tol = 1e-6;                   // relative loss improvement that counts as progress
  std::int64_t n_iter_no_change = 10;  // SGD/Adam: stop after this many epochs without it
  double l2 = 0.0;
  bool learn_gamma = false;
  std::uint64_t seed = 0;
  int threads = 1;
  int lbfgs_history = 10;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};

struct TrainResult {
  std::vector<double> loss;   // objective per epoch
  std::vector<double> gamma;  // gamma per epoch
  std::int64_t epochs = 0;
  TrainStatus status = TrainStatus::MaxEpochs;
};

// Called after every epoch with (epoch, loss, gamma); returning false stops the fit.
using EpochCallback = std::function<bool(std::int64_t, double, double)>;

namespace detail {

inline double dot(const double* a, const double* b, std::int64_t n) {
  double s = 0.0;
  for (std::int64_t k = 0; k < n; ++k) s += a[k] * b[k];
  return s;
}

inline bool all_finite(const double* a, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k)
    if (!std::isfinite(a[k])) return false;
  return true;
}

// Objective and gradient of F on rows (T, m) at parameters x = [X (n*d), theta].
class Objective {
 public:
  Objective(const OracleSpec& spec, std::int64_t n, std::int64_t d, const TrainOptions& opt)
      : spec_(spec), n_(n), d_(d), opt_(opt), G_(static_cast<std::size_t>(n * d)) {}

  std::int64_t size() const { return n_ * d_ + (opt_.learn_gamma ? 1 : 0); }

  double gamma(const double* x) const {
    return opt_.learn_gamma ? std::exp(x[n_ * d_]) : spec_.param;
  }

  // Returns F; writes dF/dx into g (size()).
  double operator()(const double* x, const std::int64_t* T, std::int64_t m, double* g) {
    OracleSpec spec = spec_;
    spec.param = gamma(x);
    const Problem P{x, n_, d_, T, m};
    LossGrad s;
    with_model(spec, [&](const auto& model) {
      if (opt_.learn_gamma)
        s = loss_grad<true, true>(model, P, G_.data(), ws_, opt_.threads);
      else
        s = loss_grad<true, false>(model, P, G_.data(), ws_, opt_.threads);
    });
    const std::int64_t nd = n_ * d_;
    const double inv_m = 1.0 / double(m);
    const double c2 = 2.0 * opt_.l2 / double(n_);
    double reg = 0.0;
    for (std::int64_t k = 0; k < nd; ++k) {
      g[k] = -inv_m * G_[static_cast<std::size_t>(k)] + c2 * x[k];
      reg += x[k] * x[k];
    }
    if (opt_.learn_gamma) g[nd] = -inv_m * s.dlg;
    return -inv_m * s.logp + opt_.l2 * reg / double(n_);
  }

 private:
  OracleSpec spec_;
  std::int64_t n_, d_;
  const TrainOptions& opt_;
  std::vector<double> G_;
  GradWorkspace ws_;
};

// One epoch's Fisher-Yates permutation of [0, m), from the epoch's own stream.
inline void epoch_permutation(std::uint64_t seed, std::int64_t epoch,
                              std::vector<std::int64_t>& perm) {
  const std::int64_t m = static_cast<std::int64_t>(perm.size());
  for (std::int64_t k = 0; k < m; ++k) perm[static_cast<std::size_t>(k)] = k;
  Rng rng(seed, static_cast<std::uint64_t>(epoch));
  for (std::int64_t k = m - 1; k > 0; --k) {
    const auto j = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(k + 1)));
    std::swap(perm[static_cast<std::size_t>(k)], perm[static_cast<std::size_t>(j)]);
  }
}

// SGD and Adam, full batch or minibatches.
inline TrainResult train_first_order(Objective& F, double* x, const std::int64_t* T, std::int64_t m,
                                     const TrainOptions& opt, const EpochCallback& cb) {
  TrainResult res;
  const std::int64_t N = F.size();
  const bool full = opt.batch_size <= 0 || opt.batch_size >= m;
  const std::int64_t B = full ? m : opt.batch_size;
  std::vector<double> g(static_cast<std::size_t>(N)), mom, vel;
  if (opt.optimizer == Optimizer::Adam) {
    mom.assign(static_cast<std::size_t>(N), 0.0);
    vel.assign(static_cast<std::size_t>(N), 0.0);
  }
  std::vector<std::int64_t> perm, batch;
  if (!full) {
    perm.resize(static_cast<std::size_t>(m));
    batch.resize(static_cast<std::size_t>(3 * B));
  }
  double best = std::numeric_limits<double>::infinity(), first = 0.0;
  std::int64_t stall = 0, step = 0;
  for (std::int64_t epoch = 1; epoch <= opt.max_epochs; ++epoch) {
    if (!full) epoch_permutation(opt.seed, epoch, perm);
    double epoch_loss = 0.0;
    for (std::int64_t b0 = 0; b0 < m; b0 += B) {
      const std::int64_t mb = std::min(B, m - b0);
      const std::int64_t* Tb = T;
      if (!full) {
        for (std::int64_t k = 0; k < mb; ++k) {
          const std::int64_t r = perm[static_cast<std::size_t>(b0 + k)];
          for (int c = 0; c < 3; ++c) batch[static_cast<std::size_t>(3 * k + c)] = T[3 * r + c];
        }
        Tb = batch.data();
      }
      const double f = F(x, Tb, mb, g.data());
      epoch_loss += f * double(mb) / double(m);
      ++step;
      if (opt.optimizer == Optimizer::Adam) {
        const double c1 = 1.0 - std::pow(opt.beta1, double(step));
        const double c2 = 1.0 - std::pow(opt.beta2, double(step));
        for (std::int64_t k = 0; k < N; ++k) {
          const auto u = static_cast<std::size_t>(k);
          mom[u] = opt.beta1 * mom[u] + (1.0 - opt.beta1) * g[u];
          vel[u] = opt.beta2 * vel[u] + (1.0 - opt.beta2) * g[u] * g[u];
          x[k] -= opt.lr * (mom[u] / c1) / (std::sqrt(vel[u] / c2) + opt.eps);
        }
      } else {
        for (std::int64_t k = 0; k < N; ++k) x[k] -= opt.lr * g[static_cast<std::size_t>(k)];
      }
    }
    res.loss.push_back(epoch_loss);
    res.gamma.push_back(F.gamma(x));
    res.epochs = epoch;
    if (epoch == 1) first = epoch_loss;
    // diverged: a non-finite loss, or one grown a millionfold (a far too large step size)
    if (!std::isfinite(epoch_loss) || !all_finite(x, N) ||
        epoch_loss > 1e6 * std::max(1.0, std::fabs(first))) {
      res.status = TrainStatus::Diverged;
      return res;
    }
    if (cb && !cb(epoch, epoch_loss, F.gamma(x))) {
      res.status = TrainStatus::Stopped;
      return res;
    }
    if (epoch_loss > best - opt.tol * std::max(1.0, std::fabs(best))) {
      if (++stall >= opt.n_iter_no_change) {
        res.status = TrainStatus::Converged;
        return res;
      }
    } else {
      stall = 0;
    }
    best = std::min(best, epoch_loss);
  }
  res.status = TrainStatus::MaxEpochs;
  return res;
}

// Full-batch L-BFGS with a backtracking (Armijo) line search.
inline TrainResult train_lbfgs(Objective& F, double* x, const std::int64_t* T, std::int64_t m,
                               const TrainOptions& opt, const EpochCallback& cb) {
  TrainResult res;
  const std::int64_t N = F.size();
  const int H = std::max(1, opt.lbfgs_history);
  const auto sz = static_cast<std::size_t>(N);
  std::vector<double> g(sz), g_new(sz), p(sz), x_new(sz), alpha_buf(static_cast<std::size_t>(H));
  std::vector<double> S(static_cast<std::size_t>(H) * sz), Y(S.size()),
      rho(static_cast<std::size_t>(H));
  int stored = 0, head = 0;  // circular history
  double f = F(x, T, m, g.data());
  if (!std::isfinite(f) || !all_finite(g.data(), N)) {
    res.status = TrainStatus::Diverged;
    return res;
  }
  for (std::int64_t it = 1; it <= opt.max_epochs; ++it) {
    // two-loop recursion: p = -H g
    for (std::int64_t k = 0; k < N; ++k)
      p[static_cast<std::size_t>(k)] = -g[static_cast<std::size_t>(k)];
    for (int h = 0; h < stored; ++h) {
      const int idx = (head - 1 - h + H) % H;
      const double* s = S.data() + static_cast<std::size_t>(idx) * sz;
      const double* y = Y.data() + static_cast<std::size_t>(idx) * sz;
      const double a = rho[static_cast<std::size_t>(idx)] * dot(s, p.data(), N);
      alpha_buf[static_cast<std::size_t>(idx)] = a;
      for (std::int64_t k = 0; k < N; ++k) p[static_cast<std::size_t>(k)] -= a * y[k];
    }
    double step0 = 1.0;
    if (stored > 0) {
      const int last = (head - 1 + H) % H;
      const double* s = S.data() + static_cast<std::size_t>(last) * sz;
      const double* y = Y.data() + static_cast<std::size_t>(last) * sz;
      const double scale = dot(s, y, N) / dot(y, y, N);
      for (std::int64_t k = 0; k < N; ++k) p[static_cast<std::size_t>(k)] *= scale;
    } else {
      step0 = 1.0 / std::max(1.0, std::sqrt(dot(g.data(), g.data(), N)));
    }
    for (int h = stored - 1; h >= 0; --h) {
      const int idx = (head - 1 - h + H) % H;
      const double* s = S.data() + static_cast<std::size_t>(idx) * sz;
      const double* y = Y.data() + static_cast<std::size_t>(idx) * sz;
      const double b = rho[static_cast<std::size_t>(idx)] * dot(y, p.data(), N);
      const double a = alpha_buf[static_cast<std::size_t>(idx)];
      for (std::int64_t k = 0; k < N; ++k) p[static_cast<std::size_t>(k)] += (a - b) * s[k];
    }
    double slope = dot(g.data(), p.data(), N);
    if (!(slope < 0.0)) {  // not a descent direction: restart from steepest descent
      stored = 0;
      for (std::int64_t k = 0; k < N; ++k)
        p[static_cast<std::size_t>(k)] = -g[static_cast<std::size_t>(k)];
      slope = -dot(g.data(), g.data(), N);
      step0 = 1.0 / std::max(1.0, std::sqrt(-slope));
    }
    // backtracking line search (Armijo, c1 = 1e-4)
    double step = step0, f_new = f;
    bool accepted = false;
    for (int ls = 0; ls < 40; ++ls) {
      for (std::int64_t k = 0; k < N; ++k)
        x_new[static_cast<std::size_t>(k)] = x[k] + step * p[static_cast<std::size_t>(k)];
      f_new = F(x_new.data(), T, m, g_new.data());
      if (std::isfinite(f_new) && f_new <= f + 1e-4 * step * slope && all_finite(g_new.data(), N)) {
        accepted = true;
        break;
      }
      step *= 0.5;
    }
    res.epochs = it;
    if (!accepted && stored > 0) {  // retry from steepest descent with a fresh history
      stored = 0;
      head = 0;
      continue;
    }
    if (!accepted) {  // no decrease along steepest descent: at a (numerical) minimum
      res.loss.push_back(f);
      res.gamma.push_back(F.gamma(x));
      res.status = TrainStatus::Converged;
      return res;
    }
    // history update (skipped when the curvature condition fails)
    double* s = S.data() + static_cast<std::size_t>(head) * sz;
    double* y = Y.data() + static_cast<std::size_t>(head) * sz;
    for (std::int64_t k = 0; k < N; ++k) {
      const auto u = static_cast<std::size_t>(k);
      s[k] = x_new[u] - x[k];
      y[k] = g_new[u] - g[u];
    }
    const double sy = dot(s, y, N);
    if (sy > 1e-12 * dot(y, y, N)) {
      rho[static_cast<std::size_t>(head)] = 1.0 / sy;
      head = (head + 1) % H;
      stored = std::min(stored + 1, H);
    }
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
    if (f_old - f <= opt.tol * std::max({std::fabs(f_old), std::fabs(f), 1.0})) {
      res.status = TrainStatus::Converged;
      return res;
    }
  }
  res.status = TrainStatus::MaxEpochs;
  return res;
}

}  // namespace detail

// Fits X (n, d), updated in place, and, with learn_gamma, spec.param (returned in
// result.gamma). Rows must be valid (checked by the caller: indices in range).
inline TrainResult train(const OracleSpec& spec, double* X, std::int64_t n, std::int64_t d,
                         const std::int64_t* T, std::int64_t m, const TrainOptions& opt,
                         const EpochCallback& cb) {
  if (m < 1) throw std::invalid_argument("triplets: no rows to train on");
  if (opt.learn_gamma && spec.kind != ModelKind::GammaCKL)
    throw std::invalid_argument("learn_gamma: only the gamma-CKL model has a gamma");
  if (first_out_of_range(T, 3 * m, n) >= 0) throw_out_of_range(T, 3 * m, n, 3, "triplets");
  detail::Objective F(spec, n, d, opt);
  std::vector<double> x(static_cast<std::size_t>(F.size()));
  std::copy(X, X + n * d, x.begin());
  if (opt.learn_gamma) x[static_cast<std::size_t>(n * d)] = std::log(spec.param);
  TrainResult res = opt.optimizer == Optimizer::LBFGS
                        ? detail::train_lbfgs(F, x.data(), T, m, opt, cb)
                        : detail::train_first_order(F, x.data(), T, m, opt, cb);
  std::copy(x.begin(), x.begin() + n * d, X);
  return res;
}

}  // namespace tripletsearch
