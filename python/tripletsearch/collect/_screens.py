"""Screens past the triplet: what a :class:`~tripletsearch.TripletSampler` asks and is told.

A sampler's ``trial`` decides its screens: ``"triplet"`` (a head and two candidates, one
pick), ``"rank"`` (a head and k candidates, r of them ranked: PsiZ's "8-rank-2", a k-way
choice when r = 1) and ``"odd-one-out"`` (three items, the odd one picked: the THINGS task).
:class:`ScreenKind` holds that choice once: its checks, its answers as rows (the layouts of
:meth:`RankedChoices.rows` and :meth:`OddOneOut.rows`), the trials to fit, the information a
screen carries at most. Simulated people answer screens here too (:func:`ranked_answer`,
:func:`odd_one_out_answer`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np

from .. import _core
from .._params import Interval, check_param
from .._validation import check_index_array
from ..trials import OddOneOut, RankedChoices

__all__ = ["TRIALS", "ScreenKind", "ranked_answer", "odd_one_out_answer"]

TRIALS = ("triplet", "rank", "odd-one-out")
DEFAULT_RANK = (8, 2)  # PsiZ's 8-rank-2


@dataclass(frozen=True)
class ScreenKind:
    """A sampler's screens: ``trial`` with ``k`` candidates and ``r`` picks.

    ``"triplet"``: k = 2, r = 1 (its answers rows ``(head, closer, farther)``);
    ``"rank"``: a head and k candidates, answers ``(head, pick 1..r, the others)``;
    ``"odd-one-out"``: k = 3 items, r = 1, answers ``(a, b, odd)``.
    """

    trial: str = "triplet"
    k: int = 2
    r: int = 1

    @classmethod
    def of(cls, trial: Any, n_choices: Any, picks: Any, n_items: int) -> ScreenKind:
        """The checked kind of ``TripletSampler(trial=, n_choices=, picks=)``."""
        if trial not in TRIALS:
            raise ValueError(f"trial: expected one of {list(TRIALS)}, got {trial!r}")
        positive = [Interval(Integral, 1, None, closed="left"), None]
        n_choices = check_param(n_choices, "n_choices", positive)
        picks = check_param(picks, "picks", positive)
        fixed = {"triplet": (2, 1), "odd-one-out": (3, 1)}.get(trial)
        if fixed is not None:
            for name, value, want in (("n_choices", n_choices, fixed[0]), ("picks", picks, 1)):
                if value is not None and value != want:
                    raise ValueError(f"{name}: a {trial} screen has {want}, got {value}")
            return cls(trial, *fixed)
        k = DEFAULT_RANK[0] if n_choices is None else int(n_choices)
        r = (DEFAULT_RANK[1] if k > DEFAULT_RANK[1] else 1) if picks is None else int(picks)
        if not 2 <= k <= min(n_items - 1, 64):
            raise ValueError(
                f"n_choices: between 2 and {min(n_items - 1, 64)} candidates (n_items - 1, "
                f"at most 64), got {k}"
            )
        if not 1 <= r < k:
            raise ValueError(f"picks: between 1 and n_choices - 1 = {k - 1}, got {r}")
        return cls("rank", k, r)

    @property
    def is_triplet(self) -> bool:
        return self.trial == "triplet"

    @property
    def width(self) -> int:
        """Columns of an answer's row (and of a screen)."""
        return 3 if self.trial != "rank" else self.k + 1

    @property
    def bits(self) -> float:
        """The most an answer tells, log2 of its outcomes (triplet 1, 8-rank-2 5.8)."""
        return math.log2(math.perm(self.k, self.r))

    def burn_in(self, answers: int) -> int:
        """A burn-in of ``answers`` triplets in screens: as many bits at most."""
        return max(1, math.ceil(answers / self.bits)) if answers else 0

    def rows(self, answers: Any, n_items: int) -> np.ndarray:
        """Told answers as checked rows (int64, (m, width)).

        A :class:`RankedChoices` / :class:`OddOneOut` of this kind, or rows in their layout.
        """
        if self.trial == "rank" and isinstance(answers, RankedChoices):
            if (answers.n_choices, answers.n_picks) != (self.k, self.r) or not answers.ordered:
                raise ValueError(
                    f"rows: expected ordered {self.k}-candidate trials with {self.r} picks, "
                    f"got {answers!r}"
                )
            answers.check_n_items(n_items)
            return answers.rows()
        if self.trial == "odd-one-out" and isinstance(answers, OddOneOut):
            answers.check_n_items(n_items)
            return answers.rows()
        if isinstance(answers, (RankedChoices, OddOneOut)):
            raise TypeError(f"rows: a {self.trial} sampler is told {self.trial} answers")
        T = check_index_array(answers, "rows", 2, n_items, cols=self.width)
        for r, row in enumerate(T.tolist()):
            if len(set(row)) < len(row):
                raise ValueError(f"rows: row {r} {row} names an item twice")
        return T

    def trials(self, rows: np.ndarray) -> Any:
        """The trial set of told rows (what a fit takes)."""
        if self.trial == "rank":
            return RankedChoices(rows[:, 0], rows[:, 1:], rows[:, 1 : 1 + self.r])
        return OddOneOut(rows, rows[:, 2])

    def triplets(self, rows: np.ndarray) -> np.ndarray:
        """The triplets the told rows imply (the cut triplets)."""
        return rows if self.is_triplet else self.trials(rows).to_triplets()

    def fit_input(self, rows: np.ndarray) -> Any:
        """What a fit takes of the told rows.

        The trials themselves (their own likelihood) where :meth:`Embedding.fit` takes
        trials, else the triplets they imply.
        """
        if self.is_triplet:
            return rows
        return self.trials(rows) if embedding_fits_trials() else self.triplets(rows)


@functools.lru_cache(maxsize=1)
def embedding_fits_trials() -> bool:
    """Whether :meth:`Embedding.fit` takes trial sets (probed once, on a tiny problem)."""
    from ..embedding import Embedding

    trials = RankedChoices([0, 1], [[1, 2, 3], [0, 2, 3]], [[2], [3]])
    try:
        Embedding("gamma-ckl", 1, gamma=2.0, n_items=4, random_state=0).fit(trials)
    except (TypeError, ValueError):
        return False
    return True


# ---------------------------------------------------------------------- simulated people
def _log_weights(spec: Any, X: np.ndarray, head: int, items: np.ndarray) -> np.ndarray:
    """The model's choice log weights ``-f(D(head, item))`` of items seen from ``head``."""
    F = _core.collect_log_odds(spec, X, np.ascontiguousarray(X[head : head + 1]), items, 1)
    return -F[:, 0]


def ranked_answer(
    spec: Any, X: np.ndarray, screen: np.ndarray, r: int, lapse: float, u: np.ndarray
) -> np.ndarray:
    """People's ranked answer to ``screen`` ``(head, c_1..c_k)``: ``(head, picks, others)``.

    Successive choices among those left by the oracle's choice probability (``spec``: its
    native spec; P(c) proportional to d(h, c)^-gamma for gamma-CKL), each pick a lapse
    (uniform among those left) when its ``u[j, 0] < lapse``; ``u`` (r, 2) uniform draws.
    """
    head, left = int(screen[0]), [int(c) for c in screen[1:]]
    v = _log_weights(spec, X, head, np.asarray(left, dtype=np.int64))
    picked = []
    for j in range(r):
        if u[j, 0] < lapse:
            p = np.full(len(left), 1.0 / len(left))
        else:
            p = np.exp(v - v.max())
            p /= p.sum()
        at = min(int(np.searchsorted(np.cumsum(p), u[j, 1] * p.sum(), side="right")), len(p) - 1)
        picked.append(left.pop(at))
        v = np.delete(v, at)
    return np.array([head, *picked, *left], dtype=np.int64)


def odd_one_out_answer(
    spec: Any, X: np.ndarray, screen: np.ndarray, lapse: float, u: np.ndarray
) -> np.ndarray:
    """People's answer to three items: ``(a, b, odd)``, the odd one last.

    P(odd = a) proportional to the model's similarity of the other two (d(b, c)^-gamma for
    gamma-CKL); a lapse (a uniform odd one) when ``u[0] < lapse``.
    """
    a, b, c = (int(v) for v in screen)
    v = np.array(
        [
            _log_weights(spec, X, b, np.array([c]))[0],
            _log_weights(spec, X, a, np.array([c]))[0],
            _log_weights(spec, X, a, np.array([b]))[0],
        ]
    )
    p = np.full(3, 1.0 / 3) if u[0] < lapse else np.exp(v - v.max()) / np.exp(v - v.max()).sum()
    odd = min(int(np.searchsorted(np.cumsum(p), u[1] * p.sum(), side="right")), 2)
    items = [a, b, c]
    rest = [x for i, x in enumerate(items) if i != odd]
    return np.array([*rest, items[odd]], dtype=np.int64)
