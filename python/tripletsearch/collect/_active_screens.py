"""The active method's screens past the triplet: ranked grids and odd-one-out trials.

:class:`~tripletsearch.collect.ActiveQueries` asks a head's next screen by the information
its answer carries about where the head lies (``collect/choice_information.hpp``); the
heads are visited least asked first, as for triplets, and every item is a candidate (a
screen shows many; the burn-in's random screens span every item):

- ``"rank"`` (k candidates, r picks): on the head's own particles (a Gaussian around its
  embedded position, :func:`local_support`: a ranked answer tells several bits, and a few
  screens exhaust particles spread over every item), the most informative of ``BEST_OF``
  random screens of the head. The greedy choice (``BEST_OF = 0``: the best pair of a pool,
  then the candidate whose addition makes the ranked answer tell most, with the triplet
  rule's hedge of pairs asked least often) did worse than random screens on simulated
  people (100 items, d = 3, gamma-CKL 3, lapse 0.05; 2 seeds, held-out truth accuracy
  0.657 / 0.710 / 0.750 at 250 / 375 / 500 8-rank-2 screens, against random's 0.675 /
  0.734 / 0.776 and the best of 10's 0.661 / 0.745 / 0.786); see ``bench/trials_accuracy.py``.
- ``"odd-one-out"``: on the head's own particles too, among the pairs (a, b) of a pool of
  ``POOL`` random items, the one whose three-way answer about {head, a, b} tells most (pairs
  asked of the head least often); measured behind random trials (2 seeds: 0.607 / 0.681
  held-out accuracy at 1,000 / 3,000 trials against 0.634 / 0.715). From the head's side
  an odd-one-out is a choice among three with weights sim(a, b) (the head odd: a constant
  row), sim(h, b) (a odd) and sim(h, a) (b odd).

A head's weights come from all its answers: its ranked screens, or every odd-one-out trial
it appears in (as the head of the other two).
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

from .. import _core
from ._scorer import HeadScorer
from ._screens import ScreenKind

__all__ = ["POOL", "odd_views", "screen_log_weights", "ask_rank", "ask_odd"]

POOL = 48  # items a ranked screen's greedy choice draws from
BEST_OF = 10  # random screens scored, the best asked (0: the greedy choice)
N_LOCAL = 256  # a ranked screen's head's own particles
LOCAL_NEIGHBOUR = 1  # their spread: the distance to this neighbour (+ dim) of the head


class ActiveModel(Protocol):
    """What the screens read of :class:`~tripletsearch.collect.ActiveQueries`.

    A protocol (this module imports no method's: the methods import the screens).
    """

    @property
    def n(self) -> int: ...
    @property
    def screen(self) -> ScreenKind: ...
    @property
    def scorer(self) -> HeadScorer | None: ...
    @property
    def table(self) -> np.ndarray: ...
    @property
    def row_of(self) -> np.ndarray: ...
    @property
    def particles(self) -> np.ndarray | None: ...
    @property
    def pair_asks(self) -> dict[int, dict[int, int]]: ...
    def head_answers(self, sampler: Any, h: int) -> np.ndarray: ...
    def item_pair_terms(self) -> np.ndarray: ...
    def least_asked(self, h: int, pairs: np.ndarray, info: Any) -> Any: ...


def odd_views(rows: np.ndarray) -> np.ndarray:
    """Odd-one-out rows ``(a, b, odd)`` seen from each of their items: ``(head, y, z, flag)``.

    Three views a row: from a and from b (the others and the odd one last, flag 0: z is
    odd) and from the odd item (flag 1: the head is odd), in the order told.
    """
    a, b, o = rows[:, 0], rows[:, 1], rows[:, 2]
    views = np.stack(
        [
            np.stack([a, b, o, np.zeros_like(a)], axis=1),
            np.stack([b, a, o, np.zeros_like(a)], axis=1),
            np.stack([o, a, b, np.ones_like(a)], axis=1),
        ],
        axis=1,
    )
    return np.ascontiguousarray(views.reshape(-1, 4))


def _item_rows(m: ActiveModel, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A table of ``items``' log-odds terms (anchors' rows reused) and each item's row."""
    assert m.scorer is not None and m.particles is not None
    uniq = np.unique(items)
    rows = m.row_of[uniq]
    extra = uniq[rows < 0]
    if not len(extra):
        return m.table, m.row_of
    table = np.concatenate([m.table, m.scorer.table(m.particles, extra)])
    row_of = m.row_of.copy()
    row_of[extra] = len(m.table) + np.arange(len(extra))
    return table, row_of


def pair_terms(m: ActiveModel, pairs: np.ndarray) -> np.ndarray:
    """The log-odds terms f(D(y, z)) of item pairs (C, 2) in the installed embedding."""
    assert m.scorer is not None
    X = m.scorer.X
    out = np.empty(len(pairs))
    for c, (y, z) in enumerate(pairs.tolist()):
        out[c] = m.scorer.table(np.ascontiguousarray(X[y : y + 1]), np.array([z]))[0, 0]
    return out


def screen_log_weights(m: ActiveModel, answers: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """``prior`` plus the log-probability of a head's answers at the particles.

    Rank: rows ``(picks..., others)`` of item ids; odd-one-out: views ``(y, z, flag)``.
    """
    assert m.scorer is not None
    lapse = m.scorer.lapse
    if not len(answers):
        return prior
    if m.screen.trial == "rank":
        table, row_of = _item_rows(m, answers)
        rows = np.ascontiguousarray(row_of[answers])
        return _core.collect_choice_log_weights(lapse, table, rows, m.screen.r, prior, 1)
    table, row_of = _item_rows(m, answers[:, :2])
    consts = pair_terms(m, answers[:, :2])
    M = table.shape[1]
    G = np.concatenate([table, np.repeat(consts[:, None], M, axis=1)])
    const_row = len(table) + np.arange(len(answers))
    y, z = row_of[answers[:, 0]], row_of[answers[:, 1]]
    head_odd = answers[:, 2] == 1
    # the picked option first: head odd -> the constant row; z odd -> sim(h, y): y's row
    first = np.where(head_odd, const_row, y)
    second = np.where(head_odd, y, const_row)
    rows = np.ascontiguousarray(np.stack([first, second, z], axis=1))
    return _core.collect_choice_log_weights(lapse, G, rows, 1, prior, 1)


def _hedged(m: ActiveModel, h: int, chosen: list[int], rest: np.ndarray, info: Any) -> Any:
    """``info`` with the over-asked additions at -inf (the triplet sampler's hedge).

    An addition is over-asked when its pairs with ``chosen`` were asked of ``h`` more often
    than the least asked addition's.
    """
    counts = m.pair_asks.get(h)
    if not counts:
        return info
    times = np.array(
        [max(counts.get(min(c, a) * m.n + max(c, a), 0) for a in chosen) for c in rest.tolist()]
    )
    if times.min() == times.max():
        return info
    out = np.array(info, dtype=np.float64)
    out[times > times.min()] = -np.inf
    return out


def local_support(m: ActiveModel, rng: np.random.Generator, h: int) -> np.ndarray:
    """The head's own particles: a Gaussian around its embedded position.

    Its spread is the distance to its ``LOCAL_NEIGHBOUR + dim``-th nearest item: a ranked
    answer tells several bits, so a few screens exhaust particles spread over every item's
    positions (the triplet's support); these follow the head.
    """
    assert m.scorer is not None
    X = m.scorer.X
    d2 = np.einsum("ij,ij->i", X - X[h], X - X[h])
    d2[h] = np.inf
    j = min(LOCAL_NEIGHBOUR + X.shape[1], len(X) - 2)
    spread = math.sqrt(float(np.partition(d2, j)[j]))
    return np.ascontiguousarray(X[h] + spread * rng.standard_normal((N_LOCAL, X.shape[1])))


def ask_rank(m: ActiveModel, sampler: Any, rng: np.random.Generator, h: int) -> list[int]:
    """A ranked screen's k candidates for head ``h``, chosen greedily (in choice order).

    On the head's own particles (:func:`local_support`), every item's log-odds terms in
    one table: the best pair of a pool of ``POOL`` random items (pairs asked of the head
    least often), then one candidate at a time, the one whose addition makes the screen's
    ranked answer tell most about the head.
    """
    assert m.scorer is not None
    k, r, lapse, threads = m.screen.k, m.screen.r, m.scorer.lapse, m.scorer.threads
    S = local_support(m, rng, h)
    table = m.scorer.table(S, np.arange(m.n))
    answers = m.head_answers(sampler, h)
    log_w = np.zeros(len(S))
    if len(answers):
        log_w = _core.collect_choice_log_weights(lapse, table, answers, r, log_w, threads)
    others = np.delete(np.arange(m.n), h)
    if BEST_OF:
        sets = np.stack([rng.choice(others, size=k, replace=False) for _ in range(BEST_OF)])
        gain = _core.collect_choice_information(lapse, table, log_w, sets, r, threads)
        return [int(v) for v in sets[int(np.argmax(gain))]]
    pool = np.sort(rng.choice(others, size=min(POOL, len(others)), replace=False))
    i, j = np.triu_indices(len(pool), 1)
    pairs = np.stack([pool[i], pool[j]], axis=1)
    info = m.least_asked(h, pairs, m.scorer.information(table, log_w, pairs))
    chosen = [int(v) for v in pairs[int(np.argmax(info))]]
    while len(chosen) < k:
        rest = np.setdiff1d(pool, chosen)
        if not len(rest):
            break
        sets = np.ascontiguousarray(np.column_stack([np.tile(chosen, (len(rest), 1)), rest]))
        gain = _core.collect_choice_information(
            lapse, table, log_w, sets, min(r, len(chosen)), threads
        )
        chosen.append(int(rest[int(np.argmax(_hedged(m, h, chosen, rest, gain)))]))
    return chosen


def odd_log_weights(
    lapse: float, table: np.ndarray, pair_f: np.ndarray, answers: np.ndarray, threads: int
) -> np.ndarray:
    """A head's log weights from its odd-one-out views ``(y, z, flag)`` (table rows = items).

    ``pair_f`` (n, n): the log-odds terms f(D(y, z)) of item pairs (the constant rows).
    """
    M = table.shape[1]
    if not len(answers):
        return np.zeros(M)
    consts = pair_f[answers[:, 0], answers[:, 1]]
    G = np.concatenate([table, np.repeat(consts[:, None], M, axis=1)])
    const_row = len(table) + np.arange(len(answers))
    y, z, head_odd = answers[:, 0], answers[:, 1], answers[:, 2] == 1
    # the picked option first: head odd -> the constant row; z odd -> sim(h, y): y's row
    first = np.where(head_odd, const_row, y)
    second = np.where(head_odd, y, const_row)
    rows = np.ascontiguousarray(np.stack([first, second, z], axis=1))
    return _core.collect_choice_log_weights(lapse, G, rows, 1, np.zeros(M), threads)


def ask_odd(m: ActiveModel, sampler: Any, rng: np.random.Generator, h: int) -> list[int]:
    """An odd-one-out trial's two other items for head ``h``: the most informative pair.

    On the head's own particles (:func:`local_support`), among the pairs of a pool of
    ``POOL`` random items (pairs asked of the head least often).
    """
    assert m.scorer is not None
    lapse, threads = m.scorer.lapse, m.scorer.threads
    S = local_support(m, rng, h)
    table = m.scorer.table(S, np.arange(m.n))
    pair_f = m.item_pair_terms()
    log_w = odd_log_weights(lapse, table, pair_f, m.head_answers(sampler, h), threads)
    others = np.delete(np.arange(m.n), h)
    pool = np.sort(rng.choice(others, size=min(POOL, len(others)), replace=False))
    i, j = np.triu_indices(len(pool), 1)
    pairs = np.stack([pool[i], pool[j]], axis=1)
    M = table.shape[1]
    G = np.concatenate([table, np.repeat(pair_f[pairs[:, 0], pairs[:, 1]][:, None], M, axis=1)])
    sets = np.stack([m.n + np.arange(len(pairs)), pairs[:, 1], pairs[:, 0]], axis=1)
    info = _core.collect_choice_information(lapse, G, log_w, np.ascontiguousarray(sets), 1, threads)
    info = m.least_asked(h, pairs, info)
    return [int(v) for v in pairs[int(np.argmax(info))]]
