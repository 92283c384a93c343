"""Live searchers: an in-process cache of sessions' searchers, caught up from the database.

Workers share no memory: the database holds every screen and answer, and a session's
searcher is rebuilt from them (its mode replays the answers as they were shown, so a
session started by an earlier version of the library continues). The cache only saves
the rebuild; an entry that another worker has overtaken is caught up, and one that an undo
elsewhere made stale is rebuilt.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from .errors import Conflict
from .modes import Mode
from .store import SessionRow, Store, WriteConflict

__all__ = ["LiveSearchers"]


@dataclass
class _Live:
    """A live searcher and the session state it reflects.

    The screen it is at, the undos it has seen, the answers it holds.
    """

    searcher: Any
    position: int
    undos: int
    n_queries: int


class LiveSearchers:
    """Live searchers by session id (LRU, ``size`` entries) and a lock per session."""

    def __init__(self, store: Store, size: int):
        self.store, self.size = store, size
        self._d: OrderedDict[str, _Live] = OrderedDict()
        self._lock = threading.Lock()
        self._stripes = [threading.Lock() for _ in range(256)]

    def lock(self, sid: str) -> threading.Lock:
        """The lock that serializes this process's answers to session ``sid``."""
        return self._stripes[hash(sid) % len(self._stripes)]

    def _get(self, sid: str) -> _Live | None:
        with self._lock:
            v = self._d.get(sid)
            if v is not None:
                self._d.move_to_end(sid)
            return v

    def put(self, sid: str, searcher: Any, position: int, undos: int, n_queries: int) -> None:
        """Keep ``searcher``: at screen ``position``, after ``undos``, holding ``n_queries``."""
        with self._lock:
            self._d[sid] = _Live(searcher, position, undos, n_queries)
            self._d.move_to_end(sid)
            while len(self._d) > self.size:
                self._d.popitem(last=False)

    def drop(self, sid: str) -> None:
        """Forget session ``sid``'s searcher."""
        with self._lock:
            self._d.pop(sid, None)

    def at(self, row: SessionRow, mode: Mode) -> Any:
        """The session's searcher holding its answers that count.

        The cached one, caught up from the database when another worker moved the session
        on, or rebuilt from the stored screens (after an undo elsewhere, a restart, an
        upgrade). :class:`~.store.WriteConflict` when the session moved on meanwhile.
        """
        live = self._get(row.id)
        if live is None or live.undos != row.undos or live.position > row.screen:
            live = _Live(mode.searcher(row.n_choices, row.params, int(row.seed)), 0, 0, 0)
        if live.position < row.screen:
            for h in self.store.effective(row.id, start=live.position):
                if h["found"]:
                    raise Conflict("this session is finished")
                mode.apply(live.searcher, h["query"], h["choice"])
                live.n_queries += 1
        if live.n_queries != row.n_queries:  # the session moved on meanwhile
            raise WriteConflict(row.id)
        return live.searcher
