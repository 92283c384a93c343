// The embedding trainer's options, result and objective.
//
// Objective (minimized) over a set R of m_R rows:
//     F(X, theta) = -(1/m_R) sum_{r in R} log p_r(X)  +  l2 * (1/n) sum_k ||x_k||^2
// with theta = log gamma when gamma is learned (gamma-CKL only).
// python/tripletsearch/_reference/embedding.py is the NumPy twin of the trainer.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "../core/errors.hpp"
#include "../core/interrupt.hpp"
#include "../oracle/gradient.hpp"
#include "../oracle/models.hpp"

namespace tripletsearch {

enum class Optimizer : int { SGD = 0, Adam = 1, LBFGS = 2 };
enum class TrainStatus : int { Converged = 0, MaxEpochs = 1, Diverged = 2, Stopped = 3 };

struct TrainOptions {
  Optimizer optimizer = Optimizer::LBFGS;
  double lr = 0.1;                     // SGD and Adam step size
  std::int64_t batch_size = 0;         // 0: full batch (L-BFGS needs it)
  std::int64_t max_epochs = 1000;      // epochs (full batch: steps; L-BFGS: iterations)
  double tol = 1e-6;                   // relative loss improvement that counts as progress
  std::int64_t n_iter_no_change = 10;  // SGD/Adam: stop after this many epochs without it
  double l2 = 0.0;
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
    require_at_least(lbfgs_history, 1, "lbfgs_history");
    require_half_open(beta1, 0.0, 1.0, "beta1");
    require_half_open(beta2, 0.0, 1.0, "beta2");
    require_positive(eps, "eps");
  }
};

struct TrainResult {
  std::vector<double> loss;   // objective per epoch
  std::vector<double> gamma;  // gamma per epoch
  std::int64_t epochs = 0;
  TrainStatus status = TrainStatus::MaxEpochs;
};

// Called after every epoch with (epoch, loss, gamma); returning false stops the fit.
using EpochCallback = std::function<bool(std::int64_t, double, double)>;

// Objective and gradient of F on rows (T, m) at parameters x = [X (n*d), theta].
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
  double operator()(const double* x, const std::int64_t* T, std::int64_t m, double* g) {
    OracleSpec spec = spec_;
    spec.param = gamma(x);
    const Problem P{x, n_, d_, T, m};
    LossGrad s;
    with_model(spec, [&](const auto& model) {
      if (opt_.learn_gamma)
        s = loss_grad<true, true>(model, P, G_.data(), ws_, threads_, cancel_);
      else
        s = loss_grad<true, false>(model, P, G_.data(), ws_, threads_, cancel_);
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
  int threads_;
  Cancel& cancel_;  // a Ctrl-C stops the gradient, hence the fit (Interrupted)
  std::vector<double> G_;
  GradWorkspace ws_;
};

}  // namespace tripletsearch
