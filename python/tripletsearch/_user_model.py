"""The user model the searches infer with ``gamma="auto"`` / ``lapse="auto"``.

The grids, the prior and the summaries of the posterior
(``cpp/include/tripletsearch/oracle/user_grid.hpp``).

gamma lives on the grid {0.5, 0.75, 1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32} with a prior that
is log-uniform on [0.5, 4] and falls as (4 / gamma)^2 beyond, up to 32 (each grid value
carries the prior mass of its cell): over-estimating how reliable a person is breaks a
search, under-estimating it costs some queries, so the prior leans low. The lapse rate (the
probability of a random answer) lives on {0, 0.02, 0.05, 0.1, 0.2, 0.3}, uniform.

``gamma_`` is the posterior median on the grid and ``gamma_interval_`` the central 95 %
credible interval (grid values: the smallest whose cumulative probability reaches 2.5 % and
97.5 %); the same for the lapse rate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core
from ._params import Interval, StrOptions

__all__ = ["GAMMA_GRID", "LAPSE_GRID", "CREDIBLE_LEVEL", "auto_or", "grid_summary"]

GAMMA_GRID = np.array(_core.GAMMA_GRID, dtype=np.float64)
LAPSE_GRID = np.array(_core.LAPSE_GRID, dtype=np.float64)
CREDIBLE_LEVEL = 0.95


def auto_or(number: Interval) -> list[Any]:
    """The constraints of a ``gamma`` / ``lapse`` argument: a ``number``, or "auto" (inferred).

    A string other than "auto" is refused as both a TypeError and a ValueError
    (:class:`~tripletsearch._params.InvalidParameterError`).
    """
    return [number, StrOptions({"auto"})]


def _grid_quantile(grid: np.ndarray, probs: np.ndarray, q: float) -> float:
    cum = np.cumsum(probs)
    k = int(np.searchsorted(cum, q * cum[-1] - 1e-12, side="left"))
    return float(grid[min(k, len(grid) - 1)])


def grid_summary(grid: np.ndarray, probs: np.ndarray) -> tuple[float, tuple[float, float]]:
    """(posterior median, central ``CREDIBLE_LEVEL`` interval) of a grid posterior."""
    probs = np.asarray(probs, dtype=np.float64)
    tail = 0.5 * (1.0 - CREDIBLE_LEVEL)
    return _grid_quantile(grid, probs, 0.5), (
        _grid_quantile(grid, probs, tail),
        _grid_quantile(grid, probs, 1.0 - tail),
    )


class InferredUser:
    """The user-model half of a search session (``ContinuousSearch``, ``DiscreteSearch``).

    The assumed or inferred gamma and lapse rate and their posterior. Needs ``settings``
    (with ``gamma`` and ``lapse``: a number, or "auto") and ``_user_grids()`` (the native
    posterior: (gamma probs, lapse probs), or None).
    """

    settings: Any

    def _user_grids(self) -> Any:  # pragma: no cover - each session implements it
        raise NotImplementedError

    @property
    def gamma(self) -> float | str:
        """The user's assumed gamma-CKL power, or "auto" (inferred)."""
        return "auto" if self.settings.gamma == "auto" else float(self.settings.gamma)

    @property
    def lapse(self) -> float | str:
        """The lapse rate the likelihood assumes, or "auto" (inferred)."""
        return "auto" if self.settings.lapse == "auto" else float(self.settings.lapse)

    def user_posterior(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The posterior of the user's gamma and lapse rate.

        ``{"gamma": (grid, probs), "lapse": (grid, probs)}`` (a fixed value: itself,
        probability 1).
        """
        post = self._user_grids()
        out = {}
        for name, grid, k in (("gamma", GAMMA_GRID, 0), ("lapse", LAPSE_GRID, 1)):
            value = getattr(self.settings, name)
            if value == "auto":
                out[name] = (grid.copy(), np.asarray(post[k], dtype=np.float64))
            else:
                out[name] = (np.array([float(value)]), np.ones(1))
        return out

    def _summary(self, name: str) -> tuple[float, tuple[float, float]]:
        grid, probs = self.user_posterior()[name]
        return grid_summary(grid, probs)

    @property
    def gamma_(self) -> float:
        """The user's gamma.

        The posterior median with gamma="auto" (a grid value), else the assumed value.
        """
        return self._summary("gamma")[0]

    @property
    def gamma_interval_(self) -> tuple[float, float]:
        """The central 95 % credible interval of the user's gamma.

        Grid values; a fixed gamma: (gamma, gamma).
        """
        return self._summary("gamma")[1]

    @property
    def lapse_(self) -> float:
        """The user's lapse rate.

        The posterior median with lapse="auto", else the assumed value.
        """
        return self._summary("lapse")[0]

    @property
    def lapse_interval_(self) -> tuple[float, float]:
        """The central 95 % credible interval of the user's lapse rate."""
        return self._summary("lapse")[1]

    def _user_state(self) -> dict[str, Any]:
        """The estimates for a state snapshot (readers only: from_dict replays answers)."""
        out: dict[str, Any] = {}
        for name in ("gamma", "lapse"):
            if getattr(self.settings, name) == "auto":
                est, (lo, hi) = self._summary(name)
                out[f"{name}_"], out[f"{name}_interval_"] = est, [lo, hi]
        return out
