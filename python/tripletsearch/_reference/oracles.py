"""NumPy reference of the oracle kernels (see ``cpp/include/tripletsearch/oracle.hpp``).

Efficient NumPy: row gathers, ``einsum`` for distances and one ``bincount`` per role for
the gradient scatter, so benchmarks compare the native core against a fair baseline.
"""

from __future__ import annotations

import math

import numpy as np

from .. import oracles as _public

TINY = np.finfo(np.float64).tiny  # DBL_MIN
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
    """(log Phi(z), Phi(z), phi(z)/Phi(z)), the same branches as mathutil.hpp."""
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


# ---------------------------------------------------------------- per-model maths
# For the "difference of f" models: z = f(Dj) - f(Di), f' and the Luce log-weight -f.


def _diff_funcs(kind: int, param: float):
    if kind == _public._GAMMA_CKL:
        hg = 0.5 * param

        def f(D):
            return hg * safe_log(D)

        def fprime(D):
            return hg / np.where(D > TINY, D, np.inf)

    elif kind == _public._CKL:
        mu = param

        def f(D):
            return safe_log(mu + D)

        def fprime(D):
            return 1.0 / np.where(mu + D > TINY, mu + D, np.inf)

    elif kind == _public._TSTE:
        alpha, half_ap1 = param, 0.5 * (param + 1.0)

        def f(D):
            return half_ap1 * np.log1p(D / alpha)

        def fprime(D):
            return half_ap1 / (alpha + D)

    elif kind == _public._STE:

        def f(D):
            return D

        def fprime(D):
            return np.ones_like(D)

    else:
        raise ValueError(f"model kind {kind} is not a difference-form model")
    return f, fprime


def _rows(X, T, pair: bool):
    """Gathers and distances: (t, i, j, di, dj, Di, Dj, N, S2, rule)."""
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


class _ReferenceMixin:
    """Overrides the native hooks of :class:`tripletsearch.oracles.Oracle` with NumPy."""

    _native_range_check = False

    def _row_values(self, X, T, log_space: bool):
        pair = self._kind == _public._PROBIT
        *_, Di, Dj, N, S2, rule = _rows(X, T, pair)
        if pair:
            log_cdf, cdf, _ = normal_tail(_probit_z(N, S2, self._param(X.shape[1])))
            val = np.where(
                S2 > 0, log_cdf if log_space else cdf, -math.log(2) if log_space else 0.5
            )
        else:
            f, _ = _diff_funcs(self._kind, self._param(X.shape[1]))
            z = f(Dj) - f(Di)
            val = log_sigmoid(z) if log_space else sigmoid(z)
        if log_space:
            return _apply_rule(val, rule, 0.0, -np.inf)
        return _apply_rule(val, rule, 1.0, 0.0)

    def _prob(self, X, T, threads):
        return self._row_values(X, T, False)

    def _log_prob(self, X, T, threads):
        return self._row_values(X, T, True)

    def _log_likelihood(self, X, T, threads):
        return float(np.sum(self._row_values(X, T, True)))

    def _grad(self, X, T, threads):
        n, d = X.shape
        pair = self._kind == _public._PROBIT
        t, i, j, di, dj, Di, Dj, N, S2, rule = _rows(X, T, pair)
        if pair:
            sigma = self._param(d)
            z = _probit_z(N, S2, sigma)
            _, _, lam = normal_tail(z)
            ok = S2 > 0
            s = np.sqrt(np.where(ok, S2, 1.0))
            B = np.where(ok, lam / (sigma * s), 0.0)
            a, b = -B, B
            c = np.where(ok, -lam * z / np.where(ok, S2, 1.0), 0.0)
        else:
            f, fprime = _diff_funcs(self._kind, self._param(d))
            q = sigmoid(-(f(Dj) - f(Di)))
            a = -2.0 * q * fprime(Di)
            b = 2.0 * q * fprime(Dj)
            c = None
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

    def _choice_prob(self, X, heads, cands, threads):
        f, _ = _diff_funcs(self._kind, self._param(X.shape[1]))
        diff = X[cands] - X[heads][:, None, :]
        D = np.einsum("mkd,mkd->mk", diff, diff)
        w = -f(D)
        w = np.exp(w - w.max(axis=1, keepdims=True))
        p = w / w.sum(axis=1, keepdims=True)
        hit = cands == heads[:, None]
        n_hit = hit.sum(axis=1, keepdims=True)
        return np.where(n_hit > 0, hit / np.maximum(n_hit, 1), p)


class GammaCKL(_ReferenceMixin, _public.GammaCKL):
    __doc__ = _public.GammaCKL.__doc__


class CKL(_ReferenceMixin, _public.CKL):
    __doc__ = _public.CKL.__doc__


class TSTE(_ReferenceMixin, _public.TSTE):
    __doc__ = _public.TSTE.__doc__


class STE(_ReferenceMixin, _public.STE):
    __doc__ = _public.STE.__doc__


class Probit(_ReferenceMixin, _public.Probit):
    __doc__ = _public.Probit.__doc__
