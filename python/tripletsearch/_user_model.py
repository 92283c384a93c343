"""The user model the searches infer with ``gamma="auto"`` / ``lapse="auto"``: the grids, the
prior and the summaries of the posterior (``cpp/include/tripletsearch/oracle/user_grid.hpp``).

gamma lives on the grid {0.5, 0.75, 1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32} with a prior that
is log-uniform on [0.5, 8] and falls as (8 / gamma)^2 beyond, up to 32 (each grid value
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

__all__ = ["GAMMA_GRID", "LAPSE_GRID", "CREDIBLE_LEVEL", "is_auto", "grid_summary"]

GAMMA_GRID = np.array(_core.GAMMA_GRID, dtype=np.float64)
LAPSE_GRID = np.array(_core.LAPSE_GRID, dtype=np.float64)
CREDIBLE_LEVEL = 0.95


def is_auto(value: Any, name: str) -> bool:
    """Whether a ``gamma`` / ``lapse`` argument asks for inference (the string "auto")."""
    if isinstance(value, str):
        if value != "auto":
            raise ValueError(f"{name}: expected a number or 'auto', got {value!r}")
        return True
    return False


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
