"""Stored sessions as records: a session's row and its answers, the outcome rules applied.

The export and the study report read sessions through :class:`RecordedSession`, which
asks the session's mode what its screens showed and what its result found, and applies the
library's outcome rules (:mod:`tripletsearch.outcomes`): which sessions found their target,
which answered screens are comparisons.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ...outcomes import found_target, is_comparison
from ..modes import Mode, mode_class
from ..store import SessionRow, Store, counted_answers

__all__ = ["RecordedSession", "Choice", "recorded_sessions", "found_flags"]


class Choice(NamedTuple):
    """An answered screen that is a comparison: its number, the items shown, the item picked."""

    screen: int
    shown: list[int]
    item: int


@dataclass(frozen=True)
class RecordedSession:
    """A stored session: its ``row`` and its ``history`` (every answer and undo, in order)."""

    row: SessionRow
    history: list[dict]

    @property
    def mode(self) -> type[Mode]:
        """The class that reads this session's screens and result."""
        return mode_class(self.row.mode)

    @property
    def answers(self) -> list[dict]:
        """The answers that count (:func:`~..store.is_counted`: not undos, not undone)."""
        return counted_answers(self.history)

    @property
    def said_found(self) -> bool:
        """Whether the person ended the session with "this is it" (mix: accepted)."""
        return any(h["found"] for h in self.history)

    @property
    def found_item(self) -> int | None:
        """The item its result names as found (None: none)."""
        return self.mode.found_item(self.row.result)

    @property
    def target(self) -> int | None:
        """The target: given beforehand (a study's), or the item the person found."""
        return self.row.target if self.row.target is not None else self.found_item

    @cached_property
    def choices(self) -> list[Choice]:
        """The answers that are comparisons with a known target, in order.

        Picks (not skips, not "this is it") among catalogue items, on screens that do not
        show the target (:func:`tripletsearch.outcomes.is_comparison`).
        """
        target = self.target
        if target is None:
            return []
        picks = []
        for h in self.answers:
            shown = self.mode.shown_items(h["query"])
            if h["found"] or h["choice"] is None or shown is None:
                continue
            picks.append(Choice(h["number"], shown, shown[h["choice"]]))
        keep = is_comparison(np.full(len(picks), target), _padded([c.shown for c in picks]))
        return [c for c, k in zip(picks, keep) if k]


def _padded(rows: Sequence[list[int]]) -> np.ndarray:
    """Rows of item ids as one array, short rows padded with their own first item."""
    width = max((len(r) for r in rows), default=0)
    out = np.zeros((len(rows), width), dtype=np.int64)
    for i, r in enumerate(rows):
        out[i] = list(r) + [r[0]] * (width - len(r))
    return out


def recorded_sessions(store: Store) -> Iterator[RecordedSession]:
    """Every session of ``store``, by creation time, with its history."""
    by_session = store.all_answers()
    for row in store.iter_sessions():
        yield RecordedSession(row, by_session.get(row.id, []))


def found_flags(sessions: Sequence[RecordedSession]) -> np.ndarray:
    """Which of ``sessions`` found their target (:func:`tripletsearch.outcomes.found_target`)."""

    def ids(values: list[int | None]) -> np.ndarray:
        return np.array([-1 if v is None else v for v in values], dtype=np.int64)

    return found_target(
        np.array([s.said_found for s in sessions], dtype=bool),
        ids([s.found_item for s in sessions]),
        ids([s.row.target for s in sessions]),
    )
