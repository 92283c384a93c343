"""NumPy twin of the native Monte-Carlo estimator of p_Q.

The native one: ``cpp/include/tripletsearch/theory/monte_carlo.hpp``.

Different random streams from the native sampler, so the two agree statistically, not
bitwise; tests compare them within their standard errors.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .choice import pair_prob

__all__ = ["p_correct_monte_carlo"]


class Estimate(NamedTuple):
    """A Monte-Carlo mean with its standard error."""

    mean: float
    stderr: float


def _ball_sq_norms(rng: np.random.Generator, size: int, d: int) -> np.ndarray:
    g = rng.standard_normal((size, d))
    radius = rng.random(size) ** (1.0 / d)
    x = g * (radius / np.linalg.norm(g, axis=1))[:, None]
    return np.einsum("md,md->m", x, x)


def p_correct_monte_carlo(
    gamma: float,
    d: int,
    n_samples: int = 10**6,
    *,
    random_state: Any = None,
    n_jobs: int | None = None,
) -> Estimate:
    """(mean, standard error) of the Monte-Carlo estimate of p_Q.

    Both query points uniform in the unit d-ball, the probability that gamma-CKL names the
    closer one, averaged.
    """
    rng = np.random.default_rng(random_state)
    total = total2 = 0.0
    done = 0
    while done < n_samples:
        size = min(65536, n_samples - done)
        Da = _ball_sq_norms(rng, size, d)
        Db = _ball_sq_norms(rng, size, d)
        p = pair_prob(np.minimum(Da, Db), np.maximum(Da, Db), gamma)
        total += p.sum()
        total2 += (p * p).sum()
        done += size
    mean = total / n_samples
    var = max(0.0, (total2 - n_samples * mean * mean) / max(n_samples - 1, 1))
    return Estimate(float(mean), float(np.sqrt(var / n_samples)))
