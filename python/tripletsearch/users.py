"""The gamma-CKL power and lapse rate of recorded choices, by maximum likelihood.

How reliable are people? A person looking for target ``t`` among shown items ``S`` picks
``c`` with probability::

    P(c | t, S) = (1 - lapse) * D_c^(-gamma/2) / sum_{s in S} D_s^(-gamma/2) + lapse / |S|

(D: squared distances to the target in the embedding): the k-alternative gamma-CKL choice
model of the paper's database search, with a lapse rate (a pick at random). The fit
maximizes the log-likelihood over (gamma, lapse) on nested grids and reports profile-
likelihood confidence intervals (the set where the profile log-likelihood is within
chi2_1(level) / 2 of its maximum), so a study can plan with measured values instead of
gamma = 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._deprecation import renamed, warn_renamed
from ._validation import check_X
from .outcomes import is_comparison

__all__ = ["fit_choice_model", "ChoiceModelFit", "choice_log_likelihood"]

_CHI2_1 = {0.9: 2.705543454095404, 0.95: 3.841458820694124, 0.99: 6.634896601021214}


@dataclass(frozen=True)
class ChoiceModelFit:
    """Result of :func:`fit_choice_model`.

    Attributes
    ----------
    gamma, lapse : float
        Maximum-likelihood estimates.
    gamma_interval, lapse_interval : (float, float)
        Profile-likelihood confidence intervals at ``level`` (an end at the search range's
        bound means "at least" / "at most" that).
    log_likelihood : float
        At the estimate.
    n_answers : int
        Recorded choices used (those where the target was not among the shown items).
        ``n_choices`` is its old name (deprecated: in the vocabulary ``n_choices`` is the
        items per screen).
    level : float
    """

    gamma: float
    lapse: float
    gamma_interval: tuple[float, float]
    lapse_interval: tuple[float, float]
    log_likelihood: float
    n_answers: int
    level: float

    @property
    def n_choices(self) -> int:
        """Deprecated spelling of :attr:`n_answers` (removed in 0.3.0)."""
        warn_renamed("ChoiceModelFit", "n_choices", "n_answers", stacklevel=3)
        return self.n_answers

    @property
    def gamma_ci(self) -> tuple[float, float]:
        """Deprecated spelling of :attr:`gamma_interval` (removed in 0.3.0)."""
        warn_renamed("ChoiceModelFit", "gamma_ci", "gamma_interval", stacklevel=3)
        return self.gamma_interval

    @property
    def lapse_ci(self) -> tuple[float, float]:
        """Deprecated spelling of :attr:`lapse_interval` (removed in 0.3.0)."""
        warn_renamed("ChoiceModelFit", "lapse_ci", "lapse_interval", stacklevel=3)
        return self.lapse_interval

    def __str__(self) -> str:
        return (
            f"gamma = {self.gamma:.2f} "
            f"[{self.gamma_interval[0]:.2f}, {self.gamma_interval[1]:.2f}], "
            f"lapse = {self.lapse:.3f} "
            f"[{self.lapse_interval[0]:.3f}, {self.lapse_interval[1]:.3f}] "
            f"({self.level:.0%} profile-likelihood intervals, {self.n_answers} choices)"
        )


def _log_distances(X: np.ndarray, heads: np.ndarray, shown: np.ndarray) -> np.ndarray:
    """Log D (squared distances from each head to its shown items), (m, k)."""
    diff = X[shown] - X[heads][:, None, :]
    D = np.einsum("mkd,mkd->mk", diff, diff)
    return np.log(np.maximum(D, np.finfo(float).tiny))


def _logp(logD: np.ndarray, pos: np.ndarray, gamma: float) -> np.ndarray:
    """Log P(chosen) without lapses, (m,): log-sum-exp over the shown items."""
    a = -0.5 * gamma * logD
    a = a - a.max(axis=1, keepdims=True)
    return a[np.arange(len(pos)), pos] - np.log(np.exp(a).sum(axis=1))


def _with_lapses(logp: np.ndarray, lapses: np.ndarray, k: int) -> np.ndarray:
    """Sum over choices of log((1 - lapse) p + lapse / k), one per lapse rate."""
    lam = np.asarray(lapses, dtype=float)[:, None]
    with np.errstate(divide="ignore"):
        mixed = np.logaddexp(np.log1p(-lam) + logp[None, :], np.log(lam / k))
    return mixed.sum(axis=1)


def _loglik(logD: np.ndarray, pos: np.ndarray, gamma: float, lapse: float) -> float:
    return float(_with_lapses(_logp(logD, pos, gamma), np.array([lapse]), logD.shape[1])[0])


@renamed(choice="item", chosen="item")
def choice_log_likelihood(
    X: Any, heads: Any, shown: Any, item: Any, gamma: float, lapse: float = 0.0
) -> float:
    """Log-likelihood of recorded choices (see the module docstring)."""
    X, H, S, pos = _prepare(X, heads, shown, item)
    return _loglik(_log_distances(X, H, S), pos, float(gamma), float(lapse))


def _prepare(X: Any, heads: Any, shown: Any, item: Any) -> tuple[np.ndarray, ...]:
    X = check_X(X)
    H = np.asarray(heads)
    S = np.asarray(shown)
    C = np.asarray(item)
    for name, a, nd in (("heads", H, 1), ("shown", S, 2), ("item", C, 1)):
        if a.dtype == bool or not np.issubdtype(a.dtype, np.integer) or a.ndim != nd:
            raise TypeError(f"{name}: expected a {nd}-d integer array, got {a.dtype} {a.shape}")
    if not (len(H) == len(S) == len(C)):
        raise ValueError(f"heads, shown, item: lengths differ ({len(H)}, {len(S)}, {len(C)})")
    if S.shape[1] < 2:
        raise ValueError("shown: at least 2 items per choice")
    n = X.shape[0]
    for name, a in (("heads", H), ("shown", S), ("item", C)):
        if a.size and (a.min() < 0 or a.max() >= n):
            raise ValueError(f"{name}: item ids must lie in 0..{n - 1}")
    hit = S == C[:, None]
    if not hit.any(axis=1).all():
        bad = int(np.argmin(hit.any(axis=1)))
        raise ValueError(f"item: row {bad} picks {C[bad]}, which was not shown")
    keep = is_comparison(H, S)  # the target on screen: not a comparison
    return X, H[keep], S[keep], np.argmax(hit[keep], axis=1)


@renamed(choice="item", chosen="item")
def fit_choice_model(
    X: Any,
    heads: Any,
    shown: Any,
    item: Any,
    *,
    gamma_range: tuple[float, float] = (0.05, 60.0),
    max_lapse: float = 0.5,
    level: float = 0.95,
) -> ChoiceModelFit:
    """Fit gamma and the lapse rate to recorded k-item choices.

    Parameters
    ----------
    X : array_like (n, d)
        The embedding the people are assumed to perceive.
    heads : array_like of int (m,)
        Each choice's target.
    shown : array_like of int (m, k)
        The items shown (rows that show the target are left out).
    item : array_like of int (m,)
        The item picked (an item index), one of its row of ``shown`` (the name of
        :meth:`DiscreteSearch.tell`'s argument).
    gamma_range : (float, float)
        Where gamma is searched.
    max_lapse : float
        The lapse rate is searched in [0, max_lapse].
    level : {0.9, 0.95, 0.99}
        Confidence level of the intervals.

    Returns
    -------
    ChoiceModelFit
    """
    if level not in _CHI2_1:
        raise ValueError(f"level: expected one of {sorted(_CHI2_1)}, got {level!r}")
    lo, hi = (float(v) for v in gamma_range)
    if not 0 < lo < hi:
        raise ValueError(f"gamma_range: need 0 < low < high, got {gamma_range!r}")
    if not 0 <= max_lapse < 1:
        raise ValueError(f"max_lapse: must lie in [0, 1), got {max_lapse!r}")
    X, H, S, pos = _prepare(X, heads, shown, item)
    if len(H) == 0:
        raise ValueError("item: no choice without the target on screen to fit")
    logD = _log_distances(X, H, S)
    # the profile over a fine grid: log gamma x lapse (both ends included)
    gammas = np.exp(np.linspace(math.log(lo), math.log(hi), 241))
    lapses = np.linspace(0.0, max_lapse, 101)
    k = logD.shape[1]
    L = np.array([_with_lapses(_logp(logD, pos, g), lapses, k) for g in gammas])
    gi, li = np.unravel_index(int(np.argmax(L)), L.shape)
    # refine around the best cell
    g_fine = np.exp(
        np.linspace(
            math.log(gammas[max(gi - 1, 0)]), math.log(gammas[min(gi + 1, len(gammas) - 1)]), 41
        )
    )
    l_fine = np.linspace(lapses[max(li - 1, 0)], lapses[min(li + 1, len(lapses) - 1)], 41)
    F = np.array([_with_lapses(_logp(logD, pos, g), l_fine, k) for g in g_fine])
    fi, fj = np.unravel_index(int(np.argmax(F)), F.shape)
    best = float(F[fi, fj])
    cut = best - 0.5 * _CHI2_1[level]
    g_profile, l_profile = L.max(axis=1), L.max(axis=0)
    g_in, l_in = gammas[g_profile >= cut], lapses[l_profile >= cut]
    g_hat, l_hat = float(g_fine[fi]), float(l_fine[fj])
    return ChoiceModelFit(
        gamma=g_hat,
        lapse=l_hat,
        gamma_interval=(
            min(float(g_in.min(initial=g_hat)), g_hat),
            max(float(g_in.max(initial=g_hat)), g_hat),
        ),
        lapse_interval=(
            min(float(l_in.min(initial=l_hat)), l_hat),
            max(float(l_in.max(initial=l_hat)), l_hat),
        ),
        log_likelihood=best,
        n_answers=int(len(H)),
        level=level,
    )
