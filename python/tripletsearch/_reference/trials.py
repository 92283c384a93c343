"""NumPy twin of the trial likelihoods (``cpp/include/tripletsearch/oracle/trials.hpp``).

A trial set is ``(rows, kind, k, r, ordered[, lapse])``: kind 0 ranked (rows ``[h, p_1..p_r, the
other candidates]``, alternative j the pair ``(h, rows[:, 1 + j])``), kind 1 odd-one-out
(rows ``[a, b, o]``, alternatives ``(a, b), (a, o), (b, o)``; the answer names the first).
Every alternative has log-weight ``w = -f(D)`` of its squared distance D: gamma-CKL
``(gamma/2) log D``, CKL ``log(mu + D)``, t-STE ``((alpha+1)/2) log(1 + D/alpha)``, STE
``D``. An ordered answer is Plackett-Luce (each pick a softmax choice among those left); an
unordered one sums the r! orders of its picks. With a lapse rate, each pick is at random
among the s alternatives left with that probability: ``p = (1 - lapse) q + lapse / s``.
Written in log space (log-sum-exp), independently of the core's ratio form.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .choice import TINY
from .embedding import _lbfgs

__all__ = ["log_prob", "loss_grad", "train"]

_KINDS = ("GammaCKL", "CKL", "TSTE", "STE")


def _f(kind, param, D):
    """(f(D), f'(D)) of a model: w = -f(D); f' = 0 where the floor is active."""
    if kind == "GammaCKL":
        h = 0.5 * param
        return h * np.log(np.maximum(D, TINY)), np.where(D > TINY, h / np.maximum(D, TINY), 0.0)
    if kind == "CKL":
        S = param + D
        return np.log(np.maximum(S, TINY)), np.where(S > TINY, 1.0 / np.maximum(S, TINY), 0.0)
    if kind == "TSTE":
        h = 0.5 * (param + 1.0)
        return h * np.log1p(D / param), h / (param + D)
    if kind == "STE":
        return D, np.ones_like(D)
    raise ValueError(f"model: {kind} models pairs only (triplets)")


def _pairs(rows, kind, k):
    """(u, v) of shape (m, k): the items of each alternative."""
    if kind == 0:
        return np.repeat(rows[:, :1], k, axis=1), rows[:, 1 : 1 + k]
    a, b, o = rows[:, 0], rows[:, 1], rows[:, 2]
    return np.stack([a, a, b], axis=1), np.stack([b, o, o], axis=1)


def _lse(a, axis=-1):
    mx = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(mx, axis) + np.log(np.sum(np.exp(a - mx), axis=axis))


def _ordered(w, order, lapse=0.0):
    """Plackett-Luce log p of picking columns ``order`` in turn, and dlogp/dw; w (m, k)."""
    m, k = w.shape
    left = np.ones(k, dtype=bool)
    logp = np.zeros(m)
    e = np.zeros((m, k))
    for c in order:
        sub = np.where(left, w, -np.inf)
        lse = _lse(sub)
        lq = w[:, c] - lse
        if lapse > 0.0:  # log((1 - lapse) q + lapse / s), and d log p / d log q
            a = math.log1p(-lapse) + lq
            lp = np.logaddexp(a, math.log(lapse / left.sum()))
            rho = np.exp(a - lp)
        else:
            lp, rho = lq, np.ones(m)
        logp += lp
        e[:, c] += rho
        e -= rho[:, None] * np.where(left, np.exp(sub - lse[:, None]), 0.0)
        left[c] = False
    return logp, e


def _terms(w, r, ordered, lapse=0.0):
    """(log p, dlogp/dw) of each trial from its log-weights w (m, k)."""
    if ordered:
        return _ordered(w, range(r), lapse)
    parts = [_ordered(w, p, lapse) for p in itertools.permutations(range(r))]
    L = np.stack([p[0] for p in parts], axis=1)
    logp = _lse(L)
    share = np.exp(L - logp[:, None])
    e = sum(share[:, q, None] * parts[q][1] for q in range(len(parts)))
    return logp, e


def _set_terms(kind, param, X, rows, set_kind, k, r, ordered, lapse=0.0):
    if not 0.0 <= lapse < 1.0:
        raise ValueError(f"lapse: a probability in [0, 1), got {lapse}")
    rows = np.asarray(rows, dtype=np.int64)
    u, v = _pairs(rows, set_kind, k)
    Y = X[u] - X[v]  # (m, k, d)
    D = np.einsum("mkd,mkd->mk", Y, Y)
    f, fp = _f(kind, param, D)
    logp, e = _terms(-f, r, ordered, lapse)
    return logp, e, fp, Y, u, v, f


def log_prob(kind, param, X, sets):
    """The log-probability of every trial of ``sets``: ``[(rows, kind, k, r, ordered)]``.

    A set may carry a sixth entry, its lapse rate.
    """
    X = np.asarray(X, dtype=np.float64)
    out = [_set_terms(kind, param, X, *s)[0] for s in sets]
    return np.concatenate(out) if out else np.zeros(0)


def loss_grad(kind, param, X, sets):
    """(sum of log p, its gradient (n, d), its derivative in log gamma) over every trial."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    G = np.zeros((n, d))
    total, dlg = 0.0, 0.0
    for s in sets:
        logp, e, fp, Y, u, v, f = _set_terms(kind, param, X, *s)
        total += float(np.sum(logp))
        c = -2.0 * e * fp  # d log p / d x_u = c (x_u - x_v), since dw/dD = -f'(D)
        contrib = c[:, :, None] * Y
        np.add.at(G, u.ravel(), contrib.reshape(-1, d))
        np.add.at(G, v.ravel(), -contrib.reshape(-1, d))
        if kind == "GammaCKL":
            dlg += float(np.sum(e * -f))  # w is proportional to gamma
    return total, G, dlg


class _TrialObjective:
    """The trainer's objective over trial sets: mean NLL per trial + l2 (no triplet rows)."""

    def __init__(self, kind, param, n, d, sets, l2, learn_gamma):
        self.kind, self.param, self.n, self.d = kind, param, n, d
        self.sets, self.l2, self.learn_gamma = sets, l2, learn_gamma
        self.m = sum(len(s[0]) for s in sets)

    def gamma(self, x):
        return math.exp(x[self.n * self.d]) if self.learn_gamma else self.param

    def __call__(self, x, _rows):
        n, d = self.n, self.d
        X = x[: n * d].reshape(n, d)
        total, G, dlg = loss_grad(self.kind, self.gamma(x), X, self.sets)
        g = np.empty_like(x)
        g[: n * d] = (-G / self.m + 2.0 * self.l2 / n * X).ravel()
        if self.learn_gamma:
            g[n * d] = -dlg / self.m
        return -total / self.m + self.l2 * float(np.sum(X * X)) / n, g


class _NoValidation:
    best_x = None

    def start(self, x):
        pass

    def update(self, x, epoch):
        return False


def train(kind, param, init, sets, options, threads=1, callback=None):
    """NumPy twin of ``_core.train_trials``: L-BFGS over trial sets.

    Returns ``(X, loss per epoch, gamma per epoch, epochs, status)``.
    """
    if kind not in _KINDS:
        raise ValueError("model: Probit models pairs only (triplets)")
    if options["optimizer"] != "lbfgs":
        raise ValueError("optimizer: trials are fitted by L-BFGS (optimizer='lbfgs')")
    X0 = np.ascontiguousarray(init, dtype=np.float64)
    n, d = X0.shape
    o = options
    F = _TrialObjective(kind, param, n, d, sets, o["l2"], o["learn_gamma"])
    x = np.concatenate([X0.ravel(), [math.log(param)] if o["learn_gamma"] else []])
    x, losses, gammas, epochs, status = _lbfgs(
        F, x, None, o["max_epochs"], o["tol"], callback, _NoValidation(), o["n_iter_no_change"]
    )
    return x[: n * d].reshape(n, d).copy(), np.array(losses), np.array(gammas), epochs, status
