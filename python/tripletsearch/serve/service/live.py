"""Live searchers: an in-process cache of sessions' searchers, caught up from the database.

Workers share no memory: the database holds every screen and answer, and a session's
searcher is rebuilt from them (its mode replays the answers as they were shown, so a
session started by an earlier version of the library continues). The cache only saves
the rebuild; an entry that another worker has overtaken is caught up, and one that an undo
elsewhere made stale is rebuilt.

The cache is bounded by bytes (each searcher's, as its mode counts them) and by count:
least recently used searchers are evicted first, and an evicted session is rebuilt on its
next request. A searcher that a request is using is pinned (never evicted while in use,
and counted); before a searcher is built its bytes are reserved. A request whose searcher
cannot fit, because requests in flight hold the budget or because one searcher is larger
than it, gets :class:`~.errors.Busy` (503 with ``Retry-After``), never an allocation past
the budget.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..errors import Busy, Conflict
from ..modes import Mode
from ..store import SessionRow, Store, WriteConflict
from .memory import format_size

__all__ = ["LiveSearchers"]


class _Unlocked:
    """A lock no one else takes (:meth:`LiveSearchers.hold` of a fresh session)."""

    def acquire(self, blocking: bool = True) -> bool:
        return True

    def release(self) -> None:
        pass


_NO_LOCK: Any = _Unlocked()


@dataclass
class _Live:
    """A live searcher and the session state it reflects.

    The screen it is at, the undos it has seen, the answers it holds, its bytes, and whether
    a request is using it (pinned). ``searcher`` None: room reserved for one being built.
    """

    searcher: Any
    position: int
    undos: int
    n_queries: int
    nbytes: int
    pinned: bool = True


class LiveSearchers:
    """Live searchers by session id, least recently used evicted first, a lock per session.

    Parameters
    ----------
    store : Store
        The database the searchers are rebuilt from.
    size : int
        Searchers kept at most (evicted beyond it when no request holds them).
    budget : int, optional
        Bytes the searchers may hold together (None: no bound but ``size``).
    """

    #: Requests of sessions whose ids hash alike share a lock (a stripe) of so many.
    STRIPES = 256

    def __init__(self, store: Store, size: int, budget: int | None = None):
        if budget is not None and budget < 0:
            raise ValueError(f"budget: expected bytes >= 0, got {budget}")
        self.store, self.size, self.budget = store, int(size), budget
        self._d: OrderedDict[str, _Live] = OrderedDict()
        self._used = 0
        self._lock = threading.Lock()
        self._stripes = [threading.Lock() for _ in range(self.STRIPES)]
        self.evictions = 0  # searchers evicted to make room
        self.rebuilds = 0  # searchers built from the database (not new sessions)

    # ------------------------------------------------------------------ accounting
    def stats(self) -> dict[str, int | None]:
        """``{"searchers", "bytes", "budget", "pinned", "evictions", "rebuilds"}``."""
        with self._lock:
            return {
                "searchers": len(self._d),
                "bytes": self._used,
                "budget": self.budget,
                "pinned": sum(1 for v in self._d.values() if v.pinned),
                "evictions": self.evictions,
                "rebuilds": self.rebuilds,
            }

    def _remove(self, sid: str) -> None:  # under self._lock
        old = self._d.pop(sid, None)
        if old is not None:
            self._used -= old.nbytes

    def _make_room(self, need: int, *, strict: bool) -> None:
        """Evict unpinned searchers, oldest first, until ``need`` more bytes fit.

        And one more entry. ``strict``: :class:`Busy` when they cannot. Under ``self._lock``.
        """
        budget = self.budget

        def over() -> bool:
            return len(self._d) >= self.size or (budget is not None and self._used + need > budget)

        if over():
            for sid in [s for s, v in self._d.items() if not v.pinned]:
                self._remove(sid)
                self.evictions += 1
                if not over():
                    break
        if not strict or budget is None or self._used + need <= budget:
            return
        if need > budget:
            raise Busy(
                f"a search over this catalogue needs {format_size(need)} of memory and this "
                f"server keeps at most {format_size(budget)} of searches per worker: the "
                "server's operator should raise --memory",
                retry_after=60,
            )
        busy = sum(1 for v in self._d.values() if v.pinned)
        raise Busy(
            f"the server's memory for searches is taken by {busy} searches being answered "
            f"({format_size(self._used)} of {format_size(budget)}); try again in a moment",
            retry_after=2,
        )

    # ------------------------------------------------------------------ sessions
    @contextmanager
    def hold(self, sid: str, *, fresh: bool = False) -> Iterator[bool]:
        """Serialize this process's requests to session ``sid``; unpin its searcher after.

        Yields whether it waited for another request (of any session sharing the lock's
        stripe): the session may have moved on meanwhile. ``fresh``: a session being
        created, whose id no other request can know yet: no lock to wait on (a request of
        another session sharing its stripe never delays a new one), only the unpinning.
        """
        stripe = self._stripes[hash(sid) % len(self._stripes)]
        if fresh:
            stripe = _NO_LOCK
        waited = not stripe.acquire(blocking=False)
        if waited:
            stripe.acquire()
        try:
            try:
                yield waited
            finally:
                with self._lock:
                    v = self._d.get(sid)
                    if v is not None:
                        if v.searcher is None:  # reserved, never built
                            self._remove(sid)
                        else:
                            v.pinned = False
        finally:
            stripe.release()

    def reserve(self, sid: str, nbytes: int) -> None:
        """Room for session ``sid``'s searcher of ``nbytes``, pinned until the hold ends.

        :class:`Busy` when it cannot fit. Call within :meth:`hold`.
        """
        with self._lock:
            self._remove(sid)
            self._make_room(nbytes, strict=True)
            self._d[sid] = _Live(None, -1, -1, -1, int(nbytes))
            self._used += int(nbytes)

    def put(
        self, sid: str, searcher: Any, position: int, undos: int, n_queries: int, nbytes: int
    ) -> None:
        """Keep ``searcher`` of ``nbytes``: at screen ``position``, after ``undos``.

        Holding ``n_queries``; pinned until the hold ends (call within :meth:`hold`).
        """
        with self._lock:
            self._remove(sid)
            self._make_room(int(nbytes), strict=False)
            self._d[sid] = _Live(searcher, position, undos, n_queries, int(nbytes))
            self._d.move_to_end(sid)
            self._used += int(nbytes)

    def ahead(self, sid: str, screen: int) -> bool:
        """Whether this process's searcher of ``sid`` is past ``screen``.

        Then the session moved on since a row at ``screen`` was read.
        """
        with self._lock:
            v = self._d.get(sid)
            return v is not None and v.position > screen

    def drop(self, sid: str) -> None:
        """Forget session ``sid``'s searcher."""
        with self._lock:
            self._remove(sid)

    def _pinned(self, sid: str) -> _Live | None:
        with self._lock:
            v = self._d.get(sid)
            if v is None or v.searcher is None:
                return None
            v.pinned = True
            self._d.move_to_end(sid)
            return v

    def at(self, row: SessionRow, mode: Mode) -> Any:
        """The session's searcher holding its answers that count (call within :meth:`hold`).

        The cached one, caught up from the database when another worker moved the session
        on, or rebuilt from the stored screens (after an eviction, an undo elsewhere, a
        restart, an upgrade): its bytes reserved first (:class:`Busy` when they cannot fit).
        :class:`~.store.WriteConflict` when the session moved on meanwhile.
        """
        live = self._pinned(row.id)
        if live is None or live.undos != row.undos or live.position > row.screen:
            nbytes = mode.session_bytes(row.n_choices, row.params)
            self.reserve(row.id, nbytes)
            live = _Live(mode.searcher(row.n_choices, row.params, int(row.seed)), 0, 0, 0, nbytes)
            with self._lock:
                self.rebuilds += 1
                if row.id in self._d:
                    self._d[row.id].searcher = live.searcher
        if live.position < row.screen:
            for h in self.store.effective(row.id, start=live.position):
                if h["found"]:
                    raise Conflict("this session is finished")
                mode.apply(live.searcher, h["query"], h["choice"])
                live.n_queries += 1
        if live.n_queries != row.n_queries:  # the session moved on meanwhile
            raise WriteConflict(row.id)
        return live.searcher
