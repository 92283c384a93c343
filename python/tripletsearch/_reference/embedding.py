"""NumPy twin of the native trainer (``cpp/include/tripletsearch/sgd.hpp``).

``train`` has the signature and return value of ``tripletsearch._core.train`` and follows
the same algorithm step by step (objective, minibatch order, SGD, Adam, L-BFGS with its
line search and restarts), so on small problems both give the same loss curve.
"""

from __future__ import annotations

import math

import numpy as np

from .. import embedding as _public
from .. import oracles as _pub_oracles
from . import oracles as _ref
from .rng import epoch_permutation

_CLASSES = {
    _pub_oracles._GAMMA_CKL: _ref.GammaCKL,
    _pub_oracles._CKL: _ref.CKL,
    _pub_oracles._TSTE: _ref.TSTE,
    _pub_oracles._STE: _ref.STE,
    _pub_oracles._PROBIT: _ref.Probit,
}


def _oracle(kind: int, param: float):
    cls = _CLASSES[kind]
    if kind == _pub_oracles._STE:
        return cls()
    if kind == _pub_oracles._TSTE:
        return cls(param)
    return cls(param)


class _Objective:
    def __init__(self, kind, param, n, d, l2, learn_gamma):
        self.kind, self.param, self.n, self.d = kind, param, n, d
        self.l2, self.learn_gamma = l2, learn_gamma

    def gamma(self, x):
        return math.exp(x[self.n * self.d]) if self.learn_gamma else self.param

    def __call__(self, x, T):
        n, d = self.n, self.d
        X = x[: n * d].reshape(n, d)
        o = _oracle(self.kind, self.gamma(x))
        m = len(T)
        logp = o._log_prob(X, T, 1)
        G = o._grad(X, T, 1)
        g = np.empty_like(x)
        g[: n * d] = (-G / m + 2.0 * self.l2 / n * X).ravel()
        if self.learn_gamma:
            # d log p / d log gamma = (1 - p) z for gamma-CKL, z = (gamma/2) log(Dj / Di)
            t, i, j = T.T
            Di = np.einsum("md,md->m", X[i] - X[t], X[i] - X[t])
            Dj = np.einsum("md,md->m", X[j] - X[t], X[j] - X[t])
            z = 0.5 * self.gamma(x) * (_ref.safe_log(Dj) - _ref.safe_log(Di))
            g[n * d] = -np.sum(_ref.sigmoid(-z) * z) / m
        return -np.sum(logp) / m + self.l2 * float(np.sum(X * X)) / n, g


def _first_order(F, x, T, optimizer, lr, batch_size, max_epochs, tol, n_iter_no_change, seed, cb):
    m = len(T)
    full = batch_size <= 0 or batch_size >= m
    B = m if full else batch_size
    mom = np.zeros_like(x)
    vel = np.zeros_like(x)
    b1, b2, eps = 0.9, 0.999, 1e-8
    losses, gammas = [], []
    best, stall, step, first = math.inf, 0, 0, 0.0
    for epoch in range(1, max_epochs + 1):
        order = None if full else np.array(epoch_permutation(seed, epoch, m))
        epoch_loss = 0.0
        for b0 in range(0, m, B):
            mb = min(B, m - b0)
            Tb = T if full else T[order[b0 : b0 + mb]]
            f, g = F(x, Tb)
            epoch_loss += f * mb / m
            step += 1
            if optimizer == _public.OPTIMIZERS["adam"]:
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
            return x, losses, gammas, epoch, 2
        if cb is not None and not cb(epoch, epoch_loss, F.gamma(x)):
            return x, losses, gammas, epoch, 3
        if epoch_loss > best - tol * max(1.0, abs(best)):
            stall += 1
            if stall >= n_iter_no_change:
                return x, losses, gammas, epoch, 0
        else:
            stall = 0
        best = min(best, epoch_loss)
    return x, losses, gammas, max_epochs, 1


def _lbfgs(F, x, T, max_epochs, tol, cb, H=10):
    S, Y, rho = [], [], []  # newest last
    f, g = F(x, T)
    losses, gammas = [], []
    if not (math.isfinite(f) and np.isfinite(g).all()):
        return x, losses, gammas, 0, 2
    epochs = 0
    for it in range(1, max_epochs + 1):
        p = -g
        alphas = []
        for s, y, r in zip(reversed(S), reversed(Y), reversed(rho)):
            a = r * (s @ p)
            alphas.append(a)
            p = p - a * y
        step0 = 1.0
        if S:
            p = p * ((S[-1] @ Y[-1]) / (Y[-1] @ Y[-1]))
        else:
            step0 = 1.0 / max(1.0, math.sqrt(g @ g))
        for (s, y, r), a in zip(zip(S, Y, rho), reversed(alphas)):
            b = r * (y @ p)
            p = p + (a - b) * s
        slope = g @ p
        if not slope < 0.0:
            S, Y, rho = [], [], []
            p = -g
            slope = -(g @ g)
            step0 = 1.0 / max(1.0, math.sqrt(-slope))
        step, accepted = step0, False
        for _ in range(40):
            x_new = x + step * p
            f_new, g_new = F(x_new, T)
            if (
                math.isfinite(f_new)
                and f_new <= f + 1e-4 * step * slope
                and np.isfinite(g_new).all()
            ):
                accepted = True
                break
            step *= 0.5
        epochs = it
        if not accepted and S:
            S, Y, rho = [], [], []
            continue
        if not accepted:
            losses.append(f)
            gammas.append(F.gamma(x))
            return x, losses, gammas, epochs, 0
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
            return x, losses, gammas, epochs, 3
        if f_old - f <= tol * max(abs(f_old), abs(f), 1.0):
            return x, losses, gammas, epochs, 0
    return x, losses, gammas, max_epochs, 1


def train(
    kind,
    param,
    init,
    triplets,
    optimizer,
    lr,
    batch_size,
    max_epochs,
    tol,
    n_iter_no_change,
    l2,
    learn_gamma,
    seed,
    threads,
    callback=None,
):
    """NumPy twin of ``tripletsearch._core.train``; same arguments and return value
    ``(X, loss per epoch, gamma per epoch, epochs, status)``."""
    X0 = np.ascontiguousarray(init, dtype=np.float64)
    n, d = X0.shape
    T = np.ascontiguousarray(triplets, dtype=np.int64)
    if len(T) == 0:
        raise ValueError("triplets: no rows to train on")
    F = _Objective(kind, param, n, d, l2, learn_gamma)
    x = np.concatenate([X0.ravel(), [math.log(param)] if learn_gamma else []])
    if optimizer == _public.OPTIMIZERS["lbfgs"]:
        x, losses, gammas, epochs, status = _lbfgs(F, x, T, max_epochs, tol, callback)
    else:
        x, losses, gammas, epochs, status = _first_order(
            F, x, T, optimizer, lr, batch_size, max_epochs, tol, n_iter_no_change, seed, callback
        )
    return (x[: n * d].reshape(n, d).copy(), np.array(losses), np.array(gammas), epochs, status)


class Embedding(_public.Embedding):
    __doc__ = _public.Embedding.__doc__
    _train = staticmethod(train)
