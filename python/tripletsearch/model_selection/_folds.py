"""The folds of a cross-validation and the settings of a grid."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .._deprecation import keyword_only
from .._validation import (
    check_int,
    check_random_state,
)

__all__ = ["kfold", "ParameterGrid"]


@keyword_only("random_state")
def kfold(
    m: int, n_splits: int = 10, *, random_state: Any = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Shuffled k-fold split of ``m`` rows: a list of (train_index, test_index)."""
    n_splits = check_int(n_splits, "cv", minimum=2)
    if m < n_splits:
        raise ValueError(f"cv: {n_splits} folds need at least {n_splits} rows, got {m}")
    perm = check_random_state(random_state).permutation(m)
    folds = np.array_split(perm, n_splits)
    return [
        (np.sort(np.concatenate(folds[:k] + folds[k + 1 :])), np.sort(folds[k]))
        for k in range(n_splits)
    ]


def ParameterGrid(grid):
    """All settings of a grid: a dict of lists, or a list of such dicts."""
    grids = [grid] if isinstance(grid, dict) else list(grid)
    out = []
    for g in grids:
        if not isinstance(g, dict):
            raise TypeError("param_grid: expected a dict of lists or a list of dicts")
        keys = sorted(g)
        for values in itertools.product(*(g[k] for k in keys)):
            out.append(dict(zip(keys, values)))
    return out
