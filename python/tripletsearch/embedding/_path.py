"""The gamma path: gamma-CKL's gamma chosen by the likelihood of held-out rows.

:func:`gamma_path` fits an embedding at each gamma of a path, each fit starting from its
neighbour's embedding, and scores it on held-out rows (as scikit-learn's ``lasso_path``
walks the alphas ``LassoCV`` chooses from). :class:`~tripletsearch.Embedding` walks it for
``gamma="auto"`` and ``learn_gamma``.

This module holds the walk as a function of arrays and parameters
(:func:`path_arguments`, :func:`walk_gamma_path`; the trainer is a parameter); it knows no
estimator. :func:`gamma_path`, which reads an estimator's settings, is defined beside
:class:`~tripletsearch.Embedding`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .._progress import Progress
from .._validation import check_random_state, check_triplet_rows, check_X, seed_from
from ..oracles import GammaCKL
from ..outcomes import triplet_accuracy

__all__ = [
    "GammaPath",
    "GammaAtEdgeWarning",
    "gamma_grid",
    "sqrt2_steps",
    "path_arguments",
    "walk_gamma_path",
    "Trainer",
]

# one fit at a fixed gamma: (oracle, start, rows, options, seed) -> the fitted embedding
Trainer = Callable[[GammaCKL, np.ndarray, np.ndarray, dict, int], np.ndarray]

PATH_START = 4.0  # the path starts at the grid's gamma closest to this
_PATH_TOL = 1e-5  # the tolerance of the path's fits (a final fit uses its own ``tol``)
_GAMMA_RANGE = (1e-2, 1e3)  # learn_gamma's search interval
_REFINE_FITS = 6  # refine: at most this many fits after the bracketing walk
_REFINE_RTOL = 0.02  # refine stops when the next gamma is this close to a fitted one


def gamma_grid(gammas: list[float] | None) -> np.ndarray:
    """The increasing path of checked ``gammas``: sorted, or 11 values from 1 to 32 (None)."""
    if gammas is None:
        return np.sqrt(2.0) ** np.arange(11)  # 1 ... 32
    return np.unique(np.asarray(gammas, dtype=np.float64))


def sqrt2_steps(gamma: float) -> np.ndarray:
    """Steps of sqrt(2) around ``gamma`` over learn_gamma's search interval (1e-2 to 1e3)."""
    lo, hi = (math.log(v / gamma) / math.log(math.sqrt(2.0)) for v in _GAMMA_RANGE)
    return gamma * np.sqrt(2.0) ** np.arange(math.ceil(lo), math.floor(hi) + 1)


@dataclass(frozen=True)
class GammaPath:
    """Result of :func:`gamma_path`.

    Attributes
    ----------
    gamma : float
        The chosen gamma.
    embedding : ndarray (n_items, dim)
        The fit at the fitted gamma nearest the chosen one (where a refit at it starts).
    gammas : ndarray
        Every gamma fitted, increasing.
    val_nll, val_accuracy : ndarray
        Mean negative log-likelihood and accuracy (an exact tie counting 1/2,
        :func:`~tripletsearch.outcomes.triplet_accuracy`) of the held-out rows, per gamma.
    embeddings : list of ndarray
        The fit at each gamma.
    """

    gamma: float
    embedding: np.ndarray
    gammas: np.ndarray
    val_nll: np.ndarray
    val_accuracy: np.ndarray
    embeddings: list

    def curve(self) -> dict[str, np.ndarray]:
        """``{"gamma", "val_nll", "val_accuracy"}``: :attr:`Embedding.gamma_path_`."""
        return {"gamma": self.gammas, "val_nll": self.val_nll, "val_accuracy": self.val_accuracy}


def _parabola_vertex(
    fits: dict[float, tuple[np.ndarray, float, float]], best: float, limit: float
) -> float:
    """The minimum of the parabola in log gamma through ``best`` and its fitted neighbours.

    ``fits`` maps gamma to (embedding, held-out NLL, accuracy). The vertex stays within
    ``limit`` times the distance to the nearer neighbour; ``best`` itself when it is at an
    end of the fitted gammas or the three points do not curve upwards.
    """
    order = sorted(fits)
    k = order.index(best)
    if k == 0 or k == len(order) - 1:
        return best
    x = np.log([order[k - 1], order[k], order[k + 1]])
    y = np.array([fits[order[k - 1]][1], fits[order[k]][1], fits[order[k + 1]][1]])
    if not np.isfinite(y).all():
        return best
    # the vertex of the interpolating parabola (unequal steps)
    d1, d2 = x[1] - x[0], x[2] - x[1]
    num = d1 * d1 * (y[1] - y[2]) - d2 * d2 * (y[1] - y[0])
    den = d1 * (y[1] - y[2]) + d2 * (y[1] - y[0])
    if not den < 0.0:  # y[1] below both neighbours makes den < 0: upward curvature
        return best
    shift = -0.5 * num / den
    step = min(d1, d2) * limit
    return float(math.exp(x[1] + max(-step, min(step, shift))))


def _warn_at_edge(best: float, grid: np.ndarray) -> None:
    """Warn when the best fitted gamma is an end of the path (the range searched).

    The held-out likelihood may go on improving past it: the gamma is then a bound, not
    an estimate. A path of one gamma says nothing (it chose nothing).
    """
    if len(grid) < 2 or best not in (float(grid[0]), float(grid[-1])):
        return
    end = "lowest" if best == float(grid[0]) else "highest"
    warnings.warn(
        f"gamma: the chosen gamma {best:.4g} is the {end} of the gammas searched "
        f"({float(grid[0]):.4g} to {float(grid[-1]):.4g}); the held-out likelihood may "
        "improve beyond it: give gammas= a wider range",
        GammaAtEdgeWarning,
        stacklevel=4,
    )


class GammaAtEdgeWarning(UserWarning):
    """A chosen gamma sits at an end of the range searched (a bound, not an estimate)."""


def path_arguments(
    triplets: Any,
    validation: Any,
    init: Any,
    gammas: Any,
    dim: int,
    start: float,
    random_state: Any,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]:
    """The checked arguments of a walk: ``(T_fit, T_val, X0, grid, first, seed)``.

    ``gammas``: checked values or None (the default path); ``init`` None: ``N(0, 0.1^2)``
    drawn from ``random_state``, which then draws the trainer's seed.
    """
    T = check_triplet_rows(triplets)
    V = check_triplet_rows(validation, "validation")
    grid = gamma_grid(gammas)
    rng = check_random_state(random_state)
    if init is None:
        n = int(max(T.max(), V.max() if len(V) else 0)) + 1
        init = 0.1 * rng.standard_normal((n, dim))
    X0 = check_X(init, "init")
    if X0.shape[1] != dim or X0.shape[0] <= max(T.max(), V.max() if len(V) else 0):
        raise ValueError(f"init: shape {X0.shape} does not fit dim={dim} and the rows")
    first = int(np.argmin(np.abs(np.log(grid) - math.log(start))))
    return T, V, X0, grid, first, seed_from(rng)


def walk_gamma_path(
    X0: np.ndarray,
    T_fit: np.ndarray,
    T_val: np.ndarray,
    grid: np.ndarray,
    first: int,
    *,
    train: Trainer,
    options: dict[str, Any],
    seed: int,
    refine: bool,
    n_jobs: int | None = None,
    label: str = "gamma path",
    verbose: Any = False,
) -> GammaPath:
    """The walk of :func:`~tripletsearch.embedding.gamma_path` over checked arguments.

    Starts at ``grid[first]`` from ``X0``; each fit is ``train(GammaCKL(gamma), start,
    T_fit, options, seed)`` (``options``: the trainer's, gamma fixed, ``tol`` raised to
    1e-5) and is scored on ``T_val``: its mean negative log-likelihood and its triplet
    accuracy (an exact tie counting 1/2, :func:`~tripletsearch.outcomes.triplet_accuracy`).
    ``label`` and ``verbose``: the progress bar's.
    """
    total = len(grid) + (_REFINE_FITS if refine else 0)
    progress = Progress(total, label, "fit", verbose)
    # the path's fits stop at a looser tolerance than a final one: the held-out
    # likelihood settles before the training loss does
    path_options = {**options, "tol": max(float(options["tol"]), _PATH_TOL)}
    fits: dict[float, tuple[np.ndarray, float, float]] = {}  # gamma -> (X, nll, accuracy)

    def fit_at(gamma: float, start: np.ndarray) -> float:
        o = GammaCKL(gamma)
        X = train(o, start, T_fit, path_options, seed)
        lp, acc = o.log_prob(X, T_val, n_jobs=n_jobs), triplet_accuracy(X, T_val)
        nll = float(-np.mean(lp)) if np.isfinite(lp).all() else math.inf
        fits[gamma] = (X, nll, acc)
        progress.step()
        return nll

    def best_gamma() -> float:
        return min(fits, key=lambda g: fits[g][1])

    try:
        g = [float(v) for v in grid]
        fit_at(g[first], X0)
        for k in range(first + 1, len(g)):
            record = fits[best_gamma()][1]
            if fit_at(g[k], fits[g[k - 1]][0]) >= record:
                break
        if best_gamma() == g[first]:
            for k in range(first - 1, -1, -1):
                record = fits[best_gamma()][1]
                if fit_at(g[k], fits[g[k + 1]][0]) >= record:
                    break
        gamma = _parabola_vertex(fits, best_gamma(), limit=0.5)
        if refine:
            for _ in range(_REFINE_FITS):
                if min(abs(math.log(gamma / f)) for f in fits) < _REFINE_RTOL:
                    break
                nearest = min(fits, key=lambda f: abs(math.log(gamma / f)))
                fit_at(gamma, fits[nearest][0])
                gamma = _parabola_vertex(fits, best_gamma(), limit=1.0)
    finally:
        progress.close()
    _warn_at_edge(best_gamma(), grid)
    order = sorted(fits)
    nearest = min(fits, key=lambda f: abs(math.log(gamma / f)))
    return GammaPath(
        gamma=gamma,
        embedding=fits[nearest][0],
        gammas=np.array(order),
        val_nll=np.array([fits[f][1] for f in order]),
        val_accuracy=np.array([fits[f][2] for f in order]),
        embeddings=[fits[f][0] for f in order],
    )
