"""Outcome rules of recorded searches, written once, over arrays.

A person looking for a target answers screens of shown items: they pick the item closest
to the target, or say "this is it". Two rules decide what such records mean, and every
reader of them (:func:`tripletsearch.fit_choice_model`, the search service's stored
sessions, its export and its study report) applies these functions rather than its own
version:

* :func:`found_target`: which searches found their target. A search found it when it
  ended with "this is it" and, when its target was known beforehand (a study's), the item
  named is that target. A free search's target is whatever the person said it was.
* :func:`is_comparison`: which answered screens are comparisons. A screen that shows the
  target is not one: a person who sees the target picks it, whatever the other items'
  distances (the gamma-CKL choice model describes picks among items that are all not the
  target).
* :func:`triplet_agreement` and :func:`triplet_accuracy`: how far answers ``(head,
  closer, farther)`` agree with an embedding. The library's one triplet-accuracy rule: an
  answer counts 1 when ``closer`` is nearer ``head``, 0 when farther, and 1/2 at an exact
  tie (a tie carries no information about the answer, so chance level stays 1/2).
  :meth:`tripletsearch.Embedding.score`, the gamma path's held-out accuracy and the
  collect's simulations and dashboard all use it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "found_target",
    "is_comparison",
    "triplet_agreement",
    "triplet_accuracy",
    "proportion_interval",
]


def _ints(name: str, value: Any, ndim: int) -> np.ndarray:
    a = np.asarray(value)
    if a.size == 0 and a.dtype == np.float64:  # an empty list: no rows
        a = a.astype(np.int64)
    if a.dtype == bool or not np.issubdtype(a.dtype, np.integer) or a.ndim != ndim:
        raise TypeError(f"{name}: expected a {ndim}-d integer array, got {a.dtype} {a.shape}")
    return a


def found_target(said_found: Any, found_item: Any, target: Any) -> np.ndarray:
    """Which searches found their target.

    Parameters
    ----------
    said_found : array_like of bool (s,)
        Whether each search ended with the person saying "this is it" (a mix search of the
        service: accepting the estimate).
    found_item : array_like of int (s,)
        The item "this is it" named, -1 when none (the search ended otherwise, or its
        answers name no item).
    target : array_like of int (s,)
        The target each search was given beforehand (a study's), -1 when it had none (a
        free search: its target is what the person said it was).

    Returns
    -------
    ndarray of bool (s,)
        ``said_found & ((target == -1) | (found_item == target))``.
    """
    said = np.asarray(said_found)
    if said.size == 0 and said.dtype == np.float64:
        said = said.astype(bool)
    if said.dtype != bool or said.ndim != 1:
        raise TypeError(f"said_found: expected a 1-d bool array, got {said.dtype} {said.shape}")
    item, tgt = _ints("found_item", found_item, 1), _ints("target", target, 1)
    if not len(said) == len(item) == len(tgt):
        raise ValueError(
            f"said_found, found_item, target: lengths differ ({len(said)}, {len(item)}, {len(tgt)})"
        )
    for name, a in (("found_item", item), ("target", tgt)):
        if a.size and a.min() < -1:
            raise ValueError(f"{name}: expected item ids >= 0 or -1 (none), got {a.min()}")
    return said & ((tgt == -1) | (item == tgt))


def is_comparison(heads: Any, shown: Any) -> np.ndarray:
    """Which answered screens are comparisons: those that do not show their head.

    Parameters
    ----------
    heads : array_like of int (m,)
        The target of the person who answered each screen.
    shown : array_like of int (m, k)
        The items each screen showed.

    Returns
    -------
    ndarray of bool (m,)
        True where ``heads[r]`` is not among ``shown[r]``.
    """
    H, S = _ints("heads", heads, 1), _ints("shown", shown, 2)
    if len(H) != len(S):
        raise ValueError(f"heads, shown: lengths differ ({len(H)}, {len(S)})")
    for name, a in (("heads", H), ("shown", S)):
        if a.size and a.min() < 0:
            raise ValueError(f"{name}: item ids must be >= 0, got {a.min()}")
    return ~(S == H[:, None]).any(axis=1)


def triplet_agreement(X: Any, triplets: Any) -> np.ndarray:
    """How far each answer ``(head, closer, farther)`` agrees with the embedding ``X``.

    Parameters
    ----------
    X : array_like of float (n, d) or (n,)
        Item coordinates (a 1-d array: one coordinate per item).
    triplets : array_like of int (m, 3)
        Rows ``(head, closer, farther)``.

    Returns
    -------
    ndarray of float (m,)
        1 where ``closer`` is nearer ``head`` than ``farther`` in ``X`` (squared Euclidean
        distances), 0 where it is farther, 1/2 at a tie. Every model of the library
        predicts the nearer item as the likelier pick, so the mean is an embedding's
        triplet accuracy.
    """
    E = np.asarray(X, dtype=np.float64)
    if E.ndim == 1:
        E = E[:, None]
    if E.ndim != 2:
        raise ValueError(f"X: expected a 1-d or 2-d array, got shape {E.shape}")
    T = _ints("triplets", triplets, 2) if np.size(triplets) else np.zeros((0, 3), np.int64)
    if T.shape[1] != 3:
        raise ValueError(f"triplets: expected rows of 3 item ids, got shape {T.shape}")
    if T.size and (T.min() < 0 or T.max() >= len(E)):
        raise ValueError(f"triplets: item ids must lie in 0..{len(E) - 1}")
    h, c, f = T[:, 0], T[:, 1], T[:, 2]
    d_close = ((E[c] - E[h]) ** 2).sum(axis=1)
    d_far = ((E[f] - E[h]) ** 2).sum(axis=1)
    return (d_close < d_far) + 0.5 * (d_close == d_far)


def triplet_accuracy(X: Any, triplets: Any) -> float:
    """The triplet accuracy of the embedding ``X`` on ``triplets``, ties counted 1/2.

    Parameters
    ----------
    X : array_like of float (n, d) or (n,)
        Item coordinates.
    triplets : array_like of int (m, 3)
        Rows ``(head, closer, farther)``.

    Returns
    -------
    float
        The mean of :func:`triplet_agreement`: the share of rows whose ``closer`` is nearer
        ``head`` than ``farther``, an exact tie counting 1/2 (chance level is 1/2 whatever
        the ties). NaN without rows.
    """
    agree = triplet_agreement(X, triplets)
    return float(np.mean(agree)) if len(agree) else math.nan


def proportion_interval(k: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``k`` of ``n`` (95 % by default).

    ``k`` may be fractional (a tie counted a half). NaN, NaN when ``n`` is 0. What the
    service's report (the share of searches found) and the collect's dashboard (the held-out
    accuracy) give beside each proportion.
    """
    if n == 0:
        return math.nan, math.nan
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)
