// SGD and Adam, full batch or minibatches. Minibatches are consecutive slices of a per-epoch
// Fisher-Yates permutation drawn from Rng(seed, epoch), so a fit is reproducible for any
// thread count (every gradient is).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "../core/linalg.hpp"
#include "../core/rng.hpp"
#include "objective.hpp"

namespace tripletsearch {

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

namespace detail {

// One step x -= lr * g (SGD) or the Adam update (moments mom, vel; step counts from 1).
inline void first_order_step(const TrainOptions& opt, std::int64_t step, const double* g,
                             std::vector<double>& mom, std::vector<double>& vel, double* x,
                             std::int64_t N) {
  if (opt.optimizer != Optimizer::Adam) {
    for (std::int64_t k = 0; k < N; ++k) x[k] -= opt.lr * g[k];
    return;
  }
  const double c1 = 1.0 - std::pow(opt.beta1, double(step));
  const double c2 = 1.0 - std::pow(opt.beta2, double(step));
  for (std::int64_t k = 0; k < N; ++k) {
    const auto u = static_cast<std::size_t>(k);
    mom[u] = opt.beta1 * mom[u] + (1.0 - opt.beta1) * g[k];
    vel[u] = opt.beta2 * vel[u] + (1.0 - opt.beta2) * g[k] * g[k];
    x[k] -= opt.lr * (mom[u] / c1) / (std::sqrt(vel[u] / c2) + opt.eps);
  }
}

// Stopping bookkeeping of the first-order methods, per epoch.
struct FirstOrderStop {
  double best = std::numeric_limits<double>::infinity(), first = 0.0;
  std::int64_t stall = 0;

  // Diverged: a non-finite loss or x, or a loss grown a millionfold (a far too large step).
  bool diverged(std::int64_t epoch, double loss, const double* x, std::int64_t N) {
    if (epoch == 1) first = loss;
    return !std::isfinite(loss) || !all_finite(x, N) ||
           loss > 1e6 * std::max(1.0, std::fabs(first));
  }
  // Converged: n_iter_no_change epochs in a row without a relative improvement of tol.
  bool converged(double loss, const TrainOptions& opt) {
    const bool stalled = loss > best - opt.tol * std::max(1.0, std::fabs(best));
    stall = stalled ? stall + 1 : 0;
    best = std::min(best, loss);
    return stalled && stall >= opt.n_iter_no_change;
  }
};

}  // namespace detail

template <class I>
TrainResult train_first_order(Objective& F, double* x, const I* T, std::int64_t m,
                              const TrainOptions& opt, std::uint64_t seed, const EpochCallback& cb,
                              Validation<I>& val) {
  TrainResult res;
  const std::int64_t N = F.size();
  const bool full = opt.batch_size <= 0 || opt.batch_size >= m;
  const std::int64_t B = full ? m : opt.batch_size;
  std::vector<double> g(static_cast<std::size_t>(N)), mom, vel;
  if (opt.optimizer == Optimizer::Adam) {
    mom.assign(static_cast<std::size_t>(N), 0.0);
    vel.assign(static_cast<std::size_t>(N), 0.0);
  }
  std::vector<std::int64_t> perm(full ? 0 : static_cast<std::size_t>(m));
  std::vector<I> batch(full ? 0 : static_cast<std::size_t>(3 * B));
  detail::FirstOrderStop stop;
  std::int64_t step = 0;
  val.start(F, x, res);
  for (std::int64_t epoch = 1; epoch <= opt.max_epochs; ++epoch) {
    if (!full) epoch_permutation(seed, epoch, perm);
    double epoch_loss = 0.0;
    for (std::int64_t b0 = 0; b0 < m; b0 += B) {
      const std::int64_t mb = std::min(B, m - b0);
      const I* Tb = T;
      if (!full) {
        for (std::int64_t k = 0; k < mb; ++k) {
          const std::int64_t r = perm[static_cast<std::size_t>(b0 + k)];
          for (int c = 0; c < 3; ++c) batch[static_cast<std::size_t>(3 * k + c)] = T[3 * r + c];
        }
        Tb = batch.data();
      }
      epoch_loss += F(x, Tb, mb, g.data()) * double(mb) / double(m);
      detail::first_order_step(opt, ++step, g.data(), mom, vel, x, N);
    }
    res.loss.push_back(epoch_loss);
    res.gamma.push_back(F.gamma(x));
    res.epochs = epoch;
    if (stop.diverged(epoch, epoch_loss, x, N)) {
      res.status = TrainStatus::Diverged;
      return res;
    }
    if (cb && !cb(epoch, epoch_loss, F.gamma(x))) {
      res.status = TrainStatus::Stopped;
      return res;
    }
    if (val.active()) {  // progress is measured on the held-out rows
      if (val.update(F, x, epoch, opt.n_iter_no_change, res)) {
        res.status = TrainStatus::EarlyStopped;
        return res;
      }
    } else if (stop.converged(epoch_loss, opt)) {
      res.status = TrainStatus::Converged;
      return res;
    }
  }
  res.status = TrainStatus::MaxEpochs;
  return res;
}

}  // namespace tripletsearch
