"""Theory tools: the oracle accuracy p_Q of Theorem 2.1 and the linear gamma-d law.

For a target at the centre of the unit d-ball and two query points uniform in the ball,
p_Q is the probability that the gamma-CKL oracle names the closer point. With
``u = r^d`` uniform on (0, 1), p_Q depends on ``k = gamma / d`` only::

    p_Q(k) = integral_0^1 dv / (1 + v^k)
           = (1 / (2k)) * (digamma((1/k + 1) / 2) - digamma(1 / (2k))),

which increases from 1/2 (k -> 0, ``p_Q ~ 1/2 + k/4``) to 1 (k -> inf). So holding p_Q
fixed while d grows requires gamma = k(p_Q) * d exactly: the paper's linear gamma-d law.
Three independent evaluations are provided: the digamma closed form, the paper's
double integral over the two radii by quadrature, and a native Monte-Carlo estimator.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any, NamedTuple

import numpy as np

from ._deprecation import renamed
from ._reference.choice import pair_prob  # the one NumPy gamma-CKL probability
from ._validation import check_int, check_positive, check_real, resolve_n_jobs, seed_from

__all__ = [
    "p_correct",
    "p_correct_monte_carlo",
    "calibrate_gamma",
    "MonteCarloEstimate",
    "uncertainty_radius",
    "hypothesis_test_probs",
    "binomial_test_plan",
    "per_test_delta",
]

_METHODS = ("digamma", "quadrature", "monte-carlo")


def _digamma(x: float) -> float:
    """Digamma function for x > 0: recurrence up to x >= 8, then the asymptotic series."""
    acc = 0.0
    while x < 8.0:
        acc -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series = inv2 * (
        1.0 / 12
        - inv2
        * (
            1.0 / 120
            - inv2 * (1.0 / 252 - inv2 * (1.0 / 240 - inv2 * (1.0 / 132 - inv2 * 691.0 / 32760)))
        )
    )
    return acc + math.log(x) - 0.5 / x - series


def _p_correct_k(k: float) -> float:
    """p_Q as a function of k = gamma / d (closed form, series for small k)."""
    if k < 0.01:
        # 1/(1 + e^y) = 1/2 - tanh(y/2)/2 with y = k log v and int_0^1 (log v)^m = (-1)^m m!
        k2 = k * k
        return 0.5 + k * (0.25 - k2 * (0.125 - k2 * (0.25 - k2 * (17.0 / 16 - k2 * 7.75))))
    x = 0.5 / k
    return x * (_digamma(x + 0.5) - _digamma(x))


def _gauss_legendre_panels(breaks: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of composite Gauss-Legendre rules; breaks has shape (..., P + 1)."""
    x, w = np.polynomial.legendre.leggauss(order)
    lo, hi = breaks[..., :-1, None], breaks[..., 1:, None]
    half = 0.5 * (hi - lo)
    nodes = (lo + half * (x + 1.0)).reshape(*breaks.shape[:-1], -1)
    weights = (half * w).reshape(*breaks.shape[:-1], -1)
    return nodes, weights


def _p_correct_quadrature(gamma: float, d: int, order: int = 16, levels: int = 48) -> float:
    """The paper's double integral (Appendix, proof of Theorem 2.1) over the radii r1, r2.

    p_Q = int_0^1 int_{r1}^1 r2^g / (r1^g + r2^g) d^2 r1^(d-1) r2^(d-1) dr2 dr1
        + int_0^1 int_0^{r1} r1^g / (r1^g + r2^g) d^2 r1^(d-1) r2^(d-1) dr2 dr1.

    Composite Gauss-Legendre panels graded geometrically towards both ends of each
    interval: r = 1 (where the radial density concentrates for large d), r = 0 (where
    the integrand behaves like a power r^gamma) and the diagonal r2 = r1 (where the
    ratio switches over a width ~ r / gamma).
    """
    grade = 2.0 ** -np.arange(1, levels + 1)  # 1/2, 1/4, ...
    frac = np.unique(np.concatenate(([0.0, 1.0], grade, 1.0 - grade)))  # graded at 0 and 1
    r1, w1 = _gauss_legendre_panels(frac, order)

    def closer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """P(the point at radius a is named) = b^g / (a^g + b^g), squared distances a^2, b^2."""
        return pair_prob(a * a, b * b, gamma)

    total = 0.0
    # first term: r2 in [r1, 1], panels graded towards r2 = r1
    inner = r1[:, None] + (1.0 - r1[:, None]) * frac[None, :]
    r2, w2 = _gauss_legendre_panels(inner, order)
    f = closer(r1[:, None], r2) * r2 ** (d - 1)
    total += np.sum(w1 * d * d * r1 ** (d - 1) * np.sum(w2 * f, axis=1))
    # second term: r2 in [0, r1], panels graded towards r2 = r1
    inner = r1[:, None] * frac[None, :]
    r2, w2 = _gauss_legendre_panels(inner, order)
    f = closer(r2, r1[:, None]) * r2 ** (d - 1)
    total += np.sum(w1 * d * d * r1 ** (d - 1) * np.sum(w2 * f, axis=1))
    return float(total)


class MonteCarloEstimate(NamedTuple):
    """A Monte-Carlo mean with its standard error."""

    mean: float
    stderr: float


@renamed(d="dim")
def p_correct_monte_carlo(
    dim: int,
    gamma: float,
    n_samples: int = 10**6,
    *,
    random_state: Any = None,
    n_jobs: int | None = None,
) -> MonteCarloEstimate:
    """Native Monte-Carlo estimate of p_Q, reproducible for a seed whatever ``n_jobs``.

    Both query points drawn uniformly in the unit d-ball (Gaussian direction, radius
    U^(1/d)), the gamma-CKL probability of naming the closer one averaged.

    Returns
    -------
    MonteCarloEstimate
        ``(mean, stderr)``.
    """
    from . import _core

    mean, se = _core.p_correct_monte_carlo(
        check_real(gamma, "gamma"),  # the core checks the ranges
        check_int(dim, "dim"),
        check_int(n_samples, "n_samples"),
        seed_from(random_state),
        resolve_n_jobs(n_jobs),
    )
    return MonteCarloEstimate(mean, se)


@renamed(d="dim")
def p_correct(
    dim: int,
    gamma: float,
    *,
    method: str = "digamma",
    n_samples: int = 10**6,
    random_state: Any = None,
    n_jobs: int | None = None,
) -> float:
    """Probability p_Q that gamma-CKL answers a random query correctly (Theorem 2.1).

    Parameters
    ----------
    dim : int >= 1
        Dimension d.
    gamma : float > 0
    method : {"digamma", "quadrature", "monte-carlo"}
        ``"digamma"`` (exact closed form, default), ``"quadrature"`` (the paper's double
        integral over the two radii) or ``"monte-carlo"`` (native sampler,
        ``n_samples`` draws; see :func:`p_correct_monte_carlo` for the standard error).

    Returns
    -------
    float in [1/2, 1)

    Examples
    --------
    >>> round(p_correct(2, 2.0), 6)  # gamma = d: log 2
    0.693147
    """
    if method == "monte-carlo":  # validated by the native sampler
        return p_correct_monte_carlo(
            dim, gamma, n_samples, random_state=random_state, n_jobs=n_jobs
        ).mean
    gamma = check_positive(gamma, "gamma")
    d = check_int(dim, "dim", minimum=1)
    if method == "digamma":
        return _p_correct_k(gamma / d)
    if method == "quadrature":
        return _p_correct_quadrature(gamma, d)
    raise ValueError(f"method: expected one of {_METHODS}, got {method!r}")


@renamed(d="dim")
def calibrate_gamma(dim: int, p: float) -> float:
    """The gamma whose p_Q in dimension ``dim`` equals ``p``.

    Since p_Q depends on gamma / d only, the answer is ``k(p) * d``: exactly linear in d.

    Parameters
    ----------
    dim : int >= 1
    p : float in (1/2, 1)

    Returns
    -------
    float
    """
    d = check_int(dim, "dim", minimum=1)
    p = check_positive(p, "p")
    if not 0.5 < p < 1.0:
        raise ValueError(f"p: must lie in (0.5, 1), got {p}")
    lo, hi = -40.0, 40.0  # bracket in log k
    if not (_p_correct_k(math.exp(lo)) < p < _p_correct_k(math.exp(hi))):
        raise ValueError(f"p: {p} is too close to 1/2 or 1 to calibrate in double precision")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _p_correct_k(math.exp(mid)) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15:
            break
    return math.exp(0.5 * (lo + hi)) * d


# ---------------------------------------------------------------------- Lemma 3.x


@renamed(d="dim")
def uncertainty_radius(dim: int) -> float:
    """r_u of the hypothesis-test lemma: 1 + (d + sqrt(d^3 + d^2 - d)) / (d - 1).

    For a region of edge 2 centred at 0 and the query (0, (1 + d) e), every target outside
    the ball of radius r_u prefers 0 less often than any target inside the region. The
    lemma assumes d > 1 (for d = 1 the radius is unbounded: no single query separates).
    """
    d = check_int(dim, "dim", minimum=1)
    if d < 2:
        raise ValueError("dim: the hypothesis-test lemma assumes d > 1 (d = 1 has no finite r_u)")
    return 1.0 + (d + math.sqrt(d**3 + d**2 - d)) / (d - 1)


@renamed(d="dim")
def hypothesis_test_probs(dim: int, gamma: float, lapse: float = 0.0) -> tuple[float, float]:
    """(p_X, p_F): the probability that the query's inside point 0 is preferred to x_q.

    x_q = (1 + d) e; p_X at the worst target inside the region (the corner 1), p_F at the
    best target of the far set F (at distance r_u on the axis, behind 0).

    With a lapse rate, answers are random with probability ``lapse``: p -> lapse/2 +
    (1 - lapse) p.
    """
    gamma = check_positive(gamma, "gamma")
    d = check_int(dim, "dim", minimum=1)
    ru = uncertainty_radius(d)
    lapse = check_real(lapse, "lapse")
    if not 0.0 <= lapse < 1.0:
        raise ValueError(f"lapse: must lie in [0, 1), got {lapse}")
    # corner: D_0 = d, D_q = d^2 + d - 1;   far point: D_0 = r_u^2, D_q = (1 + d + r_u)^2
    p_x = float(pair_prob(d, d * d + d - 1.0, gamma))
    p_f = float(pair_prob(ru * ru, (1.0 + d + ru) ** 2, gamma))
    return lapse / 2 + (1 - lapse) * p_x, lapse / 2 + (1 - lapse) * p_f


def _plan_for(n: int, p_x: float, p_f: float, delta: float) -> int | None:
    """The threshold tau of a test with n repetitions, or None when none separates.

    The smallest tau with P_F(X >= tau) <= delta (binary search; the tails are exact sums from
    the threshold outward, O(sqrt n) terms), accepted when P_X(X <= tau - 1) <= delta.
    """
    from . import _core

    tail = _core.binomial_upper_tail
    if tail(n, p_f, n) > delta:
        return None
    lo, hi = 0, n  # tail(lo) > delta >= tail(hi), or lo == 0 is fine already
    if tail(n, p_f, 0) <= delta:
        hi = 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if tail(n, p_f, mid) <= delta:
            hi = mid
        else:
            lo = mid
    tau = hi
    false_reject = 1.0 - tail(n, p_x, tau) if tau > 0 else 0.0
    return tau if false_reject <= delta else None


_MAX_REPETITIONS = 2**26


def binomial_test_plan(p_x: float, p_f: float, delta: float) -> tuple[int, int]:
    """The smallest number of repetitions n_obs and the threshold tau of Algorithm 2's test.

    The one-tailed binomial test of Algorithm 2: accept (H) "the target is in the cell" when
    the inside point wins at least tau of n_obs answers.

    Guarantees P(reject | p >= p_X) <= delta and P(accept | p <= p_F) <= delta.

    Returns
    -------
    (n_obs, tau)
    """
    for name, v in (("p_x", p_x), ("p_f", p_f), ("delta", delta)):
        check_positive(v, name)
    if not 0.0 < p_f < p_x < 1.0:
        raise ValueError(f"p_x, p_f: need 0 < p_f < p_x < 1, got p_x={p_x}, p_f={p_f}")
    if not 0.0 < delta < 0.5:
        raise ValueError(f"delta: must lie in (0, 0.5), got {delta}")
    # the normal approximation of the repetitions needed: refuse at once what the exact
    # search below could only refuse after minutes and gigabytes
    z = NormalDist().inv_cdf(1.0 - delta)
    approx = (z * (math.sqrt(p_x * (1 - p_x)) + math.sqrt(p_f * (1 - p_f))) / (p_x - p_f)) ** 2
    if approx > _MAX_REPETITIONS:
        raise ValueError(
            f"p_x, p_f: telling {p_x} from {p_f} at error {delta:.3g} takes about "
            f"{approx:.3g} repetitions per test, beyond {_MAX_REPETITIONS}"
        )
    hi = 1
    while _plan_for(hi, p_x, p_f, delta) is None:
        hi *= 2
        if hi > 2 * _MAX_REPETITIONS:
            raise ValueError(f"delta: the test needs more than {_MAX_REPETITIONS} repetitions")
    lo = hi // 2  # infeasible (or 0)
    while hi - lo > 1:  # feasibility is monotone up to the discreteness of the tails
        mid = (lo + hi) // 2
        if _plan_for(mid, p_x, p_f, delta) is None:
            lo = mid
        else:
            hi = mid
    n = hi
    while n > 1 and _plan_for(n - 1, p_x, p_f, delta) is not None:
        n -= 1
    tau = _plan_for(n, p_x, p_f, delta)
    assert tau is not None  # n is feasible: hi only ever takes feasible values
    return n, tau


def per_test_delta(delta_hat: float, n_tests: int) -> float:
    """Delta with (1 - delta)^K = 1 - delta_hat: each of K tests may err with delta."""
    return -math.expm1(math.log1p(-delta_hat) / n_tests)
