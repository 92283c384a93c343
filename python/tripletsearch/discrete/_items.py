"""The items of a database search: its store, its fingerprint, the items an answer names."""

from __future__ import annotations

import hashlib
import numbers
from typing import Any

import numpy as np

from .. import _core
from .._validation import check_index_array, row_blocks


def _store(X: np.ndarray) -> _core.ItemStore:
    """The searcher's store: centred and scaled, items that coincide in it rejected.

    The search is scale-free; GaussSearch's sigma is rescaled by the core. Coinciding items
    raise ValueError.
    """
    return _core.ItemStore(X, scaled=True, distinct=True)


def _fingerprint(X: np.ndarray) -> str:
    """SHA-256 of the items as float64 bytes, in blocks of rows (no copy of the catalogue)."""
    h = hashlib.sha256()
    for rows in row_blocks(X):
        h.update(np.ascontiguousarray(X[rows], dtype=np.float64).data)
    return h.hexdigest()[:32]


def _position(
    item: Any, shown: np.ndarray, name: str = "item", offered: np.ndarray | None = None
) -> int:
    """The position of ``item`` among ``shown`` (None: -1, a skip).

    ``offered``: the strip, named in the error (an item there is handled by the caller).
    """
    if item is None:
        return -1
    if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Integral):
        raise TypeError(f"{name}: expected an item index or None, got {type(item).__name__}")
    hits = np.nonzero(shown == int(item))[0]
    if len(hits) == 0:
        if offered is not None and int(item) in offered:
            raise ValueError(
                f"{name}: item {item} was offered, not shown: it is picked only as the "
                "target (found=True)"
            )
        strip = "" if offered is None or not len(offered) else f", offered: {offered.tolist()}"
        what = "shown" if not strip else "shown nor offered"
        raise ValueError(f"{name}: item {item} was not {what} (shown: {shown.tolist()}{strip})")
    return int(hits[0])


def _in(item: Any, items: np.ndarray) -> bool:
    """Whether ``item`` (an item index; anything else: False) is among ``items``."""
    if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Integral):
        return False
    return bool(len(items)) and int(item) in items


def _check_shown(shown: Any, n_items: int, n_choices: int) -> np.ndarray:
    """The items of a screen shown elsewhere (:meth:`DiscreteSearch.observe`), checked."""
    q = check_index_array(shown, "shown", 1, n_items)
    if not 1 <= len(q) <= n_choices:
        raise ValueError(f"shown: expected 1 to {n_choices} items, got {len(q)}")
    if len(np.unique(q)) != len(q):
        raise ValueError(f"shown: items must be distinct, got {q.tolist()}")
    return q


def _check_offered(offered: Any, shown: np.ndarray, guesses: int, n_items: int) -> np.ndarray:
    """The strip of :meth:`observe`, checked: at most ``guesses`` distinct items, unshown."""
    if offered is None:
        return np.empty(0, dtype=np.int64)
    g = check_index_array(offered, "offered", 1, n_items)
    if len(g) > guesses:
        raise ValueError(f"offered: expected at most guesses = {guesses} items, got {len(g)}")
    if len(np.unique(g)) != len(g):
        raise ValueError(f"offered: items must be distinct, got {g.tolist()}")
    if np.isin(g, shown).any():
        raise ValueError(f"offered: items of the screen, got {g.tolist()} and {shown.tolist()}")
    return g
