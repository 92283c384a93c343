"""NumPy twin of ``cpp/include/tripletsearch/collect/information.hpp``: the sampler's scoring.

A head's position is unknown: M support points ``s_1..s_M`` stand for where it might be,
with log weights ``log w_m = log prior_m + sum over its answers (c, f) of log P(c closer than
f | head at s_m)``, P the model mixed with a lapse, ``lapse / 2 + (1 - lapse) p``, through
the oracles' own ``log_prob``/``prob`` (:mod:`.oracles`) (:func:`log_weights`). A candidate
pair (a, b) is scored by the mutual information between its answer and the head's
position (:func:`pair_information`)::

    I(a, b) = H2(sum_m w_m q_m) - sum_m w_m H2(q_m),   q_m = P(a closer | head at s_m)

in nats, w normalized, H2 the binary entropy. q comes from the model's log-odds
``f(D_b) - f(D_a)`` (:func:`log_odds`: ``f(D) = (gamma/2) log D`` for gamma-CKL,
``log(mu + D)`` for CKL, ``((alpha+1)/2) log(1 + D/alpha)`` for t-STE, ``D`` for STE,
distances floored at DBL_MIN).

``spec`` is one of :mod:`.oracles`' models (``GammaCKL(gamma)``, ``CKL(mu)``,
``TSTE(alpha)``, ``STE()``), where the native kernels take a ``_core.OracleSpec``; the
``threads`` argument of the native kernels has no counterpart.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from .choice import TINY
from .oracles import _diff_funcs, check_indices

__all__ = [
    "log_weights",
    "table_log_weights",
    "log_odds",
    "pair_information",
    "choice_log_weights",
    "choice_information",
]


def _check_model(spec: Any) -> None:
    if spec.kind == "Probit":
        raise ValueError("spec: Probit has no log-odds form; the sampler cannot use it")


def _check_lapse(lapse: float) -> None:
    if not 0.0 <= lapse < 1.0:
        raise ValueError(f"lapse: must lie in [0, 1), got {lapse}")


def _check_pairs(pairs: Any, n: int, name: str) -> np.ndarray:
    P = check_indices(np.asarray(pairs, dtype=np.int64).reshape(-1, 2), n, name)
    same = np.flatnonzero(P[:, 0] == P[:, 1])
    if len(same):
        raise ValueError(f"{name}: row {same[0]} names item {P[same[0], 0]} twice")
    return P


def log_weights(
    spec: Any, lapse: float, X: Any, support: Any, answers: Any, log_prior: Any
) -> np.ndarray:
    """Log weights of a head's support points given its answers.

    Parameters
    ----------
    spec : a model of :mod:`.oracles`
    lapse : float in [0, 1)
    X : array (n, d)
        Item positions.
    support : array (M, d)
        Where the head might be.
    answers : int array (r, 2)
        The head's answers ``(closer, farther)``, added in order.
    log_prior : array (M,)

    Returns
    -------
    ndarray (M,)
    """
    _check_model(spec)
    _check_lapse(lapse)
    X = np.asarray(X, dtype=np.float64)
    S = np.asarray(support, dtype=np.float64)
    A = _check_pairs(answers, len(X), "answers")
    out = np.array(log_prior, dtype=np.float64)
    M = len(S)
    Xs = np.concatenate([X, S])
    heads = len(X) + np.arange(M)
    for c, f in A:  # one answer at a time, in order (the kernel's summation order)
        rows = np.stack([heads, np.full(M, c), np.full(M, f)], axis=1)
        if lapse > 0.0:
            out += np.log(0.5 * lapse + (1.0 - lapse) * spec.prob(Xs, rows))
        else:
            out += spec.log_prob(Xs, rows)
    return out


def table_log_weights(lapse: float, log_odds: Any, answers: Any, log_prior: Any) -> np.ndarray:
    """:func:`log_weights` from a log-odds table of the same support (no geometry).

    Parameters
    ----------
    lapse : float in [0, 1)
    log_odds : array (K, M)
        The table of :func:`log_odds`.
    answers : int array (r, 2)
        The head's answers ``(closer, farther)`` as rows of ``log_odds``, added in order.
    log_prior : array (M,)

    Returns
    -------
    ndarray (M,)
        ``log_prior + sum_r log P``, P = sigmoid(F[f] - F[c]) mixed with the lapse.
    """
    _check_lapse(lapse)
    F = np.asarray(log_odds, dtype=np.float64)
    A = _check_pairs(answers, len(F), "answers")
    out = np.array(log_prior, dtype=np.float64)
    if np.isnan(out).any() or np.isposinf(out).any():
        raise ValueError("log_prior: contains NaN or +inf")
    for c, f in A:  # in order (the kernel's summation order)
        z = F[f] - F[c]
        if lapse > 0.0:
            e = np.exp(-np.abs(z))
            q = np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
            out += np.log(0.5 * lapse + (1.0 - lapse) * q)
        else:
            out += np.minimum(z, 0.0) - np.log1p(np.exp(-np.abs(z)))
    if np.isnan(out).any():
        raise ValueError("log_odds: contains NaN")
    return out


def log_odds(spec: Any, X: Any, support: Any, items: Any) -> np.ndarray:
    """The log-odds terms ``f(||s_m - x_i||^2)``, shape (len(items), M).

    A pair (a, b) of rows has log-odds ``F[b] - F[a]`` of "a closer".
    """
    _check_model(spec)
    X = np.asarray(X, dtype=np.float64)
    S = np.asarray(support, dtype=np.float64)
    idx = check_indices(np.asarray(items, dtype=np.int64).reshape(-1), len(X), "items")
    diff = S[None, :, :] - X[idx][:, None, :]
    D = np.einsum("kmd,kmd->km", diff, diff)
    if spec.kind == "GammaCKL":
        return 0.5 * spec.param(X.shape[1]) * np.log(np.maximum(D, TINY))
    f, _ = _diff_funcs(spec.kind, spec.param(X.shape[1]))
    return f(D)


def _entropy(q: np.ndarray, qc: np.ndarray) -> np.ndarray:
    """Binary entropy (nats) from q and its complement qc (each accurate near 1)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.where(q > 0, -q * np.log(q), 0.0)
        return h + np.where(qc > 0, -qc * np.log(qc), 0.0)


def pair_information(lapse: float, log_odds: Any, log_weights: Any, pairs: Any) -> np.ndarray:
    """Mutual information (nats) between each candidate pair's answer and the head's position.

    In float64 throughout; the native AVX2 lanes of lapse 0 run in float and agree to 2e-7.

    Parameters
    ----------
    lapse : float in [0, 1)
    log_odds : array (K, M)
        The log-odds table of :func:`log_odds`.
    log_weights : array (M,)
        The head's support points' log weights (unnormalized; -inf: impossible).
    pairs : int array (C, 2)
        Candidate pairs ``(a, b)`` as rows of ``log_odds``.

    Returns
    -------
    ndarray (C,)
    """
    _check_lapse(lapse)
    F = np.asarray(log_odds, dtype=np.float64)
    P = _check_pairs(pairs, len(F), "pairs")
    lw = np.asarray(log_weights, dtype=np.float64)
    if not np.isfinite(lw).any():
        raise ValueError("log_weights: every support point is impossible (-inf)")
    w = np.exp(lw - lw.max())
    w = w / w.sum()
    z = F[P[:, 1]] - F[P[:, 0]]  # log-odds of "a closer", (C, M)
    e = np.exp(-np.abs(z))
    big = 1.0 / (1.0 + e)
    small = e * big
    q, qc = np.where(z >= 0, big, small), np.where(z >= 0, small, big)
    if lapse > 0.0:
        q, qc = 0.5 * lapse + (1.0 - lapse) * q, 0.5 * lapse + (1.0 - lapse) * qc
    info = _entropy(q @ w, qc @ w) - _entropy(q, qc) @ w
    if np.isnan(info).any():
        raise ValueError("log_odds: contains NaN")
    return np.maximum(0.0, info)


# ---------------------------------------------------------------------- past pairs
MAX_OUTCOMES = 1 << 16
MAX_CHOICES = 64


def _check_choice_rows(rows: Any, K: int, k: int, name: str) -> np.ndarray:
    A = check_indices(np.asarray(rows, dtype=np.int64).reshape(-1, k), K, name)
    for c, row in enumerate(A.tolist()):
        twice = [v for i, v in enumerate(row) if v in row[i + 1 :]]
        if twice:
            raise ValueError(f"{name}: row {c} names row {twice[0]} twice")
    return A


def _check_choice_shape(k: int, r: int) -> None:
    if not 2 <= k <= MAX_CHOICES:
        raise ValueError(f"sets: between 2 and {MAX_CHOICES} candidates a row, got {k}")
    if not 1 <= r < k:
        raise ValueError(f"picks: between 1 and k - 1 = {k - 1}, got {r}")


def _ranked_log_prob(V: np.ndarray, order: tuple[int, ...], lapse: float) -> np.ndarray:
    """Log P of the picks ``order`` (positions of V's rows) by successive choices, (M,).

    ``V`` (k, M): the options' log weights ``-F``; each pick mixed with the lapse.
    """
    k = len(V)
    left = list(range(k))
    out = np.zeros(V.shape[1])
    for j, c in enumerate(order):
        top = V[left].max(axis=0)
        log_p = V[c] - top - np.log(np.exp(V[left] - top).sum(axis=0))
        if lapse > 0.0:
            out += np.log(lapse / (k - j) + (1.0 - lapse) * np.exp(log_p))
        else:
            out += log_p
        left.remove(c)
    return out


def choice_log_weights(
    lapse: float, log_odds: Any, answers: Any, picks: int, log_prior: Any
) -> np.ndarray:
    """:func:`table_log_weights` of ranked answers: successive choices among those left.

    Parameters
    ----------
    lapse : float in [0, 1)
        Each pick is uniform among those left with this probability.
    log_odds : array (K, M)
        The table of :func:`log_odds`: an option's log weight at each point is ``-F``.
    answers : int array (R, k)
        Rows of ``log_odds``, the ``picks`` picked first (in order), then the others.
    picks : int, 1 <= picks < k
    log_prior : array (M,)

    Returns
    -------
    ndarray (M,)
    """
    _check_lapse(lapse)
    F = np.asarray(log_odds, dtype=np.float64)
    A = np.asarray(answers, dtype=np.int64)
    k = A.shape[1] if A.ndim == 2 else 0
    _check_choice_shape(k, picks)
    A = _check_choice_rows(A, len(F), k, "answers")
    out = np.array(log_prior, dtype=np.float64)
    if np.isnan(out).any() or np.isposinf(out).any():
        raise ValueError("log_prior: contains NaN or +inf")
    for row in A:
        out += _ranked_log_prob(-F[row], tuple(range(picks)), lapse)
    if np.isnan(out).any():
        raise ValueError("log_odds: contains NaN")
    return out


def choice_information(
    lapse: float, log_odds: Any, log_weights: Any, sets: Any, picks: int
) -> np.ndarray:
    """Mutual information (nats) between the ranked answer to each set and the head's position.

    ``I = H(sum_m w_m P_m) - sum_m w_m H(P_m)`` over the ``k! / (k - picks)!`` ordered
    outcomes of ``picks`` successive choices among the set's k candidates (each mixed with
    the lapse), w normalized. k = 2, picks = 1 is :func:`pair_information`.

    Parameters
    ----------
    lapse : float in [0, 1)
    log_odds : array (K, M)
    log_weights : array (M,)
        The head's log weights (unnormalized; -inf: impossible).
    sets : int array (C, k)
        Candidate sets as rows of ``log_odds``.
    picks : int, 1 <= picks < k

    Returns
    -------
    ndarray (C,)
    """
    _check_lapse(lapse)
    F = np.asarray(log_odds, dtype=np.float64)
    S = np.asarray(sets, dtype=np.int64)
    k = S.shape[1] if S.ndim == 2 else 0
    _check_choice_shape(k, picks)
    if math.perm(k, picks) > MAX_OUTCOMES:
        raise ValueError(f"picks: {picks} ranked picks among {k} have more than {MAX_OUTCOMES}")
    S = _check_choice_rows(S, len(F), k, "sets")
    lw = np.asarray(log_weights, dtype=np.float64)
    if not np.isfinite(lw).any():
        raise ValueError("log_weights: every support point is impossible (-inf)")
    w = np.exp(lw - lw.max())
    w = w / w.sum()
    orders = list(itertools.permutations(range(k), picks))
    info = np.empty(len(S))
    for c, row in enumerate(S):
        V = -F[row]
        P = np.exp(np.stack([_ranked_log_prob(V, o, lapse) for o in orders]))  # (O, M)
        with np.errstate(divide="ignore", invalid="ignore"):
            plogp = np.where(P > 0, P * np.log(P), 0.0)
            pbar = P @ w
            hbar = np.where(pbar > 0, pbar * np.log(pbar), 0.0).sum()
        info[c] = np.nan if np.isnan(P).any() else plogp.sum(axis=0) @ w - hbar
    if np.isnan(info).any():
        raise ValueError("log_odds: contains NaN")
    return np.maximum(0.0, info)
