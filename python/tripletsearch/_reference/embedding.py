"""NumPy twin of the native trainer (``cpp/include/tripletsearch/embedding/``).

:func:`train` takes what ``tripletsearch.embedding.native_train`` takes (the oracle as its
kind and parameter) and follows the same algorithm step by step (objective, minibatch
order, SGD, Adam, L-BFGS with its line search and restarts), so on small problems both give
the same loss curve.
"""

from __future__ import annotations

import math

import numpy as np

from . import choice
from . import oracles as _ref
from .rng import epoch_permutation

__all__ = ["train"]


class _Objective:
    def __init__(self, kind, param, n, d, l2, learn_gamma, n_fixed=0):
        self.kind, self.param, self.n, self.d = kind, param, n, d
        self.l2, self.learn_gamma, self.n_fixed = l2, learn_gamma, n_fixed

    def gamma(self, x):
        return math.exp(x[self.n * self.d]) if self.learn_gamma else self.param

    def __call__(self, x, T):
        n, d = self.n, self.d
        X = x[: n * d].reshape(n, d)
        o = _ref.make_oracle(self.kind, self.gamma(x))
        m = len(T)
        logp = o.log_prob(X, T)
        G = o.grad(X, T)
        g = np.empty_like(x)
        g[: n * d] = (-G / m + 2.0 * self.l2 / n * X).ravel()
        if self.learn_gamma:
            # d log p / d log gamma = (1 - p) z for gamma-CKL, z = (gamma/2) log(Dj / Di)
            t, i, j = T.T
            Di = np.einsum("md,md->m", X[i] - X[t], X[i] - X[t])
            Dj = np.einsum("md,md->m", X[j] - X[t], X[j] - X[t])
            q = choice.pair_prob(Dj, Di, self.gamma(x))  # 1 - p
            g[n * d] = -np.sum(q * choice.log_odds(Di, Dj, self.gamma(x))) / m
        g[: min(self.n_fixed, n) * d] = 0.0  # fixed items do not move
        return -np.sum(logp) / m + self.l2 * float(np.sum(X * X)) / n, g

    def nll(self, x, V):
        """Mean negative log-likelihood of rows V (no l2): the validation loss."""
        X = x[: self.n * self.d].reshape(self.n, self.d)
        lp = _ref.make_oracle(self.kind, self.gamma(x)).log_prob(X, V)
        return -float(np.sum(lp)) / len(V) if np.all(np.isfinite(lp)) else math.inf


class _Validation:
    """Early stopping on held-out rows: the best epoch's parameters are kept."""

    def __init__(self, F, V, patience):
        self.F, self.V, self.patience = F, V, patience
        self.losses: list[float] = []
        self.best, self.best_epoch = math.inf, 0
        self.best_x: np.ndarray | None = None

    def start(self, x):
        if self.V is not None:
            self.best, self.best_x = self.F.nll(x, self.V), x.copy()

    def update(self, x, epoch):
        """Record the loss after ``epoch``; True when the fit should stop."""
        if self.V is None:
            return False
        v = self.F.nll(x, self.V)
        self.losses.append(v)
        if v < self.best:
            self.best, self.best_epoch, self.best_x = v, epoch, x.copy()
            return False
        return epoch - self.best_epoch >= self.patience


def _first_order(
    F, x, T, optimizer, lr, batch_size, max_epochs, tol, n_iter_no_change, seed, cb, val
):
    m = len(T)
    full = batch_size <= 0 or batch_size >= m
    B = m if full else batch_size
    mom = np.zeros_like(x)
    vel = np.zeros_like(x)
    b1, b2, eps = 0.9, 0.999, 1e-8
    losses, gammas = [], []
    best, stall, step, first = math.inf, 0, 0, 0.0
    val.start(x)
    for epoch in range(1, max_epochs + 1):
        order = None if full else np.array(epoch_permutation(seed, epoch, m))
        epoch_loss = 0.0
        for b0 in range(0, m, B):
            mb = min(B, m - b0)
            Tb = T if order is None else T[order[b0 : b0 + mb]]
            f, g = F(x, Tb)
            epoch_loss += f * mb / m
            step += 1
            if optimizer == "adam":
                mom = b1 * mom + (1 - b1) * g
                vel = b2 * vel + (1 - b2) * g * g
                x = x - lr * (mom / (1 - b1**step)) / (np.sqrt(vel / (1 - b2**step)) + eps)
            else:
                x = x - lr * g
        losses.append(epoch_loss)
        gammas.append(F.gamma(x))
        if epoch == 1:
            first = epoch_loss
        if not (math.isfinite(epoch_loss) and np.isfinite(x).all()) or epoch_loss > 1e6 * max(
            1.0, abs(first)
        ):
            return x, losses, gammas, epoch, "diverged"
        if cb is not None and not cb(epoch, epoch_loss, F.gamma(x)):
            return x, losses, gammas, epoch, "stopped"
        if val.V is not None:  # progress is measured on the held-out rows
            if val.update(x, epoch):
                return x, losses, gammas, epoch, "early_stopped"
            continue
        if epoch_loss > best - tol * max(1.0, abs(best)):
            stall += 1
            if stall >= n_iter_no_change:
                return x, losses, gammas, epoch, "converged"
        else:
            stall = 0
        best = min(best, epoch_loss)
    return x, losses, gammas, max_epochs, "max_epochs"


def _two_loop(g, S, Y, rho):
    """P = -H g from the history (newest last) and the first trial step."""
    p = -g
    alphas = []
    for s, y, r in zip(reversed(S), reversed(Y), reversed(rho)):
        a = r * (s @ p)
        alphas.append(a)
        p = p - a * y
    if not S:
        return p, 1.0 / max(1.0, math.sqrt(g @ g))
    p = p * ((S[-1] @ Y[-1]) / (Y[-1] @ Y[-1]))
    for (s, y, r), a in zip(zip(S, Y, rho), reversed(alphas)):
        b = r * (y @ p)
        p = p + (a - b) * s
    return p, 1.0


def _armijo(F, x, T, f, slope, p, step):
    """Backtracking from `step` along p: (accepted, x_new, f_new, g_new)."""
    for _ in range(40):
        x_new = x + step * p
        f_new, g_new = F(x_new, T)
        if math.isfinite(f_new) and f_new <= f + 1e-4 * step * slope and np.isfinite(g_new).all():
            return True, x_new, f_new, g_new
        step *= 0.5
    return False, None, None, None


def _lbfgs(F, x, T, max_epochs, tol, cb, val, patience, H=10):
    S: list[np.ndarray]
    Y: list[np.ndarray]
    rho: list[float]
    S, Y, rho = [], [], []  # newest last
    f, g = F(x, T)
    losses: list[float] = []
    gammas: list[float] = []
    if not (math.isfinite(f) and np.isfinite(g).all()):
        return x, losses, gammas, 0, "diverged"
    val.start(x)
    for it in range(1, max_epochs + 1):
        p, step0 = _two_loop(g, S, Y, rho)
        slope = g @ p
        if not slope < 0.0:  # restart from steepest descent
            S, Y, rho = [], [], []
            p, step0 = _two_loop(g, S, Y, rho)
            slope = g @ p
        accepted, x_new, f_new, g_new = _armijo(F, x, T, f, slope, p, step0)
        if not accepted and S:  # retry from steepest descent with a fresh history
            S, Y, rho = [], [], []
            continue
        if not accepted:
            losses.append(f)
            gammas.append(F.gamma(x))
            return x, losses, gammas, it, "converged"
        s, y = x_new - x, g_new - g
        sy = s @ y
        if sy > 1e-12 * (y @ y):
            S.append(s)
            Y.append(y)
            rho.append(1.0 / sy)
            if len(S) > H:
                S.pop(0), Y.pop(0), rho.pop(0)
        f_old = f
        x, g, f = x_new, g_new, f_new
        losses.append(f)
        gammas.append(F.gamma(x))
        if cb is not None and not cb(it, f, F.gamma(x)):
            return x, losses, gammas, it, "stopped"
        if val.update(x, it):
            return x, losses, gammas, it, "early_stopped"
        if f_old - f <= tol * max(abs(f_old), abs(f), 1.0):
            return x, losses, gammas, it, "converged"
    return x, losses, gammas, max_epochs, "max_epochs"


def train(kind, param, init, triplets, options, seed, threads=1, callback=None, validation=None):
    """NumPy twin of ``tripletsearch.embedding.native_train``.

    The model ``kind`` ("GammaCKL", "CKL", "TSTE", "STE", "Probit") with its parameter, the
    start ``init`` (n, d), the rows, the options (``optimizer`` by name: "sgd", "adam",
    "lbfgs"; ``lr``, ``batch_size`` (0: full batch), ``max_epochs``, ``tol``,
    ``n_iter_no_change``, ``l2``, ``learn_gamma``, ``n_fixed``) and the minibatch seed; with
    ``validation`` rows, early stopping on their loss. Returns ``(X, loss per epoch, gamma per
    epoch, epochs, status, validation loss per epoch, best epoch)``.
    """
    X0 = np.ascontiguousarray(init, dtype=np.float64)
    n, d = X0.shape
    T = np.ascontiguousarray(triplets, dtype=np.int64)
    if len(T) == 0:
        raise ValueError("triplets: no rows to train on")
    o = options
    F = _Objective(kind, param, n, d, o["l2"], o["learn_gamma"], o.get("n_fixed", 0))
    V = None if validation is None else np.ascontiguousarray(validation, dtype=np.int64)
    val = _Validation(F, V if V is not None and len(V) else None, o["n_iter_no_change"])
    x = np.concatenate([X0.ravel(), [math.log(param)] if o["learn_gamma"] else []])
    if o["optimizer"] == "lbfgs":
        x, losses, gammas, epochs, status = _lbfgs(
            F, x, T, o["max_epochs"], o["tol"], callback, val, o["n_iter_no_change"]
        )
    else:
        x, losses, gammas, epochs, status = _first_order(
            F,
            x,
            T,
            o["optimizer"],
            o["lr"],
            o["batch_size"],
            o["max_epochs"],
            o["tol"],
            o["n_iter_no_change"],
            seed,
            callback,
            val,
        )
    if val.best_x is not None and status != "diverged":
        x = val.best_x
    return (
        x[: n * d].reshape(n, d).copy(),
        np.array(losses),
        np.array(gammas),
        epochs,
        status,
        np.array(val.losses),
        val.best_epoch,
    )
