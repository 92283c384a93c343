"""New items placed in a fitted embedding, the fitted items held where they are.

:meth:`Embedding.transform <tripletsearch.Embedding.transform>` and ``add_items``: the way a
catalogue grows without refitting.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .._validation import (
    check_int,
    check_random_state,
    check_triplets,
    resolve_n_jobs,
    seed_from,
)
from ..oracles import Oracle
from ._train import DivergenceError, TrainOutput, valid_rows

__all__ = ["place_items"]

_START_ROWS = 256  # rows per new item that score its candidate starts


def place_items(
    oracle: Oracle,
    X: np.ndarray,
    n_fitted: int,
    triplets: Any,
    n_new: int | None,
    *,
    train: Callable[..., TrainOutput],
    options: dict[str, Any],
    random_state: Any = None,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Positions of the new items ``n_fitted, n_fitted + 1, ...`` beside the fitted ``X``.

    Each new item starts next to the fitted item of its rows that explains them best
    (:func:`_placement_start`), then all new items are refined together by L-BFGS over
    their coordinates only, under the fitted model ``oracle`` (see ``Embedding.transform``).

    Parameters
    ----------
    oracle : Oracle
        The fitted model.
    X : ndarray (n_fitted, dim)
        The fitted embedding (held where it is).
    n_fitted : int
        The fitted items (the new ones are numbered from it).
    triplets : array_like of int (m, 3)
        Rows over fitted and new items.
    n_new : int or None
        The new items; None: one more than the largest index, minus ``n_fitted``.
    train : callable
        The trainer (:func:`~tripletsearch.embedding.native_train`'s signature).
    options : dict
        The trainer's options of the fit (:func:`fit_options`); the placement runs L-BFGS,
        full batch, gamma fixed, whatever they say.
    random_state : None, int or numpy.random.Generator
        Draws the starts' offsets, then the trainer's seed.
    n_jobs : int or None
        Threads.

    Returns
    -------
    ndarray (n_new, dim)
    """
    T = check_triplets(triplets, None)
    if (T < 0).any():
        raise ValueError("triplets: negative index")
    n0 = int(n_fitted)
    top = int(T.max()) + 1 if len(T) else n0
    k = max(0, top - n0) if n_new is None else check_int(n_new, "n_new", minimum=0)
    if top > n0 + k:
        raise ValueError(
            f"triplets: index {top - 1} is beyond the {n0} fitted and {k} new items (n_new)"
        )
    if k == 0:
        return np.empty((0, X.shape[1]))
    T = T[valid_rows(T) & (T >= n0).any(axis=1)]
    named = np.zeros(k, dtype=bool)
    named[T[T >= n0] - n0] = True
    if not named.all():
        missing = np.flatnonzero(~named)[:5] + n0
        raise ValueError(
            f"triplets: no informative row names the new item(s) {missing.tolist()}; "
            "every new item needs a row with two other distinct items"
        )
    # the fitted items the rows name (held fixed) first, then the new ones
    old = np.unique(T[T < n0])
    local = np.full(n0 + k, -1, dtype=np.int64)
    local[old] = np.arange(len(old))
    local[n0:] = len(old) + np.arange(k)
    T_local = np.ascontiguousarray(local[T])
    rng = check_random_state(random_state)
    start = _placement_start(oracle, X, T, n0, k, rng, n_jobs)
    X0 = np.concatenate([X[old], start]) if len(old) else start
    # L-BFGS over the new items' coordinates whatever the fit's optimizer; the L2 penalty
    # is l2 * mean ||x||^2 over the items of these rows (the fixed ones add a constant)
    options = {
        **options,
        "optimizer": "lbfgs",
        "lr": 1.0,
        "batch_size": 0,
        "learn_gamma": False,
        "n_fixed": len(old),
    }
    out = train(
        oracle,
        np.ascontiguousarray(X0),
        T_local,
        options,
        seed_from(rng),
        resolve_n_jobs(n_jobs),
        None,
        None,
    )
    if out.status == "diverged":
        raise DivergenceError("placing the new items diverged; try optimizer='lbfgs'")
    return np.array(out.embedding[len(old) :])


def _placement_start(
    oracle: Oracle,
    X: np.ndarray,
    T: np.ndarray,
    n0: int,
    k: int,
    rng: np.random.Generator,
    n_jobs: int | None,
) -> np.ndarray:
    """A start for each new item: near the fitted item of its rows that explains them best.

    For new item q, each fitted item named in the rows where q is the only new item (a
    random 256 of those rows at most) is a candidate: q placed at its position plus a small
    random offset; the candidate with the largest log-likelihood of those rows wins. Items
    without such rows start at the centre of the fitted items plus the offset.
    """
    d = X.shape[1]
    spread = float(np.sqrt(np.mean(np.sum((X - X.mean(axis=0)) ** 2, axis=1))))
    eps = 1e-3 * (spread if spread > 0 else 1.0)
    start = X.mean(axis=0) + eps * rng.standard_normal((k, d))
    single = T[(T >= n0).sum(axis=1) == 1]
    owner = single.max(axis=1) - n0  # the new item of each row (the largest index)
    for q in np.unique(owner):
        rows = single[owner == q]
        if len(rows) > _START_ROWS:  # the start from a sample: cost bounded per item
            rows = rows[rng.choice(len(rows), _START_ROWS, replace=False)]
        cands = np.unique(rows[rows < n0])
        best, best_ll = None, -math.inf
        for c0 in range(0, len(cands), 256):  # candidates in blocks: bounded memory
            c = cands[c0 : c0 + 256]
            P = X[c] + eps * rng.standard_normal((len(c), d))  # (C, d)
            ll = np.zeros(len(c))
            for pos in range(3):
                sel = rows[rows[:, pos] >= n0]
                if not len(sel):
                    continue
                ll += _candidate_loglik(oracle, X, P, sel, pos, n_jobs)
            j = int(np.argmax(ll))
            if ll[j] > best_ll:
                best, best_ll = P[j], float(ll[j])
        if best is not None:
            start[q] = best
    return start


def _candidate_loglik(
    oracle: Oracle, X: np.ndarray, P: np.ndarray, rows: np.ndarray, pos: int, n_jobs: int | None
) -> np.ndarray:
    """Log-likelihood of ``rows`` (the new item in column ``pos``) per candidate in P."""
    C, m = len(P), len(rows)
    # a small table: the rows' 3 m fitted items, then the C candidates
    fitted = rows.copy()
    fitted[:, pos] = 0  # the new item's column points at the candidates below
    table = np.concatenate([X[fitted.T.ravel()], P])
    base = (np.arange(3)[:, None] * m + np.arange(m)[None, :]).T  # (m, 3): row r, column a
    trip = np.broadcast_to(base, (C, m, 3)).copy()
    trip[:, :, pos] = 3 * m + np.arange(C)[:, None]
    lp = oracle.log_prob(table, trip.reshape(-1, 3), n_jobs=n_jobs)
    return lp.reshape(C, m).sum(axis=1)
