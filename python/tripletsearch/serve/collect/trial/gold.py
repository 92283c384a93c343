"""A collect file's gold rows: known answers of the trial's form, given or drawn.

:func:`file_gold` checks the file's ``gold`` rows; :func:`drawn_gold` draws ``gold_drawn``
clear known answers from the catalogue's embedding (:func:`clear_row`). Rows of a head and
k candidates are ``(head, the first pick, the k - 1 others)`` (k = 2: head, closer,
farther); odd-one-out rows ``(a, b, the odd one)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...experiment import fail as _fail
from ...experiment import file_catalogue
from ...experiment import is_integer as _integer
from ..screens import GOLD_POOL_RATIO, GOLD_SHOWN
from .form import ODD

__all__ = ["file_gold", "drawn_gold", "clear_row", "MAX_DRAWN", "DRAWN_RATIO", "DRAWN_SEED"]

MAX_DRAWN = 10_000  # gold_drawn at most
DRAWN_RATIO, DRAWN_SEED = 0.5, 0xD6A1  # a drawn gold row's distance ratio; its draws' purpose


def drawn_gold(name: str, cfg: dict, n_items: int) -> tuple:
    """``gold_drawn`` clear known answers from the catalogue's embedding (() without the key).

    Rows of the trial's form (:func:`_clear`), distinct items, drawn from the file's seed.
    """
    n = cfg["gold_drawn"]
    if n is None:
        return ()
    if not _integer(n) or not GOLD_POOL_RATIO <= n <= MAX_DRAWN:
        raise _fail(name, f"gold_drawn: an integer from {GOLD_POOL_RATIO} to {MAX_DRAWN}")
    try:
        cat = file_catalogue(name, cfg["catalogue"])
    except ValueError:
        cat = None
    if cat is None or not cat.has_embedding:
        raise _fail(name, "gold_drawn: the catalogue has no embedding to draw clear queries from")
    X = np.asarray(cat.embedding, dtype=np.float64)
    rng = np.random.default_rng([int(cfg["seed"]), DRAWN_SEED])
    odd, size = cfg["trial"] == ODD, 3 if cfg["trial"] == ODD else cfg["n_choices"] + 1
    out: dict[tuple[int, ...], None] = {}
    for _ in range(200 * n):
        row = clear_row(X, [int(v) for v in rng.choice(n_items, size, replace=False)], odd)
        if row is not None:
            out[row] = None
            if len(out) == n:
                return tuple(out)
    raise _fail(name, f"gold_drawn: only {len(out)} clear queries found in the embedding")


def clear_row(X: np.ndarray, drawn: list[int], odd: bool) -> tuple[int, ...] | None:
    """A clear known answer of the items ``drawn``, or None.

    A head and candidates (``drawn[0]`` and the rest): ``(head, nearest, the others in
    their order)`` when the nearest is at most :data:`DRAWN_RATIO` as far as the next;
    odd-one-out: ``(a, b, odd)`` when the closest pair is at most that ratio as far apart
    as the nearer of the odd one to them.
    """
    if odd:
        d = {(i, j): float(np.linalg.norm(X[i] - X[j])) for i in drawn for j in drawn if i < j}
        (a, b), near = min(d.items(), key=lambda kv: kv[1])
        o = next(i for i in drawn if i not in (a, b))
        far = min(d[min(a, o), max(a, o)], d[min(b, o), max(b, o)])
        return (a, b, o) if near <= DRAWN_RATIO * far else None
    head, cands = drawn[0], drawn[1:]
    dist = [float(np.linalg.norm(X[c] - X[head])) for c in cands]
    order = np.argsort(dist, kind="stable")
    if dist[order[0]] > DRAWN_RATIO * dist[order[1]]:
        return None
    first = cands[int(order[0])]
    return (head, first, *(c for c in cands if c != first))


def file_gold(name: str, value: Any, cfg: dict, n_items: int, checks: int) -> tuple:
    """The file's known answers: rows of distinct item ids of the trial's form.

    A head and k candidates: ``[head, the first pick, the k - 1 others]`` (k = 2: head,
    closer, farther); odd-one-out: ``[a, b, the odd one]``.
    """
    size = 3 if cfg["trial"] == ODD else cfg["n_choices"] + 1
    form = (
        "[a, b, the odd one]"
        if cfg["trial"] == ODD
        else "[head, closer, farther]"
        if size == 3
        else f"[head, the first pick, the {size - 2} other candidates]"
    )
    if not isinstance(value, list) or not all(
        isinstance(r, list) and len(r) == size and all(_integer(v) for v in r) for r in value
    ):
        raise _fail(name, f"gold: a list of {form} rows of item ids ({size} each)")
    if any(not 0 <= v < n_items for r in value for v in r) or any(
        len(set(r)) < size for r in value
    ):
        raise _fail(name, f"gold: rows of {size} distinct item ids in 0..{n_items - 1}")
    shown = min(GOLD_SHOWN, len(value) // GOLD_POOL_RATIO)  # (a pool: a few rows each)
    if shown > cfg["max_queries"] - checks:
        raise _fail(name, "gold: more rows shown than the queries left beside the other checks")
    return tuple(tuple(int(v) for v in r) for r in value)
