"""A database search's record: its answers recorded, its JSON snapshot and their replay."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_index_array, check_state, resolve_n_jobs
from ._items import _check_offered, _fingerprint
from ._settings import _STATE_VERSION, DiscreteSettings

if TYPE_CHECKING:
    from ._session import DiscreteSearch


def _record_of(
    search: DiscreteSearch, shown: np.ndarray, item: Any, found: bool, offered: np.ndarray
) -> dict:
    """A history record (``offered`` only with guesses: the paper's records unchanged)."""
    record = {"shown": shown.tolist(), "item": item, "found": found}
    if search.guesses:
        record["offered"] = offered.tolist()
    return record


def _end(search: DiscreteSearch, shown: np.ndarray, target: int, offered: np.ndarray) -> None:
    """The search ends: ``target`` was among ``shown`` or ``offered``."""
    search._history.append(_record_of(search, shown, target, True, offered))
    search._pending = None
    search._done = True
    search._target = target


def _record(search: DiscreteSearch, shown: np.ndarray, pos: int, offered: np.ndarray) -> None:
    """Record the answer into the posterior and the history.

    The answer: the item at ``pos`` of ``shown`` picked; -1: a skip; the strip
    ``offered`` passed over.
    """
    search._searcher.update(shown, pos, offered if len(offered) else None)
    search._history.append(
        _record_of(search, shown, None if pos < 0 else int(shown[pos]), False, offered)
    )
    search._pending = None
    if search._searcher.n_unshown == 0:
        search._done = True


def session_state(search: DiscreteSearch) -> dict:
    """:meth:`DiscreteSearch.to_dict` (under the session's lock)."""
    return {
        "version": _STATE_VERSION,
        "n_items": int(search.n_items),
        "dim": int(search._X.shape[1]),
        "fingerprint": _fingerprint(search._X),
        **search.settings.to_dict(),
        **search._user_state(),  # the estimates (for readers; from_dict replays)
        "seed": str(search._seed),
        "history": search.history,
        "pending": None if search._pending is None else search._pending.tolist(),
        **(
            {"pending_offered": search._offered.tolist() if search._pending is not None else None}
            if search.guesses
            else {}
        ),
        "done": search._done,
        # after observe(): the history is replayed as observed, not re-asked
        **({"observed": True} if search._observed else {}),
    }


def restore_session(
    cls: type[DiscreteSearch], state: Any, X: Any, n_jobs: int | None
) -> DiscreteSearch:
    """:meth:`DiscreteSearch.from_dict`: the session of ``state`` over ``X``, replayed."""
    seed = check_state(state, tuple(range(1, _STATE_VERSION + 1)))
    obj = cls.__new__(cls)
    try:
        obj._setup(X, DiscreteSettings.from_dict(state), seed, resolve_n_jobs(n_jobs))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"state: malformed ({exc!r})") from None
    except ValueError as exc:  # a bad value in the state (X's own errors say "X:")
        raise (exc if str(exc).startswith("X:") else ValueError(f"state: {exc}")) from None
    if state.get("n_items") != obj.n_items or state.get("fingerprint") != _fingerprint(obj._X):
        raise ValueError("state: X is not the database this session was created with")
    history = state.get("history")
    if not isinstance(history, list):
        raise ValueError("state: history must be a list")
    for step, h in enumerate(history):
        _replay(obj, step, h, observed=state.get("observed") is True)
    _replay_pending(
        obj,
        state.get("pending"),
        observed=state.get("observed") is True,
        offered=state.get("pending_offered"),
    )
    if bool(state.get("done")) != obj._done:
        raise ValueError("state: 'done' does not match the history")
    return obj


def _replay(search: DiscreteSearch, step: int, record: Any, observed: bool) -> None:
    """Replay history record ``step`` of a state (asked again, or ``observed``)."""
    try:
        item = record["item"] if "item" in record else record["choice"]
        shown, found = record["shown"], record["found"]
        offered = record.get("offered")
    except (KeyError, TypeError, AttributeError):
        raise ValueError(f"state: history entry {step} is malformed") from None
    if search._done:
        raise ValueError(f"state: history continues after the search ended (entry {step})")
    if not observed:
        q = search.ask()
        if not isinstance(shown, list) or q.tolist() != shown:
            raise ValueError(
                f"state: history entry {step} does not replay "
                f"(shown {shown}, expected {q.tolist()})"
            )
        if search.guesses and offered != search._offered.tolist():
            raise ValueError(
                f"state: history entry {step} does not replay "
                f"(offered {offered}, expected {search._offered.tolist()})"
            )
    try:
        if observed:
            search.observe(shown, item, found, offered)
        else:
            search.found(item) if found else search.tell(item)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"state: history entry {step}: {exc}") from None


def _replay_pending(
    search: DiscreteSearch, pending: Any, observed: bool, offered: Any = None
) -> None:
    """The state's pending query: as it was shown (``observed``), or asked again."""
    if pending is None:
        return
    if observed and not search._done:
        try:  # the pending items as they were shown
            q = check_index_array(pending, "pending", 1, search.n_items)
            strip = _check_offered(offered, q, search.guesses, search.n_items)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"state: {exc}") from None
        if not 1 <= len(q) <= search.n_choices or len(np.unique(q)) != len(q):
            raise ValueError("state: the pending query is malformed")
        search._pending, search._offered = q, strip
    elif search.ask().tolist() != pending or (
        search.guesses and search._offered.tolist() != offered
    ):
        raise ValueError("state: the pending query does not replay")
