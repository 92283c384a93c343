"""The store's errors, and which errors are the database or its disk failing for a while.

A full disk, a locked SQLite file, a PostgreSQL server gone or restarting, a pool with no
connection free: a request that meets one is answered 503 with ``Retry-After`` and logged
in one line (:class:`~..web.middleware.BodyLimit`); any other exception is a bug.
"""

from __future__ import annotations

import errno
import sqlite3

import sqlalchemy as sa

__all__ = ["unavailable", "DISK_ERRNOS", "StoreError", "StoreBusy", "IdTaken", "WriteConflict"]


class StoreError(RuntimeError):
    """The database cannot be used (a newer schema, an unknown URL, ...)."""


class StoreBusy(StoreError):
    """A write kept losing races with others (retried, still contended): try again later."""


class IdTaken(Exception):
    """The new row's id is taken already: draw another."""


class WriteConflict(Exception):
    """A write found the row it needs taken.

    The session moved on under this request (another worker answered first), or a study
    slot has its session already.
    """


# an OSError of these numbers is the disk failing (full, over quota, broken, read-only)
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS})
_DATABASE = (
    sa.exc.OperationalError,  # SQLite: locked, full, I/O error; PostgreSQL: connection lost
    sa.exc.InterfaceError,  # a connection closed under the driver
    sa.exc.TimeoutError,  # no pooled connection free in time
    sa.exc.DisconnectionError,
    sqlite3.OperationalError,  # the driver's own, outside SQLAlchemy (a PRAGMA, a backup)
    StoreBusy,
)


def unavailable(exc: BaseException) -> tuple[str, int] | None:
    """Whether ``exc`` is the database or its disk failing: (its reason, seconds to wait).

    The reason is one line (a driver's message without its SQL and parameters); the wait
    is a second for a lock or a lost race, else five. None: ``exc`` is not such an error
    (nor caused by one, ``raise ... from``).
    """
    for _ in range(8):
        if isinstance(exc, _DATABASE) or (
            isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated
        ):
            text = str(getattr(exc, "orig", None) or exc).strip()
            reason = text.splitlines()[0] if text else type(exc).__name__
            busy = isinstance(exc, StoreBusy) or "locked" in reason or "busy" in reason
            return reason, 1 if busy else 5
        if isinstance(exc, OSError) and exc.errno in DISK_ERRNOS:
            return f"{exc.strerror or type(exc).__name__} (errno {exc.errno})", 5
        if exc.__cause__ is None:
            return None
        exc = exc.__cause__
    return None
