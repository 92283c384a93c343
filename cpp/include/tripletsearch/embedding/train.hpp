// Embedding training: maximum likelihood of observed triplets by SGD, Adam (first_order.hpp)
// or L-BFGS (lbfgs.hpp), one native call per fit.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "../core/errors.hpp"
#include "first_order.hpp"
#include "lbfgs.hpp"
#include "objective.hpp"

namespace tripletsearch {

// Fits X (n, d), updated in place, from rows T (m, 3); with learn_gamma, gamma too (in
// result.gamma). `seed` orders the minibatches; `threads` runs the gradient. With validation
// rows (V, mv > 0) the fit stops early on their loss and ends at its best epoch (see
// Validation). A stop asked through `cancel` ends the fit with Interrupted, X untouched.
template <class I>  // int64 or int32 rows
TrainResult train(const OracleSpec& spec, double* X, std::int64_t n, std::int64_t d, const I* T,
                  std::int64_t m, const TrainOptions& opt, std::uint64_t seed, int threads,
                  const EpochCallback& cb, Cancel& cancel = no_cancel(), const I* V = nullptr,
                  std::int64_t mv = 0) {
  check_call(spec, threads);
  opt.validate();
  if (m < 1) throw std::invalid_argument("triplets: no rows to train on");
  if (opt.learn_gamma && spec.kind != ModelKind::GammaCKL)
    throw std::invalid_argument("learn_gamma: only the gamma-CKL model has a gamma");
  require_in_range(T, 3 * m, n, 3, "triplets");
  if (mv > 0) require_in_range(V, 3 * mv, n, 3, "validation");
  if (opt.n_fixed > n) throw std::invalid_argument("n_fixed: more than the number of items");
  // the parameters, the gradient, and L-BFGS's history of 2 x lbfgs_history vectors
  require_allocation(8.0 * double(n) * double(d) * (6.0 + 2.0 * opt.lbfgs_history), "n_items");
  Objective F(spec, n, d, opt, threads, cancel);
  std::vector<double> x(static_cast<std::size_t>(F.size()));
  std::copy(X, X + n * d, x.begin());
  if (opt.learn_gamma) x[static_cast<std::size_t>(n * d)] = std::log(spec.param);
  Validation<I> val(spec, n, d, V, mv, F.size(), threads);
  TrainResult res = opt.optimizer == Optimizer::LBFGS
                        ? train_lbfgs(F, x.data(), T, m, opt, cb, val)
                        : train_first_order(F, x.data(), T, m, opt, seed, cb, val);
  if (val.active() && res.status != TrainStatus::Diverged) val.restore(x.data());
  std::copy(x.begin(), x.begin() + n * d, X);
  return res;
}

// Fits X (n, d) from trial sets (oracle/trials.hpp) by L-BFGS, full batch, with gamma when
// learn_gamma: the objective of train() with every trial counting one row.
inline TrainResult train_trials(const OracleSpec& spec, double* X, std::int64_t n, std::int64_t d,
                                const TrialSets& trials, const TrainOptions& opt, int threads,
                                const EpochCallback& cb, Cancel& cancel = no_cancel()) {
  check_call(spec, threads);
  opt.validate();
  if (opt.optimizer != Optimizer::LBFGS)
    throw std::invalid_argument("optimizer: trials are fitted by L-BFGS (optimizer='lbfgs')");
  if (trials.total() < 1) throw std::invalid_argument("trials: no trials to train on");
  if (opt.learn_gamma && spec.kind != ModelKind::GammaCKL)
    throw std::invalid_argument("learn_gamma: only the gamma-CKL model has a gamma");
  with_choice_model(spec, [](const auto&) { return 0; });  // Probit: a clear error
  trials.validate(n);
  if (opt.n_fixed > n) throw std::invalid_argument("n_fixed: more than the number of items");
  require_allocation(8.0 * double(n) * double(d) * (8.0 + 2.0 * opt.lbfgs_history), "n_items");
  Objective F(spec, n, d, opt, threads, cancel);
  F.attach_trials(&trials);
  std::vector<double> x(static_cast<std::size_t>(F.size()));
  std::copy(X, X + n * d, x.begin());
  if (opt.learn_gamma) x[static_cast<std::size_t>(n * d)] = std::log(spec.param);
  const std::int64_t* none = nullptr;
  Validation<std::int64_t> val(spec, n, d, none, 0, F.size(), threads);
  TrainResult res = train_lbfgs(F, x.data(), none, 0, opt, cb, val);
  std::copy(x.begin(), x.begin() + n * d, X);
  return res;
}

}  // namespace tripletsearch
