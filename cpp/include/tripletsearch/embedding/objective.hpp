// The embedding trainer's options, result and objective.
//
// Objective (minimized) over a set R of m_R rows:
//     F(X, theta) = -(1/m_R) sum_{r in R} log p_r(X)  +  l2 * (1/n) sum_k ||x_k||^2
// with theta = log gamma when gamma is learned (gamma-CKL only).
// python/tripletsearch/_reference/embedding.py is the NumPy twin of the trainer.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "../core/errors.hpp"
#include "../core/interrupt.hpp"
#include "../core/linalg.hpp"
#include "../oracle/gradient.hpp"
#include "../oracle/models.hpp"
#include "../oracle/rows.hpp"
#include "../oracle/trials.hpp"

namespace tripletsearch {

enum class Optimizer : int { SGD = 0, Adam = 1, LBFGS = 2 };
enum class TrainStatus : int {
  Converged = 0,
  MaxEpochs = 1,
  Diverged = 2,
  Stopped = 3,
  EarlyStopped = 4  // the validation loss stopped improving (the best epoch is kept)
};

struct TrainOptions {
  Optimizer optimizer = Optimizer::LBFGS;
  double lr = 0.1;                     // SGD and Adam step size
  std::int64_t batch_size = 0;         // 0: full batch (L-BFGS needs it)
  std::int64_t max_epochs = 1000;      // epochs (full batch: steps; L-BFGS: iterations)
  double tol = 1e-6;                   // relative loss improvement that counts as progress
  std::int64_t n_iter_no_change = 10;  // SGD/Adam: stop after this many epochs without it;
                                       // with validation rows: epochs without a new best
  double l2 = 0.0;
  std::int64_t n_fixed = 0;  // items [0, n_fixed) keep their position (placing new items)
  bool learn_gamma = false;
  int lbfgs_history = 10;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // Adam

  void validate() const {
    require_positive(lr, "lr");
    require_at_least<std::int64_t>(batch_size, 0, "batch_size");
    if (optimizer == Optimizer::LBFGS && batch_size > 0)
      throw std::invalid_argument(
          "batch_size: L-BFGS is full batch; use optimizer='adam' or 'sgd' for minibatches");
    require_at_least<std::int64_t>(max_epochs, 1, "max_epochs");
    require_nonnegative(tol, "tol");
    require_at_least<std::int64_t>(n_iter_no_change, 1, "n_iter_no_change");
    require_nonnegative(l2, "l2");
    require_at_least<std::int64_t>(n_fixed, 0, "n_fixed");
    require_at_least(lbfgs_history, 1, "lbfgs_history");
    require_half_open(beta1, 0.0, 1.0, "beta1");
    require_half_open(beta2, 0.0, 1.0, "beta2");
    require_positive(eps, "eps");
  }
};

struct TrainResult {
  std::vector<double> loss;      // objective per epoch
  std::vector<double> gamma;     // gamma per epoch
  std::vector<double> val_loss;  // with validation rows: their mean NLL per epoch
  std::int64_t best_epoch = 0;   // with validation rows: the epoch kept (0: the start)
  std::int64_t epochs = 0;
  TrainStatus status = TrainStatus::MaxEpochs;
};

// Called after every epoch with (epoch, loss, gamma); returning false stops the fit.
using EpochCallback = std::function<bool(std::int64_t, double, double)>;

// Objective and gradient of F on rows (T, m) at parameters x = [X (n*d), theta]. With trial
// sets attached (attach_trials), their log-likelihoods join the sum and every trial counts
// one in m_R (oracle/trials.hpp).
class Objective {
 public:
  Objective(const OracleSpec& spec, std::int64_t n, std::int64_t d, const TrainOptions& opt,
            int threads, Cancel& cancel)
      : spec_(spec),
        n_(n),
        d_(d),
        opt_(opt),
        threads_(threads),
        cancel_(cancel),
        G_(static_cast<std::size_t>(n * d)) {}

  std::int64_t size() const { return n_ * d_ + (opt_.learn_gamma ? 1 : 0); }

  double gamma(const double* x) const {
    return opt_.learn_gamma ? std::exp(x[n_ * d_]) : spec_.param;
  }

  // Returns F; writes dF/dx into g (size()).
  template <class I>  // the rows as int64 or int32
  double operator()(const double* x, const I* T, std::int64_t m, double* g) {
    OracleSpec spec = spec_;
    spec.param = gamma(x);
    const Problem P = make_problem(x, n_, d_, T, m);
    LossGrad s;
    const std::int64_t nd = n_ * d_;
    if (m > 0) {
      with_model(spec, [&](const auto& model) {
        if (opt_.learn_gamma)
          s = loss_grad<true, true>(model, P, G_.data(), ws_, threads_, cancel_);
        else
          s = loss_grad<true, false>(model, P, G_.data(), ws_, threads_, cancel_);
      });
    } else {
      std::fill(G_.begin(), G_.end(), 0.0);
    }
    if (trials_ != nullptr) add_trials(spec, x, s);
    const double inv_m = 1.0 / double(m + (trials_ != nullptr ? trials_->total() : 0));
    const double c2 = 2.0 * opt_.l2 / double(n_);
    for (std::int64_t k = 0; k < nd; ++k)
      g[k] = -inv_m * G_[static_cast<std::size_t>(k)] + c2 * x[k];
    const double reg = opt_.l2 > 0.0 ? dot_long(x, x, nd) : 0.0;
    if (opt_.learn_gamma) g[nd] = -inv_m * s.dlg;
    std::fill(g, g + std::min(opt_.n_fixed, n_) * d_, 0.0);  // fixed items do not move
    return -inv_m * s.logp + opt_.l2 * reg / double(n_);
  }

  // Trial sets whose log-likelihoods join the objective (kept by the caller).
  void attach_trials(const TrialSets* trials) {
    trials_ = trials;
    if (trials_ != nullptr) G2_.resize(G_.size());
  }

 private:
  void add_trials(const OracleSpec& spec, const double* x, LossGrad& s) {
    LossGrad t;
    with_choice_model(spec, [&](const auto& model) {
      if (opt_.learn_gamma)
        t = trials_loss_grad<true>(model, x, n_, d_, *trials_, G2_.data(), tws_, threads_, cancel_);
      else
        t = trials_loss_grad<false>(model, x, n_, d_, *trials_, G2_.data(), tws_, threads_,
                                    cancel_);
      return 0;
    });
    for (std::size_t k = 0; k < G_.size(); ++k) G_[k] += G2_[k];
    s.logp += t.logp;
    s.dlg += t.dlg;
  }


  OracleSpec spec_;
  std::int64_t n_, d_;
  const TrainOptions& opt_;
  int threads_;
  Cancel& cancel_;  // a Ctrl-C stops the gradient, hence the fit (Interrupted)
  std::vector<double> G_;
  GradWorkspace ws_;
  const TrialSets* trials_ = nullptr;
  std::vector<double> G2_;
  TrialWorkspace tws_;
};

// Early stopping on held-out rows (V, mv): their mean negative log-likelihood after every
// epoch (the model's own, without l2); the parameters of the best epoch are kept, and the fit
// stops after n_iter_no_change epochs without a new best. Inactive without rows.
template <class I>
class Validation {
 public:
  Validation(const OracleSpec& spec, std::int64_t n, std::int64_t d, const I* V, std::int64_t mv,
             std::int64_t N, int threads)
      : spec_(spec), n_(n), d_(d), V_(V), mv_(mv), threads_(threads) {
    if (mv_ > 0) best_x_.resize(static_cast<std::size_t>(N));
  }

  bool active() const { return mv_ > 0; }

  // The start's loss (epoch 0), before the first step.
  void start(const Objective& F, const double* x, TrainResult& res) {
    if (!active()) return;
    best_ = loss(F, x);
    std::copy(x, x + best_x_.size(), best_x_.begin());
    res.best_epoch = 0;
  }

  // Records the loss after `epoch`; true when the fit should stop.
  bool update(const Objective& F, const double* x, std::int64_t epoch, std::int64_t patience,
              TrainResult& res) {
    if (!active()) return false;
    const double v = loss(F, x);
    res.val_loss.push_back(v);
    if (v < best_) {
      best_ = v;
      res.best_epoch = epoch;
      std::copy(x, x + best_x_.size(), best_x_.begin());
      return false;
    }
    return epoch - res.best_epoch >= patience;
  }

  // Puts the best epoch's parameters back into x.
  void restore(double* x) const { std::copy(best_x_.begin(), best_x_.end(), x); }

 private:
  double loss(const Objective& F, const double* x) const {
    OracleSpec spec = spec_;
    spec.param = F.gamma(x);
    const double ll = log_likelihood(spec, make_problem(x, n_, d_, V_, mv_), threads_);
    return std::isfinite(ll) ? -ll / double(mv_) : std::numeric_limits<double>::infinity();
  }

  OracleSpec spec_;
  std::int64_t n_, d_;
  const I* V_;
  std::int64_t mv_;
  int threads_;
  double best_ = std::numeric_limits<double>::infinity();
  std::vector<double> best_x_;
};

}  // namespace tripletsearch
