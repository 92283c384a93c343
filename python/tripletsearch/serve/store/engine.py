"""The database itself: its engines, write transactions, schema version and leases.

SQLite by default, any SQLAlchemy URL (PostgreSQL) when several machines serve. SQLite write
transactions start with ``BEGIN IMMEDIATE`` (a deferred transaction that reads and then
writes cannot upgrade its lock in WAL mode), with a busy timeout, in WAL mode with
``synchronous=FULL``. The tables and their versions: :mod:`.tables`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from .tables import MIGRATIONS, SCHEMA_VERSION, meta_table, metadata
from .unavailable import IdTaken, StoreBusy, StoreError, WriteConflict, unavailable

__all__ = [
    "Database",
    "StoreError",
    "StoreBusy",
    "IdTaken",
    "WriteConflict",
    "default_url",
    "database_url",
    "reaching",
    "DEFAULT_DATABASE",
]

DEFAULT_DATABASE = "tripletsearch-sessions.sqlite"


def _first_line(exc: BaseException) -> str:
    """An exception's message, its first line only (drivers add pages of detail)."""
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def database_url(url: str | None) -> sa.URL:
    """``url`` parsed (default :func:`default_url`); a StoreError that says what to give.

    A plain path is not a URL: the message suggests the SQLite URL of that file.
    """
    text = url or default_url()
    try:
        return sa.make_url(text)
    except sa.exc.ArgumentError:
        hint = ""
        if "://" not in text:
            hint = f"; for a SQLite file give sqlite:///{Path(text).expanduser().resolve()}"
        raise StoreError(f"database: {text!r} is not a database URL{hint}") from None


@contextmanager
def reaching(url: sa.URL) -> Iterator[None]:
    """Turn a database that cannot be reached into a StoreError that says why.

    A SQLite file in a folder that does not exist, a server that does not answer, a wrong
    password: one line, the password masked.
    """
    try:
        yield
    except (sa.exc.DBAPIError, sqlite3.Error) as exc:  # (a PRAGMA at connect: sqlite3's own)
        shown = url.render_as_string(hide_password=True)
        db = url.database
        if url.get_backend_name() == "sqlite" and db and not Path(db).parent.exists():
            folder = Path(db).parent.resolve()
            raise StoreError(f"database: no folder {folder} for the SQLite file {db}") from None
        raise StoreError(f"database: cannot reach {shown} ({_first_line(exc)})") from None


def default_url() -> str:
    """``sqlite:///tripletsearch-sessions.sqlite`` in the working directory."""
    return f"sqlite:///{DEFAULT_DATABASE}"


def _sqlite_engine(url: sa.URL, immediate: bool, **kw: Any) -> Engine:
    """A SQLite engine whose transactions start with BEGIN IMMEDIATE (writes) or BEGIN (reads).

    Reads: WAL readers never block. 30 s busy timeout, WAL, synchronous=FULL.
    """
    engine = sa.create_engine(
        url,
        connect_args={"timeout": 30.0, "check_same_thread": False},
        pool_size=64,  # a connection per server thread: SQLite connections are cheap
        max_overflow=64,
        **kw,
    )

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # the driver's own BEGIN off: ours below
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA busy_timeout = 30000")
        cur.execute("PRAGMA synchronous = FULL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


_D = TypeVar("_D", bound="Database")

#: A write that failed for the database or its disk counts this long (seconds) unless one
#: goes through: the health check says "degraded" meanwhile (:meth:`Database.failing_writes`).
FAILING_FOR_S = 30.0


class Database:
    """A database's engines, write transactions and schema version.

    ``setup()`` once before the workers start (creates or upgrades the schema, sets WAL);
    then every worker opens it and may ``check()`` the version.
    """

    def __init__(self, url: str | None = None, *, pool_size: int = 8):
        self.url = database_url(url)
        self.is_sqlite = self.url.get_backend_name() == "sqlite"
        # (since, last, reason) of this process's failing writes (a full disk, a server gone)
        self.write_failure: tuple[float, float, str] | None = None
        self._snapshots = threading.local()  # the connection of a snapshot, per thread
        if self.is_sqlite:
            if self.url.database in (None, "", ":memory:"):
                raise StoreError(
                    "database: an in-memory SQLite database is not shared between "
                    "workers or kept across restarts; give a file"
                )
            self.write = _sqlite_engine(self.url, True)
            self.read = _sqlite_engine(self.url, False)
            self._write_lock: threading.Lock | None = threading.Lock()
        else:
            try:
                engine = sa.create_engine(
                    self.url, pool_size=pool_size, max_overflow=32, pool_pre_ping=True
                )
            except (ImportError, sa.exc.ArgumentError) as exc:
                shown = self.url.render_as_string(hide_password=True)
                raise StoreError(f"database: cannot use {shown} ({_first_line(exc)})") from None
            self.write = self.read = engine
            self._write_lock = None  # row locks: concurrent writers are fine

    # ------------------------------------------------------------------ schema
    def setup(self) -> int:
        """Create the tables or upgrade them to :data:`SCHEMA_VERSION`.

        Once, before the workers start; returns the version found (0: a new database).
        """
        with reaching(self.url):
            return self._setup()

    def _setup(self) -> int:
        if self.is_sqlite:  # WAL is a property of the file: set it once, outside a transaction
            raw = self.write.raw_connection()
            try:
                cur = raw.cursor()
                cur.execute("PRAGMA journal_mode = WAL")
                cur.close()
            finally:
                raw.close()
        with self.write.begin() as c:
            found = self._version(c)
            if found > SCHEMA_VERSION:
                raise StoreError(
                    f"database: schema version {found} was written by a newer tripletsearch "
                    f"(this one reads up to {SCHEMA_VERSION}); upgrade the library"
                )
            if found == 0:
                metadata.create_all(c)
                c.execute(
                    sa.insert(meta_table).values(key="schema_version", value=str(SCHEMA_VERSION))
                )
                found_now = SCHEMA_VERSION
            else:
                found_now = found
            for v in range(found_now, SCHEMA_VERSION):
                if v not in MIGRATIONS:
                    raise StoreError(f"database: no migration from schema version {v}")
                MIGRATIONS[v](c)
            if found_now != SCHEMA_VERSION:
                c.execute(
                    sa.update(meta_table)
                    .where(meta_table.c.key == "schema_version")
                    .values(value=str(SCHEMA_VERSION))
                )
        return found

    @staticmethod
    def _version(c: Connection) -> int:
        if not sa.inspect(c).has_table("ts_meta"):
            return 0
        v = c.execute(
            sa.select(meta_table.c.value).where(meta_table.c.key == "schema_version")
        ).scalar()
        return int(v) if v is not None else 0

    @classmethod
    def existing(cls: type[_D], url: str | None = None) -> _D:
        """The database at ``url`` (default: the SQLite file), which must exist.

        It must hold the service's tables: a StoreError that names it otherwise, and no
        SQLite file is created.
        """
        store_url = database_url(url)
        if store_url.get_backend_name() == "sqlite" and store_url.database not in (None, ""):
            path = Path(store_url.database)
            if store_url.database != ":memory:" and not path.is_file():
                raise StoreError(
                    f"no database at {path.resolve()} (tripletsearch serve creates it; give "
                    "another with --database URL)"
                )
        store = cls(url)
        store.check()
        return store

    def check(self) -> None:
        """Raise StoreError unless the database is at this library's schema version."""
        with reaching(self.url), self.read.connect() as c:
            v = self._version(c)
        if v == 0:
            raise StoreError(
                f"database {self.url.render_as_string(hide_password=True)} holds no "
                "tripletsearch tables: nothing was served into it"
            )
        if v != SCHEMA_VERSION:
            raise StoreError(
                f"database: schema version {v}, this library needs {SCHEMA_VERSION}; run "
                "the service's setup (tripletsearch serve does it before starting workers)"
            )

    def lease(
        self,
        name: str,
        owner: str,
        seconds: float,
        now: float | None = None,
        gone: Callable[[str], bool] | None = None,
    ) -> bool:
        """Hold the lease ``name`` for ``seconds`` (taken, or renewed by its holder).

        True when ``owner`` holds it now: it was free, expired, theirs, or its holder is
        known to be gone (``gone(holder)``: a process of this machine that no longer runs,
        killed without handing over). Several servers on one database agree this way on one
        doing a job (the collect mode's refitter).
        """
        now = time.time() if now is None else now
        key = f"lease:{name}"[:64]
        with self._tx() as c:
            row = c.execute(sa.select(meta_table.c.value).where(meta_table.c.key == key)).first()
            if row is not None:
                holder, _, until = str(row.value).rpartition(" ")
                alive = gone is None or not gone(holder)
                if holder != owner and float(until) > now and alive:
                    return False
                c.execute(sa.delete(meta_table).where(meta_table.c.key == key))
            c.execute(sa.insert(meta_table).values(key=key, value=f"{owner} {now + seconds!r}"))
        return True

    def release(self, name: str, owner: str) -> bool:
        """Give up the lease ``name`` if ``owner`` holds it (a job ending cleanly)."""
        key = f"lease:{name}"[:64]
        with self._tx() as c:
            res = c.execute(
                sa.delete(meta_table).where(
                    meta_table.c.key == key, meta_table.c.value.like(f"{owner} %")
                )
            )
        return res.rowcount == 1

    def put_meta(self, key: str, value: Any) -> None:
        """Keep ``value`` (JSON) under ``key`` (at most 64 characters) in ``ts_meta``."""
        text = json.dumps(value, sort_keys=True)
        with self._tx() as c:
            c.execute(sa.delete(meta_table).where(meta_table.c.key == key[:64]))
            c.execute(sa.insert(meta_table).values(key=key[:64], value=text))

    def get_meta(self, key: str) -> Any:
        """The value :meth:`put_meta` kept under ``key``, or None."""
        with self._reading() as c:
            row = c.execute(
                sa.select(meta_table.c.value).where(meta_table.c.key == key[:64])
            ).first()
        return None if row is None else json.loads(row.value)

    def dispose(self) -> None:
        """Close the engines' pooled connections."""
        self.write.dispose()
        if self.read is not self.write:
            self.read.dispose()

    def ping(self) -> None:
        """Check that the database answers (raises when it does not)."""
        with self.read.connect() as c:
            c.execute(sa.select(sa.literal(1)))

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        """A connection to read with: the snapshot's, when one is open in this thread.

        Else a new one (see :meth:`snapshot`).
        """
        held = getattr(self._snapshots, "connection", None)
        if held is not None:
            yield held
            return
        with self.read.connect() as c:
            yield c

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read of this thread within sees the database as it was at its first read.

        One read transaction (SQLite: a WAL snapshot; PostgreSQL: REPEATABLE READ): what
        an export writes and what it fits are the same rows, whatever is written meanwhile.
        """
        if getattr(self._snapshots, "connection", None) is not None:
            yield  # nested: the outer snapshot
            return
        with self.read.connect() as c:
            if not self.is_sqlite:
                c = c.execution_options(isolation_level="REPEATABLE READ")
            with c.begin():
                self._snapshots.connection = c
                try:
                    yield
                finally:
                    self._snapshots.connection = None

    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        """A write transaction.

        SQLite: one writer thread per process at a time (the file's lock serializes writers
        anyway; threads queueing here wait on a lock instead of sleeping in SQLite's busy
        handler, whose back-off reaches 100 ms); processes still take turns through the busy
        timeout.
        """
        try:
            if self._write_lock is None:
                with self.write.begin() as c:
                    yield c
            else:
                with self._write_lock, self.write.begin() as c:
                    yield c
        except Exception as exc:
            self._failed_write(exc)
            raise
        self.write_failure = None  # a write went through: writes work (again)

    def _failed_write(self, exc: BaseException) -> None:
        """Remember a write that failed because the database or its disk did."""
        trouble = unavailable(exc)
        if trouble is not None:
            now = time.time()
            since = self.write_failure[0] if self.write_failure else now
            self.write_failure = (since, now, trouble[0])

    def failing_writes(self, now: float | None = None) -> tuple[float, str] | None:
        """(since, reason) while this process's writes fail, else None.

        Failing: its last write failed for the database or its disk (a full disk, a server
        gone), within :data:`FAILING_FOR_S` seconds, and none went through since; after
        that it is not known to fail any more (nothing was tried: the next write tells).
        """
        failure = self.write_failure
        now = time.time() if now is None else now
        if failure is None or now - failure[1] > FAILING_FOR_S:
            return None
        return failure[0], failure[2]
