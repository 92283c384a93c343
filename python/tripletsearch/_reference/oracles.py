"""NumPy reference of the oracle kernels (``cpp/include/tripletsearch/oracle/``).

Standalone classes with the methods of the public oracles (``prob``, ``log_prob``,
``log_likelihood``, ``grad``, ``sample``, ``choice_prob``) and the same conventions,
computed with NumPy only. Efficient NumPy: row gathers, ``einsum`` for distances and one
``bincount`` per role for the gradient scatter, so benchmarks compare the native core with
a fair baseline. gamma-CKL's probabilities come from :mod:`.choice`.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from . import choice
from .choice import TINY

__all__ = ["GammaCKL", "CKL", "TSTE", "STE", "Probit"]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def safe_log(D):
    """log(max(D, DBL_MIN)): finite for coincident points."""
    return np.log(np.maximum(D, TINY))


def log_sigmoid(z):
    return -np.logaddexp(0.0, -z)


def sigmoid(z):
    return np.exp(log_sigmoid(z))


def normal_tail(z):
    """(log Phi(z), Phi(z), phi(z)/Phi(z)), the same branches as core/mathutil.hpp."""
    z = np.asarray(z, dtype=np.float64)
    log_cdf = np.empty_like(z)
    cdf = np.empty_like(z)
    mills = np.empty_like(z)
    pos = z > 0
    mid = (~pos) & (z > -37.0)
    low = ~(pos | mid)
    if pos.any():
        upper = 0.5 * _erfc(z[pos] * math.sqrt(0.5))
        cdf[pos] = 1.0 - upper
        log_cdf[pos] = np.log1p(-upper)
        mills[pos] = np.exp(-0.5 * z[pos] ** 2 - _HALF_LOG_2PI) / cdf[pos]
    if mid.any():
        cdf[mid] = 0.5 * _erfc(-z[mid] * math.sqrt(0.5))
        log_cdf[mid] = np.log(cdf[mid])
        mills[mid] = np.exp(-0.5 * z[mid] ** 2 - _HALF_LOG_2PI) / cdf[mid]
    if low.any():
        zl = z[low]
        inv_z2 = 1.0 / (zl * zl)
        term = np.ones_like(zl)
        s = np.ones_like(zl)
        for k in range(1, 9):
            term = term * (-(2.0 * k - 1.0) * inv_z2)
            s = s + term
        log_cdf[low] = -0.5 * zl * zl - _HALF_LOG_2PI - np.log(-zl) + np.log(s)
        cdf[low] = np.exp(log_cdf[low])
        mills[low] = -zl / s
    return log_cdf, cdf, mills


def check_indices(a: Any, n: int, name: str) -> np.ndarray:
    """int64 indices, every entry in [0, n) (the core's message otherwise)."""
    a = np.asarray(a, dtype=np.int64)
    bad = (a < 0) | (a >= n)
    if bad.any():
        pos = int(np.argmax(bad.reshape(-1)))
        where = ", ".join(str(int(w)) for w in np.unravel_index(pos, a.shape))
        raise ValueError(
            f"{name}: index {a.reshape(-1)[pos]} at position ({where}) "
            f"is out of range for {n} items (valid: 0..{n - 1})"
        )
    return a


# ---------------------------------------------------------------- the difference models
# CKL, t-STE, STE: p = sigmoid(f(Dj) - f(Di)); f' for the gradient; as Luce choice models
# a candidate has weight exp(-f(D)).

_Kernel = Callable[[np.ndarray], np.ndarray]


def _diff_funcs(kind: str, param: float) -> tuple[_Kernel, _Kernel]:
    if kind == "CKL":
        mu = param

        def f(D):
            return safe_log(mu + D)

        def fprime(D):
            return 1.0 / np.where(mu + D > TINY, mu + D, np.inf)

    elif kind == "TSTE":
        alpha, half_ap1 = param, 0.5 * (param + 1.0)

        def f(D):
            return half_ap1 * np.log1p(D / alpha)

        def fprime(D):
            return half_ap1 / (alpha + D)

    elif kind == "STE":

        def f(D):
            return D

        def fprime(D):
            return np.ones_like(D)

    else:
        raise ValueError(f"model {kind!r} is not a difference-form model")
    return f, fprime


# (t, i, j, di, dj, Di, Dj, N, S2, rule)
_RowData = tuple[
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    "np.ndarray | None",
    "np.ndarray | None",
    np.ndarray,
]


def _rows(X: np.ndarray, T: np.ndarray, pair: bool) -> _RowData:
    """Gathers and distances: (t, i, j, di, dj, Di, Dj, N, S2, rule).

    N and S2 (the Probit terms) only when ``pair``, else None.
    """
    t, i, j = T[:, 0], T[:, 1], T[:, 2]
    xt = X[t]
    di = X[i] - xt
    dj = X[j] - xt
    Di = np.einsum("md,md->m", di, di)
    Dj = np.einsum("md,md->m", dj, dj)
    N = S2 = None
    if pair:
        e = di - dj
        S2 = np.einsum("md,md->m", e, e)
        N = np.einsum("md,md->m", dj - di, dj + di)
    rule = np.where(t == i, 1, np.where(t == j, -1, 0))
    return t, i, j, di, dj, Di, Dj, N, S2, rule


def _probit_z(N, S2, sigma):
    s = np.sqrt(np.where(S2 > 0, S2, 1.0))
    return np.where(S2 > 0, N / (2.0 * sigma * s), 0.0)


def _apply_rule(values, rule, certain, impossible):
    values = np.where(rule > 0, certain, values)
    return np.where(rule < 0, impossible, values)


class _Oracle:
    """The public oracles' methods in NumPy; subclasses set ``kind`` and ``param(d)``."""

    kind = ""

    def param(self, d: int) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    def _check(self, X, T, name="triplets"):
        X = np.ascontiguousarray(X, dtype=np.float64)
        T = np.asarray(T, dtype=np.int64).reshape(-1, 3)
        return X, check_indices(T, X.shape[0], name)

    def _row_values(self, X: Any, T: Any, log_space: bool) -> np.ndarray:
        X, T = self._check(X, T)
        pair = self.kind == "Probit"
        *_, Di, Dj, N, S2, rule = _rows(X, T, pair)
        p = self.param(X.shape[1])
        if pair:
            assert N is not None and S2 is not None  # _rows computes them for pairs
            log_cdf, cdf, _ = normal_tail(_probit_z(N, S2, p))
            val = np.where(
                S2 > 0, log_cdf if log_space else cdf, -math.log(2) if log_space else 0.5
            )
        elif self.kind == "GammaCKL":
            val = (choice.pair_log_prob if log_space else choice.pair_prob)(Di, Dj, p)
        else:
            f, _ = _diff_funcs(self.kind, p)
            z = f(Dj) - f(Di)
            val = log_sigmoid(z) if log_space else sigmoid(z)
        if log_space:
            return _apply_rule(val, rule, 0.0, -np.inf)
        return _apply_rule(val, rule, 1.0, 0.0)

    def prob(self, X, triplets, *, n_jobs=None):
        return self._row_values(X, triplets, False)

    def log_prob(self, X, triplets, *, n_jobs=None):
        return self._row_values(X, triplets, True)

    def log_likelihood(self, X, triplets, *, n_jobs=None):
        return float(np.sum(self._row_values(X, triplets, True)))

    def _coefficients(self, Di, Dj, N, S2, d):
        """(a, b, c) of every row: g_i = a di + c e, g_j = b dj - c e, g_t = -(g_i + g_j)."""
        p = self.param(d)
        if self.kind == "Probit":
            z = _probit_z(N, S2, p)
            _, _, lam = normal_tail(z)
            ok = S2 > 0
            s = np.sqrt(np.where(ok, S2, 1.0))
            B = np.where(ok, lam / (p * s), 0.0)
            return -B, B, np.where(ok, -lam * z / np.where(ok, S2, 1.0), 0.0)
        if self.kind == "GammaCKL":  # d log p / dz = 1 - p, f' = (gamma/2) / D
            q = choice.pair_prob(Dj, Di, p)
            a = -p * q / np.where(Di > TINY, Di, np.inf)
            b = p * q / np.where(Dj > TINY, Dj, np.inf)
            return a, b, None
        f, fprime = _diff_funcs(self.kind, p)
        q = sigmoid(-(f(Dj) - f(Di)))
        return -2.0 * q * fprime(Di), 2.0 * q * fprime(Dj), None

    def grad(self, X, triplets, n_jobs=None):
        X, T = self._check(X, triplets)
        n, d = X.shape
        t, i, j, di, dj, Di, Dj, N, S2, rule = _rows(X, T, self.kind == "Probit")
        a, b, c = self._coefficients(Di, Dj, N, S2, d)
        live = rule == 0
        a = np.where(live, a, 0.0)[:, None]
        b = np.where(live, b, 0.0)[:, None]
        gi = a * di
        gj = b * dj
        gt = -(gi + gj)
        if c is not None:
            ce = np.where(live, c, 0.0)[:, None] * (di - dj)
            gi = gi + ce
            gj = gj - ce
        cols = np.arange(d)
        G = np.zeros(n * d)
        for idx, g in ((t, gt), (i, gi), (j, gj)):
            G += np.bincount((idx[:, None] * d + cols).ravel(), weights=g.ravel(), minlength=n * d)
        return G.reshape(n, d)

    def sample(self, X, queries, random_state=None):
        """Answers to queries ``(t, a, b)``: swapped to ``(t, b, a)`` when b is named."""
        X, Q = self._check(X, queries, "queries")
        rng = np.random.default_rng(random_state)
        swap = rng.random(Q.shape[0]) >= self._row_values(X, Q, False)
        out = Q.copy()
        out[swap, 1], out[swap, 2] = Q[swap, 2], Q[swap, 1]
        return out


class _ChoiceOracle(_Oracle):
    def choice_prob(self, X, heads, candidates, *, n_jobs=None):
        """P(candidate c named closest to the head); candidates equal to the head share 1."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        heads = check_indices(heads, X.shape[0], "heads")
        cands = check_indices(candidates, X.shape[0], "candidates")
        diff = X[cands] - X[heads][:, None, :]
        D = np.einsum("mkd,mkd->mk", diff, diff)
        p = self.param(X.shape[1])
        if self.kind == "GammaCKL":
            P = choice.choice_probs(D, p)
        else:
            f, _ = _diff_funcs(self.kind, p)
            w = -f(D)
            w = np.exp(w - w.max(axis=1, keepdims=True))
            P = w / w.sum(axis=1, keepdims=True)
        hit = cands == heads[:, None]
        n_hit = hit.sum(axis=1, keepdims=True)
        return np.where(n_hit > 0, hit / np.maximum(n_hit, 1), P)


class GammaCKL(_ChoiceOracle):
    """gamma-CKL (the paper's Eq. 2), the NumPy twin of ``tripletsearch.GammaCKL``."""

    kind = "GammaCKL"

    def __init__(self, gamma: float):
        self.gamma = float(gamma)

    def param(self, d):
        return self.gamma


class CKL(_ChoiceOracle):
    """CKL (Tamuz et al. 2011), the NumPy twin of ``tripletsearch.CKL``."""

    kind = "CKL"

    def __init__(self, mu: float = 0.0):
        self.mu = float(mu)

    def param(self, d):
        return self.mu


class TSTE(_ChoiceOracle):
    """t-STE, the NumPy twin of ``tripletsearch.TSTE`` (alpha None: max(d - 1, 1))."""

    kind = "TSTE"

    def __init__(self, alpha: float | None = None):
        self.alpha = None if alpha is None else float(alpha)

    def param(self, d):
        return float(max(d - 1, 1)) if self.alpha is None else self.alpha


class STE(_ChoiceOracle):
    """STE, the NumPy twin of ``tripletsearch.STE``."""

    kind = "STE"

    def param(self, d):
        return 0.0


class Probit(_Oracle):
    """Probit (Chumbalov et al. 2020), the NumPy twin of ``tripletsearch.Probit``."""

    kind = "Probit"

    def __init__(self, sigma: float):
        self.sigma = float(sigma)

    def param(self, d):
        return self.sigma


def make_oracle(kind: str, param: float) -> _Oracle:
    """The reference oracle of a model kind ("GammaCKL", "CKL", "TSTE", "STE", "Probit")."""
    if kind == "STE":
        return STE()
    return {"GammaCKL": GammaCKL, "CKL": CKL, "TSTE": TSTE, "Probit": Probit}[kind](param)
