"""NumPy twin of the native Monte-Carlo estimator of p_Q (cpp/include/tripletsearch/theory.hpp).

Different random streams from the native sampler, so the two agree statistically, not
bitwise; tests compare them within their standard errors.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_int, check_positive, check_random_state
from ..theory import MonteCarloEstimate


def _ball_sq_norms(rng: np.random.Generator, size: int, d: int) -> np.ndarray:
    g = rng.standard_normal((size, d))
    radius = rng.random(size) ** (1.0 / d)
    x = g * (radius / np.linalg.norm(g, axis=1))[:, None]
    return np.einsum("md,md->m", x, x)


def p_correct_monte_carlo(
    gamma: float, d: int, n_samples: int = 10**6, *, random_state=None, n_jobs=None
) -> MonteCarloEstimate:
    """Same estimator as :func:`tripletsearch.theory.p_correct_monte_carlo`, in NumPy."""
    gamma = check_positive(gamma, "gamma")
    d = check_int(d, "d", minimum=1)
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    rng = check_random_state(random_state)
    total = total2 = 0.0
    done = 0
    while done < n_samples:
        size = min(65536, n_samples - done)
        Da = np.maximum(_ball_sq_norms(rng, size, d), np.finfo(float).tiny)
        Db = np.maximum(_ball_sq_norms(rng, size, d), np.finfo(float).tiny)
        z = 0.5 * gamma * np.abs(np.log(Da) - np.log(Db))
        p = np.exp(-np.logaddexp(0.0, -z))
        total += p.sum()
        total2 += (p * p).sum()
        done += size
    mean = total / n_samples
    var = max(0.0, (total2 - n_samples * mean * mean) / max(n_samples - 1, 1))
    return MonteCarloEstimate(mean, float(np.sqrt(var / n_samples)))
