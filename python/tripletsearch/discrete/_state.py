"""A database search's record: its answers, its JSON snapshot and their replay.

:class:`Answers` is what a :class:`DiscreteSearch` has been asked and told (the pending
screen, the history, how it ended); the search holds one and changes it only through its
methods. :func:`snapshot` writes a search's state from its parts, :func:`replay` tells a new
search the answers of a state through the search's own public methods (``ask``, ``tell``,
``found``, ``observe``), and :func:`state_errors` says a bad state's errors as the state's.
This module knows no search class: it imports nothing of the session's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .._validation import check_index_array
from ._items import _check_offered, _fingerprint
from ._settings import _STATE_VERSION, DiscreteSettings


class Answers:
    """What a search was asked and told: the pending screen, the history, how it ended.

    Parameters
    ----------
    guesses : bool
        Whether the search offers best guesses (its records then keep the strip offered).

    Attributes
    ----------
    pending : ndarray or None
        The screen asked and not yet answered.
    offered : ndarray
        The pending screen's strip of best guesses.
    history : list of dict
        One record per screen answered, keyed as ``DiscreteSearch.observe``'s arguments.
    done : bool
        The target was found or every item was shown.
    target : int or None
        The found item.
    observed : bool
        Some answers came from ``observe``: a state replays them as observed.
    """

    def __init__(self, guesses: bool) -> None:
        self.guesses = guesses
        self.pending: np.ndarray | None = None
        self.offered: np.ndarray = np.empty(0, dtype=np.int64)
        self.history: list[dict[str, Any]] = []
        self.done = False
        self.target: int | None = None
        self.observed = False

    def _record_of(self, shown: np.ndarray, item: Any, found: bool, offered: np.ndarray) -> dict:
        """A history record (``offered`` only with guesses: the paper's records unchanged)."""
        record = {"shown": shown.tolist(), "item": item, "found": found}
        if self.guesses:
            record["offered"] = offered.tolist()
        return record

    def end(self, shown: np.ndarray, target: int, offered: np.ndarray) -> None:
        """The search ends: ``target`` was among ``shown`` or ``offered``."""
        self.history.append(self._record_of(shown, target, True, offered))
        self.pending = None
        self.done = True
        self.target = target

    def record(self, shown: np.ndarray, item: int | None, offered: np.ndarray, last: bool) -> None:
        """An answer: ``item`` of ``shown`` picked (None: a skip), the strip passed over.

        ``last``: no item is left unshown (the search is done).
        """
        self.history.append(self._record_of(shown, item, False, offered))
        self.pending = None
        if last:
            self.done = True

    def to_dict(self) -> dict[str, Any]:
        """The answers' part of a search's state (history, pending screen, end)."""
        return {
            "history": [dict(h) for h in self.history],
            "pending": None if self.pending is None else self.pending.tolist(),
            **(
                {"pending_offered": self.offered.tolist() if self.pending is not None else None}
                if self.guesses
                else {}
            ),
            "done": self.done,
            # after observe(): the history is replayed as observed, not re-asked
            **({"observed": True} if self.observed else {}),
        }


def snapshot(
    X: np.ndarray, settings: DiscreteSettings, estimates: dict, seed: int, answers: Answers
) -> dict:
    """A search's state: its database's size and fingerprint, settings, seed and answers.

    ``estimates``: the user model's (for readers; a state is restored by its replay).
    """
    return {
        "version": _STATE_VERSION,
        "n_items": int(X.shape[0]),
        "dim": int(X.shape[1]),
        "fingerprint": _fingerprint(X),
        **settings.to_dict(),
        **estimates,
        "seed": str(seed),
        **answers.to_dict(),
    }


@contextmanager
def state_errors() -> Iterator[None]:
    """A search built from a state: its errors said as the state's (X's own say "X:")."""
    try:
        yield
    except (KeyError, TypeError) as exc:
        raise ValueError(f"state: malformed ({exc!r})") from None
    except ValueError as exc:  # a bad value in the state
        raise (exc if str(exc).startswith("X:") else ValueError(f"state: {exc}")) from None


def replay(search: Any, answers: Answers, state: Any, X: np.ndarray) -> None:
    """Tell ``search``, new over ``X``, the answers of ``state``, checking them on the way.

    ``answers``: the search's own record (a pending screen as it was shown is put there).
    """
    if state.get("n_items") != search.n_items or state.get("fingerprint") != _fingerprint(X):
        raise ValueError("state: X is not the database this session was created with")
    history = state.get("history")
    if not isinstance(history, list):
        raise ValueError("state: history must be a list")
    observed = state.get("observed") is True
    for step, h in enumerate(history):
        _replay(search, step, h, observed=observed)
    _replay_pending(
        search, answers, state.get("pending"), observed, offered=state.get("pending_offered")
    )
    if bool(state.get("done")) != search.done:
        raise ValueError("state: 'done' does not match the history")


def _replay(search: Any, step: int, record: Any, observed: bool) -> None:
    """Replay history record ``step`` of a state (asked again, or ``observed``)."""
    try:
        item = record["item"] if "item" in record else record["choice"]
        shown, found = record["shown"], record["found"]
        offered = record.get("offered")
    except (KeyError, TypeError, AttributeError):
        raise ValueError(f"state: history entry {step} is malformed") from None
    if search.done:
        raise ValueError(f"state: history continues after the search ended (entry {step})")
    if not observed:
        q = search.ask()
        if not isinstance(shown, list) or q.tolist() != shown:
            raise ValueError(
                f"state: history entry {step} does not replay "
                f"(shown {shown}, expected {q.tolist()})"
            )
        if search.guesses and offered != search.offered.tolist():
            raise ValueError(
                f"state: history entry {step} does not replay "
                f"(offered {offered}, expected {search.offered.tolist()})"
            )
    try:
        if observed:
            search.observe(shown, item, found, offered)
        else:
            search.found(item) if found else search.tell(item)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"state: history entry {step}: {exc}") from None


def _replay_pending(
    search: Any, answers: Answers, pending: Any, observed: bool, offered: Any = None
) -> None:
    """The state's pending query: as it was shown (``observed``), or asked again."""
    if pending is None:
        return
    if observed and not search.done:
        try:  # the pending items as they were shown
            q = check_index_array(pending, "pending", 1, search.n_items)
            strip = _check_offered(offered, q, search.guesses, search.n_items)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"state: {exc}") from None
        if not 1 <= len(q) <= search.n_choices or len(np.unique(q)) != len(q):
            raise ValueError("state: the pending query is malformed")
        answers.pending, answers.offered = q, strip
    elif search.ask().tolist() != pending or (
        search.guesses and search.offered.tolist() != offered
    ):
        raise ValueError("state: the pending query does not replay")
