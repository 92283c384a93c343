"""The issue's replay of recorded human answers through a sampler (simpler than
``replay_collection``): what a sampler's queries learn on real noise.

The sampler asks :data:`BATCH` queries at a time; each is answered with an unused
recorded answer to the same head and unordered pair, a used one when every answer to it
was used (drawn among them), and dropped when the pair was never asked of that head. The
answers are told after each batch. ``Embedding("gamma-ckl", dim=2)`` is fitted to the
first 400, 800 and 1,600 answers and scored on the recorded answers to random test
queries (:func:`~tripletsearch.outcomes.triplet_agreement`).

The recorded sets are pooled: their training answers answer the queries, their test
answers score the fits. Besides the bundled NEXT eggs (:func:`~tripletsearch.collect.next_eggs`),
a study of the same items in the data folders' format (``triplets.csv`` with
``head,closer,farther`` and a ``sampler`` column whose ``Test`` rows are the random test
queries) is read by :func:`recorded_folder`.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tripletsearch import Embedding, TripletSampler
from tripletsearch.collect import RecordedAnswers
from tripletsearch.outcomes import triplet_agreement

BATCH = 10
BUDGETS = (400, 800, 1600)


class Answers:
    """Recorded answers by (head, unordered pair): unused first, then reused at random."""

    def __init__(self, rows: np.ndarray, rng: np.random.Generator):
        self.rng = rng
        self.fresh: dict[tuple[int, int, int], list[int]] = {}
        self.all: dict[tuple[int, int, int], list[int]] = {}
        for i in rng.permutation(len(rows)).tolist():
            h, a, b = (int(v) for v in rows[i])
            key = (h, min(a, b), max(a, b))
            self.fresh.setdefault(key, []).append(i)
            self.all.setdefault(key, []).append(i)
        self.rows = rows
        self.reused = 0

    def answer(self, query: np.ndarray) -> np.ndarray | None:
        """The row answering ``(head, a, b)``; None when that query was never recorded."""
        h, a, b = (int(v) for v in query[:3])
        key = (h, min(a, b), max(a, b))
        stack = self.fresh.get(key)
        if stack:
            return self.rows[stack.pop()]
        every = self.all.get(key)
        if not every:
            return None
        self.reused += 1
        return self.rows[every[int(self.rng.integers(len(every)))]]


def recorded_folder(folder: str | Path, n_items: int = 30) -> RecordedAnswers:
    """A recorded study in a data folder (``triplets.csv``: head, closer, farther, sampler)."""
    path = Path(folder) / "triplets.csv"
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    if not rows or not {"head", "closer", "farther", "sampler"} <= set(rows[0]):
        raise ValueError(f"{path}: expected the columns head, closer, farther and sampler")
    T = np.array([[int(r["head"]), int(r["closer"]), int(r["farther"])] for r in rows])
    if T.min() < 0 or T.max() >= n_items:
        raise ValueError(f"{path}: item ids outside 0..{n_items - 1}")
    test = np.array([r["sampler"] == "Test" for r in rows])
    if not test.any() or test.all():
        raise ValueError(f"{path}: needs both Test rows (to score) and others (to replay)")
    return RecordedAnswers(
        Path(folder).name, n_items, T[~test], np.array([r["sampler"] for r in rows])[~test],
        np.zeros(int((~test).sum())), T[test],
    )  # fmt: skip


def pooled(sets: Sequence[RecordedAnswers]) -> tuple[int, np.ndarray, np.ndarray]:
    """``(n_items, train, test)`` of recorded sets on the same items."""
    n = {s.n_items for s in sets}
    if len(n) != 1:
        raise ValueError(f"sets: recorded on different items ({sorted(n)})")
    return n.pop(), np.vstack([s.train for s in sets]), np.vstack([s.test for s in sets])


def replay(
    sets: Sequence[RecordedAnswers],
    method: str,
    seed: int,
    budgets: Sequence[int] = BUDGETS,
    **sampler_kw,
) -> dict:
    """One run: the held-out accuracy of the fit at each budget, and what the run took.

    Returns ``{"accuracy": {budget: share}, "asked": queries asked, "dropped": never
    recorded, "reused": answers used again}``.
    """
    n_items, train, test = pooled(sets)
    answers = Answers(train, np.random.default_rng([seed, 7]))
    sampler = TripletSampler(n_items, 2, method=method, random_state=seed, n_jobs=1, **sampler_kw)
    told = np.empty((0, 3), dtype=np.int64)
    asked = dropped = 0
    most = max(budgets)
    while len(told) < most:
        got = [answers.answer(q) for q in sampler.ask(BATCH)]
        asked += BATCH
        rows = [r for r in got if r is not None]
        dropped += BATCH - len(rows)
        if rows:
            sampler.tell(np.array(rows))
            told = np.vstack([told, rows])
        if asked > 200 * most:
            raise RuntimeError(f"{method}: {asked} queries asked for {len(told)} answers")
    accuracy = {}
    for m in budgets:
        emb = Embedding("gamma-ckl", dim=2, n_items=n_items, random_state=seed, n_jobs=1)
        emb.fit(told[:m])
        accuracy[m] = float(np.mean(triplet_agreement(emb.embedding_, test)))
    return {"accuracy": accuracy, "asked": asked, "dropped": dropped, "reused": answers.reused}
