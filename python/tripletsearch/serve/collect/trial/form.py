"""A collect's trial: what its screens ask, and what an answer to one says.

A collect file chooses its screens (``trial``, ``n_choices`` = k, ``picks`` = r):

* ``"rank"`` (the default): a head and k candidates, the r most similar picked in order
  (r = 1, k = 2: the triplet, today's screens; r = 1: a choice among k; Wilber's grids and
  PsiZ's "8-rank-2" for r > 1);
* ``"odd-one-out"``: three items and no head, the odd one picked (the THINGS task).

A query (a screen's record, ``ts_screens.query``) says its own form, so that the held-out
test screens (random triplets in every collect) sit beside the collect's own: a query with
``"picks": r`` asks r ranked picks, one with ``"trial": "odd-one-out"`` (and ``"head":
None``) the odd one of its three ``candidates``; any other one pick. An answer is the
positions picked in order (:func:`answer_picks`: ``picks``, or ``[choice]``); the first is
its ``choice`` (an odd-one-out's: the odd one). What an answer implies, :func:`implied`:
each pick closer to the head than every candidate not picked before it (r k - r (r + 1) / 2
triplets: 13 for 8-rank-2), or the pair closer to each other than to the odd one (2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ....trials import OddOneOut, trial_log_prob

__all__ = [
    "CollectTrial",
    "TRIALS",
    "ODD",
    "answer_picks",
    "implied",
    "trial_row",
    "pick_steps",
    "first_pick_probs",
    "query_key",
    "NO_HEAD",
]

ODD = "odd-one-out"
TRIALS = ("rank", ODD)  # what a collect file's ``trial`` takes
NO_HEAD = -1  # an odd-one-out query's head in the buffer's rows (it has none)


@dataclass(frozen=True)
class CollectTrial:
    """A collect's screens: ``kind`` (:data:`TRIALS`), ``k`` candidates, ``r`` picks."""

    kind: str = "rank"
    k: int = 2
    r: int = 1

    @property
    def odd(self) -> bool:
        """Odd-one-out screens (three items, no head)."""
        return self.kind == ODD

    @property
    def is_choice(self) -> bool:
        """One pick among the head's candidates: the screens before trials (a triplet sampler).

        Their samplers are told the triplets an answer implies, as before; other trials'
        samplers are told the trials (:class:`~tripletsearch.collect.TripletSampler`'s
        ``trial``) and fit them by their own likelihood.
        """
        return not self.odd and self.r == 1

    def sampler_options(self) -> dict[str, Any]:
        """:class:`~tripletsearch.collect.TripletSampler`'s ``trial``, ``n_choices``, ``picks``."""
        if self.odd:
            return {"trial": ODD}
        if self.is_choice:
            return {}
        return {"trial": "rank", "n_choices": self.k, "picks": self.r}

    @property
    def width(self) -> int:
        """Columns of an answer's trial row (:func:`trial_row`) and of a buffer's query."""
        return 3 if self.odd else self.k + 1

    @property
    def triplets_per_row(self) -> int:
        """The triplets one row its sampler is told implies (1: told triplets)."""
        if self.is_choice:
            return 1
        return 2 if self.odd else self.r * self.k - self.r * (self.r + 1) // 2

    def query(self, head: int | None, candidates: Any) -> dict:
        """A query of this trial: ``{"head", "candidates"}`` with its form's key."""
        cands = [int(c) for c in candidates]
        if self.odd:
            return {"head": None, "candidates": cands, "trial": ODD}
        out = {"head": int(head) if head is not None else None, "candidates": cands}
        if self.r > 1:
            out["picks"] = self.r
        return out

    def from_buffer(self, head: int, candidates: list[int]) -> dict:
        """The query of a buffer's row (an odd-one-out's head is :data:`NO_HEAD`)."""
        return self.query(None if head == NO_HEAD else head, candidates)

    def buffer_rows(self, asked: Any) -> np.ndarray:
        """The rows a sampler asked as the buffer keeps them: head, then the candidates."""
        rows = np.asarray(asked, dtype=np.int64).reshape(len(asked), -1)
        if self.odd:
            return np.hstack([np.full((len(rows), 1), NO_HEAD, dtype=np.int64), rows])
        return rows

    @property
    def distinct_per(self) -> str:
        """How its queries are counted (for the message of a catalogue too small)."""
        return "sets of three" if self.odd else "heads with candidate sets"


def is_odd(query: dict) -> bool:
    """Whether ``query`` asks the odd one out."""
    return query.get("trial") == ODD


def query_key(query: dict) -> tuple[int, frozenset]:
    """A query's identity: (head, candidate set); an odd-one-out's head :data:`NO_HEAD`."""
    head = query.get("head")
    return (NO_HEAD if head is None else int(head)), frozenset(int(c) for c in query["candidates"])


def answer_picks(record: dict) -> list[int] | None:
    """The positions an answered screen's record picked, in order (None: a skip).

    Its ``picks`` (a ranked answer), else ``[choice]``.
    """
    if record.get("choice") is None:
        return None
    picks = record.get("picks")
    return [int(p) for p in picks] if picks else [int(record["choice"])]


def implied(query: dict, picks: list[int]) -> list[tuple[int, int, int]]:
    """The triplets ``(head, closer, farther)`` an answer ``picks`` (positions) implies.

    A ranked answer: each pick closer to the head than every candidate not picked before
    it, in the candidates' order (one pick among k: the k - 1 rows of before); an
    odd-one-out: ``(a, b, odd)`` and ``(b, a, odd)``, ``a, b`` in their order on screen.
    """
    cands = [int(c) for c in query["candidates"]]
    if is_odd(query):
        odd = cands[picks[0]]
        a, b = (c for c in cands if c != odd)
        return [(a, b, odd), (b, a, odd)]
    head = int(query["head"])
    out: list[tuple[int, int, int]] = []
    for i, p in enumerate(picks):
        before = {cands[q] for q in picks[: i + 1]}
        out.extend((head, cands[p], c) for c in cands if c not in before)
    return out


def trial_row(query: dict, picks: list[int]) -> list[int]:
    """An answer as a trial sampler's row: ``[head, picks..., the others]`` or ``[a, b, odd]``.

    The layouts of :meth:`~tripletsearch.RankedChoices.rows` and
    :meth:`~tripletsearch.OddOneOut.rows` (the others in their order on screen).
    """
    cands = [int(c) for c in query["candidates"]]
    chosen = [cands[p] for p in picks]
    rest = [c for c in cands if c not in chosen]
    if is_odd(query):
        return [*rest, chosen[0]]
    return [int(query["head"]), *chosen, *rest]


def pick_steps(query: dict, picks: list[int] | None) -> list[tuple[dict, int]]:
    """An answer's picks as choices among those left: (query of the choice, position picked).

    A ranked answer's i-th pick is a choice among the candidates not picked before it (a
    query of those, its position among them); an odd-one-out's, the odd one of three; a
    skip (``picks`` None), each of its picks a first pick that agrees with nothing
    (position -1; the choice among all the candidates, r times).
    """
    if picks is None:
        return [({**query, "picks": 1}, -1)] * int(query.get("picks", 1))
    cands = [int(c) for c in query["candidates"]]
    if is_odd(query):
        return [(query, picks[0])]
    out = []
    left = list(cands)
    for p in picks:
        item = cands[p]
        out.append(({"head": query["head"], "candidates": list(left)}, left.index(item)))
        left.remove(item)
    return out


def first_pick_probs(emb: Any, queries: list[dict]) -> list[np.ndarray]:
    """Per query, the probability of each answer's first pick by the embedding ``emb``.

    A head and candidates: the model's choice among them (``oracle.choice_prob``);
    an odd-one-out: of each item being the odd one (the likelihood of its pair being the
    closest). Queries of one size are computed together.
    """
    out: list[np.ndarray | None] = [None] * len(queries)
    groups: dict[tuple[bool, int], list[int]] = {}
    for i, q in enumerate(queries):
        groups.setdefault((is_odd(q), len(q["candidates"])), []).append(i)
    X = np.asarray(emb.embedding_)
    oracle: Any = emb.oracle_
    for (odd, _size), idx in groups.items():
        if odd:
            P = _odd_probs(oracle, X, [queries[i]["candidates"] for i in idx])
        else:
            heads = [int(queries[i]["head"]) for i in idx]
            cands = [[int(c) for c in queries[i]["candidates"]] for i in idx]
            P = oracle.choice_prob(X, heads, cands, n_jobs=1)
        for j, i in enumerate(idx):
            out[i] = np.asarray(P[j], dtype=np.float64)
    return [p for p in out if p is not None]


def _odd_probs(oracle: Any, X: np.ndarray, items: list[list[int]]) -> np.ndarray:
    """(m, 3): the probability of each of three items being the odd one (sums to 1)."""
    rows = np.asarray(items, dtype=np.int64).reshape(-1, 3)
    logs = np.column_stack(
        [trial_log_prob(oracle, X, OddOneOut(rows, rows[:, j]), n_jobs=1) for j in range(3)]
    )
    logs -= logs.max(axis=1, keepdims=True)
    P = np.exp(logs)
    return P / P.sum(axis=1, keepdims=True)
