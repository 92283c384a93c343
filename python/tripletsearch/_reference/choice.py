"""NumPy twin of ``cpp/include/tripletsearch/oracle/choice.hpp``: the gamma-CKL choice maths.

The one NumPy place where the scale-free oracle's probabilities are written.

A user with target z, shown candidates at squared distances ``D_c`` from z, names candidate
c with probability ``D_c^(-gamma/2) / sum_j D_j^(-gamma/2)``. Every evaluation goes through
ratios ``s = smaller * (1 / larger) <= 1`` and the power ``s^(gamma/2)`` (repeated squaring
for an integer gamma in [1, 256], as the core does), so the twin reproduces the core's
rounding. Squared distances are floored at ``TINY`` (DBL_MIN). Exponentials and logarithms
go through the C library per element (``libm_exp``, ``libm_log``, ``libm_log1p``), as the core's
scalar code does: NumPy's vector loops (Intel SVML on AVX-512 machines) round some
results differently in the last bit, and the particle searches amplify one bit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["gamma_log_prior"]

TINY = np.finfo(np.float64).tiny  # DBL_MIN


def _c_exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def _c_log(v: float) -> float:
    return math.log(v) if v > 0.0 else (-math.inf if v == 0.0 else math.nan)


def _c_log1p(v: float) -> float:
    return math.log1p(v) if v > -1.0 else (-math.inf if v == -1.0 else math.nan)


_EXP, _LOG, _LOG1P = (np.frompyfunc(f, 1, 1) for f in (_c_exp, _c_log, _c_log1p))


def libm_exp(x: Any) -> np.ndarray:
    """e^x per element by the C library's exp (std::exp in the core): the same rounding."""
    return np.asarray(_EXP(np.asarray(x, dtype=np.float64)), dtype=np.float64)


def libm_log(x: Any) -> np.ndarray:
    """log(x) per element by the C library (log(0) = -inf, negative: NaN)."""
    return np.asarray(_LOG(np.asarray(x, dtype=np.float64)), dtype=np.float64)


def libm_log1p(x: Any) -> np.ndarray:
    """log(1 + x) per element by the C library (x = -1: -inf)."""
    return np.asarray(_LOG1P(np.asarray(x, dtype=np.float64)), dtype=np.float64)


def integer_gamma(gamma: float) -> int:
    """Gamma as an integer in [1, 256], or -1 (the power then goes through exp and log)."""
    return int(gamma) if (gamma == math.floor(gamma) and 1.0 <= gamma <= 256.0) else -1


def gamma_power(s: Any, gamma: float) -> np.ndarray:
    """s^(gamma/2) for s in [0, 1], with the core's arithmetic."""
    s = np.asarray(s, dtype=np.float64)
    g = integer_gamma(gamma)
    if g < 0:
        return libm_exp(0.5 * gamma * libm_log(s))
    pw = np.sqrt(s) if g & 1 else np.ones_like(s)
    base = s.copy()
    e = g >> 1
    while e > 0:
        if e & 1:
            pw = pw * base
        base = base * base
        e >>= 1
    return pw


def pair_ratio(Da: Any, Db: Any) -> tuple[np.ndarray, np.ndarray]:
    """(s, a_closer): s = min / max of the floored distances, a_closer = Da <= Db."""
    Da = np.maximum(np.asarray(Da, dtype=np.float64), TINY)
    Db = np.maximum(np.asarray(Db, dtype=np.float64), TINY)
    return np.minimum(Da, Db) * (1.0 / np.maximum(Da, Db)), Da <= Db


def pair_prob(Da: Any, Db: Any, gamma: float) -> np.ndarray:
    """P(a named closer | squared distances Da, Db to the target)."""
    s, a_closer = pair_ratio(Da, Db)
    pw = gamma_power(s, gamma)
    return np.where(a_closer, 1.0, pw) * (1.0 / (1.0 + pw))


def pair_log_prob(Da: Any, Db: Any, gamma: float) -> np.ndarray:
    """Log P(a named closer), accurate to relative precision."""
    s, a_closer = pair_ratio(Da, Db)
    pw = gamma_power(s, gamma)
    return np.where(a_closer, -libm_log1p(pw), 0.5 * gamma * libm_log(s) - libm_log1p(pw))


def log_odds(Da: Any, Db: Any, gamma: float) -> np.ndarray:
    """log(P(a named) / P(b named)) = (gamma/2) log(Db / Da), distances floored."""
    s, a_closer = pair_ratio(Da, Db)
    z = 0.5 * gamma * libm_log(s)
    return np.where(a_closer, -z, z)


def choice_probs(D: Any, gamma: float) -> np.ndarray:
    """P(candidate c named) for squared distances D (..., k) of k candidates."""
    D = np.maximum(np.asarray(D, dtype=np.float64), TINY)
    pw = gamma_power(D.min(axis=-1, keepdims=True) * (1.0 / D), gamma)
    return pw * (1.0 / pw.sum(axis=-1, keepdims=True))


def choice_likelihood(D: Any, chosen: int, gamma: float) -> np.ndarray:
    """P(candidate `chosen` named | target) for many targets (the database posterior's update).

    D (k, n): squared distances of the k candidates to n targets.
    """
    D = np.asarray(D, dtype=np.float64)
    if D.shape[0] == 2:
        return pair_prob(D[chosen], D[1 - chosen], gamma)
    D = np.maximum(D, TINY)
    pw = gamma_power(D.min(axis=0) * (1.0 / D), gamma)
    return pw[chosen] * (1.0 / pw.sum(axis=0))


def relative_weights(dmin: Any, D: Any, gamma: float) -> np.ndarray:
    """Choice weight of each candidate relative to the closest one, for each target.

    ``(dmin / D)^(gamma/2)`` with D floored; dmin: the closest candidate's.
    """
    return gamma_power(dmin * (1.0 / np.maximum(D, TINY)), gamma)


class PairAnswerModel:
    """gamma-CKL answers to pair queries with a lapse rate.

    P(a named) = lapse / 2 + (1 - lapse) p.
    """

    def __init__(self, gamma: float, lapse: float):
        self.gamma, self.lapse = gamma, lapse

    def prob(self, Da: Any, Db: Any) -> np.ndarray:
        return 0.5 * self.lapse + (1.0 - self.lapse) * pair_prob(Da, Db, self.gamma)

    def log_prob_of(self, Da: Any, Db: Any, a_named: bool) -> np.ndarray:
        """Log P(the answer given), "a" when a_named."""
        if self.lapse > 0:
            p = self.prob(Da, Db)
            return libm_log(p if a_named else 1.0 - p)
        return pair_log_prob(Da, Db, self.gamma) if a_named else pair_log_prob(Db, Da, self.gamma)


# ---------------------------------------------------------------------- the inferred user
# (oracle/user_grid.hpp): gamma and lapse grids, their priors, powers by square roots.

GAMMA_GRID = np.array([0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0])
LAPSE_GRID = np.array([0.0, 0.02, 0.05, 0.1, 0.2, 0.3])
GAMMA_PRIOR_RANGE, GAMMA_KNEE = (0.5, 32.0), 4.0


def grid_power(j: Any, s: Any) -> np.ndarray:
    """s^(GAMMA_GRID[j] / 2): s^(1/4) (even j) or s^(3/8) (odd j), squared j // 2 times."""
    j = np.asarray(j)
    s = np.asarray(s, dtype=np.float64)
    h = np.sqrt(s)
    q = np.sqrt(h)
    p = np.where(j & 1, np.sqrt(h * q), q)
    for e in range(int(np.max(j)) >> 1 if j.size else 0):
        p = np.where(e < (j >> 1), p * p, p)
    return p


def gamma_log_prior(j: int) -> float:
    """Log prior mass of GAMMA_GRID[j], up to a constant.

    The integral over the value's cell (borders at geometric midpoints) of the density 1/gamma
    on [0.5, K] and K^2/gamma^3 on [K, 32], K = GAMMA_KNEE.
    """
    g, K = GAMMA_GRID, GAMMA_KNEE
    lo = GAMMA_PRIOR_RANGE[0] if j == 0 else math.sqrt(g[j - 1] * g[j])
    hi = GAMMA_PRIOR_RANGE[1] if j == len(g) - 1 else math.sqrt(g[j] * g[j + 1])
    mass = 0.0
    if lo < K:
        mass += math.log(min(hi, K) / lo)
    if hi > K:
        a = max(lo, K)
        mass += 0.5 * K * K * (1.0 / (a * a) - 1.0 / (hi * hi))
    return math.log(mass)


class UserModel:
    """The pair-answer model of a particle search.

    Fixed (``PairAnswerModel``) or, with gamma and/or lapse inferred, per hypothesis (g, l)
    (grid indices, arrays).
    """

    def __init__(self, gamma: float, lapse: float, gamma_auto: bool, lapse_auto: bool):
        self.fixed = PairAnswerModel(gamma, lapse)
        self.gamma_auto, self.lapse_auto = gamma_auto, lapse_auto
        self.inferred = gamma_auto or lapse_auto

    def _lapse(self, li: Any) -> Any:
        return LAPSE_GRID[li] if self.lapse_auto else self.fixed.lapse

    def _prob_a(self, g: Any, Da: Any, Db: Any) -> np.ndarray:
        if not self.gamma_auto:
            return pair_prob(Da, Db, self.fixed.gamma)
        s, a_closer = pair_ratio(Da, Db)
        pw = grid_power(g, s)
        return np.where(a_closer, 1.0, pw) * (1.0 / (1.0 + pw))

    def prob(self, g: Any, li: Any, Da: Any, Db: Any) -> np.ndarray:
        if not self.inferred:
            return self.fixed.prob(Da, Db)
        lapse = self._lapse(li)
        return 0.5 * lapse + (1.0 - lapse) * self._prob_a(g, Da, Db)

    def log_prob_of(self, g: Any, li: Any, Da: Any, Db: Any, a_named: bool) -> np.ndarray:
        if not self.inferred:
            return self.fixed.log_prob_of(Da, Db, a_named)
        lapse = np.broadcast_to(self._lapse(li), np.shape(Da))
        p = self.prob(g, li, Da, Db)
        lp_lapse = libm_log(p if a_named else 1.0 - p)
        if not self.gamma_auto:
            lp0 = self.fixed.log_prob_of(Da, Db, a_named)
        else:  # no lapse: log P to relative precision, as pair_log_prob
            s, named_closer = pair_ratio(*((Da, Db) if a_named else (Db, Da)))
            pw = grid_power(g, s)
            far = 0.5 * GAMMA_GRID[np.maximum(g, 0)] * libm_log(s)
            lp0 = np.where(named_closer, -libm_log1p(pw), far - libm_log1p(pw))
        return np.where(lapse > 0.0, lp_lapse, lp0)
