"""Sessions shared by threads: one lock per session, held by every public method.

A web server answers many requests at once; two of them may reach the same search session.
The native searchers take their own lock too (an interleaving of native calls cannot corrupt
memory); this lock keeps a session's Python state (the pending query, the history) and its
native state one consistent, replayable whole: calls on one session take turns.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def synchronized(method: F) -> F:
    """Runs ``method`` holding ``self._lock`` (a ``threading.RLock``)."""

    @functools.wraps(method)
    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return locked  # type: ignore[return-value]


def new_lock() -> threading.RLock:
    return threading.RLock()
