"""Sessions in a real database (SQLAlchemy Core).

SQLite by default, any SQLAlchemy URL (PostgreSQL) when several machines serve. The tables
and their versions: :mod:`.tables`.

An answer is one transaction: the session row advances only from the screen being
answered (``UPDATE ... WHERE screen = :n``), then the answer and the next screen are
inserted, then it commits, before the reply is sent. SQLite write transactions start with
``BEGIN IMMEDIATE`` (a deferred transaction that reads and then writes cannot upgrade its
lock in WAL mode), with a busy timeout, in WAL mode with ``synchronous=FULL``.
"""

from __future__ import annotations

import json
import random
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from .tables import (
    MIGRATIONS,
    SCHEMA_VERSION,
    answers,
    collect_embeddings,
    collect_queries,
    meta_table,
    metadata,
    participants,
    screens,
    sessions,
)

__all__ = [
    "SCHEMA_VERSION",
    "Database",
    "Store",
    "SessionRow",
    "StoreError",
    "WriteConflict",
    "StoreBusy",
    "IdTaken",
    "default_url",
    "MIGRATIONS",
]

DEFAULT_DATABASE = "tripletsearch-sessions.sqlite"


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


def default_url() -> str:
    """``sqlite:///tripletsearch-sessions.sqlite`` in the working directory."""
    return f"sqlite:///{DEFAULT_DATABASE}"


@dataclass(frozen=True)
class SessionRow:
    """A row of ``ts_sessions``, decoded."""

    id: str
    token_hash: str
    mode: str
    n_choices: int
    seed: str
    params: dict
    catalogue: str
    library: str
    created: float
    updated: float
    screen: int  # the current screen's number: screens answered or undone
    done: bool
    result: Any
    n_queries: int  # answers that count
    undos: int
    participant: str | None
    slot: int | None
    target: int | None

    @classmethod
    def from_row(cls, r: Any) -> SessionRow:
        """Decode a database row of ``ts_sessions`` (JSON parameters and result parsed)."""
        return cls(
            r.id,
            r.token_hash,
            r.mode,
            int(r.n_choices),
            r.seed,
            json.loads(r.params),
            r.catalogue,
            r.library,
            float(r.created),
            float(r.updated),
            int(r.screen),
            bool(r.done),
            None if r.result is None else json.loads(r.result),
            int(r.n_queries),
            int(r.undos),
            r.participant,
            None if r.slot is None else int(r.slot),
            None if r.target is None else int(r.target),
        )


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


def _insert_screen(
    c: Connection, sid: str, number: int, payload: dict, query: Any, now: float
) -> None:
    c.execute(
        _INSERT_SCREEN,
        {
            "session_id": sid,
            "number": number,
            "payload": json.dumps(payload),
            "query": json.dumps(query),
            "shown_at": now,
        },
    )


# the hot path's statements, built once (SQLAlchemy builds and keys a new statement object
# at every call otherwise: a millisecond per answer on this machine)
_SESSION = sa.select(sessions).where(sessions.c.id == sa.bindparam("sid"))
_SCREEN = sa.select(screens.c.payload, screens.c.query).where(
    screens.c.session_id == sa.bindparam("sid"), screens.c.number == sa.bindparam("number")
)
_PARTICIPANT = sa.select(participants).where(participants.c.id == sa.bindparam("pid"))
_PARTICIPANT_SESSIONS = (
    sa.select(sessions)
    .where(sessions.c.participant == sa.bindparam("pid"))
    .order_by(sessions.c.slot)
)
_ANSWERED = (
    sa.update(sessions)
    .where(
        sessions.c.id == sa.bindparam("b_sid"),
        sessions.c.screen == sa.bindparam("b_number"),
        sessions.c.done == sa.false(),
    )
    .values(
        screen=sa.bindparam("b_next"),
        updated=sa.bindparam("b_now"),
        done=sa.bindparam("b_done"),
        n_queries=sessions.c.n_queries + 1,
        result=sa.bindparam("b_result"),
    )
)
_FREE_QUERIES = (
    sa.select(collect_queries.c.id, collect_queries.c.head, collect_queries.c.candidates)
    .where(
        collect_queries.c.collect == sa.bindparam("collect"),
        collect_queries.c.sampler == sa.bindparam("sampler"),
        collect_queries.c.taken_by.is_(None),
    )
    .order_by(collect_queries.c.id)
    .limit(64)
)
_TAKE_QUERY = (
    sa.update(collect_queries)
    .where(collect_queries.c.id == sa.bindparam("b_id"), collect_queries.c.taken_by.is_(None))
    .values(taken_by=sa.bindparam("b_taker"))
)
_INSERT_SCREEN = sa.insert(screens)
_INSERT_ANSWER = sa.insert(answers)


def _insert_answer(
    c: Connection,
    sid: str,
    number: int,
    choice: int | None,
    found: bool,
    reply: dict,
    now: float,
    kind: str = "answer",
    response_ms: int | None = None,
) -> None:
    c.execute(
        _INSERT_ANSWER,
        {
            "session_id": sid,
            "screen": number,
            "choice": choice,
            "found": found,
            "reply": json.dumps(reply),
            "answered_at": now,
            "kind": kind,
            "response_ms": response_ms,
        },
    )


_D = TypeVar("_D", bound="Database")


class Database:
    """A database's engines, write transactions and schema version.

    ``setup()`` once before the workers start (creates or upgrades the schema, sets WAL);
    then every worker opens it and may ``check()`` the version.
    """

    def __init__(self, url: str | None = None, *, pool_size: int = 8):
        self.url = sa.make_url(url or default_url())
        self.is_sqlite = self.url.get_backend_name() == "sqlite"
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
                raise StoreError(f"database: cannot use {self.url!r} ({exc})") from None
            self.write = self.read = engine
            self._write_lock = None  # row locks: concurrent writers are fine

    # ------------------------------------------------------------------ schema
    def setup(self) -> int:
        """Create the tables or upgrade them to :data:`SCHEMA_VERSION`.

        Once, before the workers start; returns the version found (0: a new database).
        """
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
        store_url = sa.make_url(url or default_url())
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
        with self.read.connect() as c:
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
    def _tx(self) -> Iterator[Connection]:
        """A write transaction.

        SQLite: one writer thread per process at a time (the file's lock serializes writers
        anyway; threads queueing here wait on a lock instead of sleeping in SQLite's busy
        handler, whose back-off reaches 100 ms); processes still take turns through the busy
        timeout.
        """
        if self._write_lock is None:
            with self.write.begin() as c:
                yield c
            return
        with self._write_lock, self.write.begin() as c:
            yield c


class CollectQueries(Database):
    """The collect mode's buffer of queries and its samplers' embedding versions.

    A sampler's refits put queries in (:meth:`add_queries`); participants' sessions take
    them out, each query once (:meth:`take_query`). Each embedding a refit fits is kept
    (``ts_collect_embeddings``: :meth:`add_embedding`) with the answers it used.
    """

    def add_queries(self, collect: str, sampler: str, version: int, queries: Any) -> int:
        """Put ``queries`` (rows: head, candidates...) in ``sampler``'s buffer; how many."""
        now = time.time()
        rows = [
            {
                "collect": collect,
                "sampler": sampler,
                "version": int(version),
                "head": int(q[0]),
                "candidates": json.dumps([int(x) for x in q[1:]]),
                "created": now,
            }
            for q in queries
        ]
        if rows:
            with self._tx() as c:
                c.execute(sa.insert(collect_queries), rows)
        return len(rows)

    def take_query(
        self, collect: str, sampler: str, taker: str, refuse: Any = ()
    ) -> tuple[int, list[int]] | None:
        """The oldest free query of ``sampler``'s buffer, now taken by session ``taker``.

        Queries whose (head, candidate set) is in ``refuse`` are passed over (and stay
        free for others). None when the buffer has none left. Two takers never get the
        same query (a conditional update, retried).
        """
        for _ in range(8):
            with self.read.connect() as c:
                rows = c.execute(_FREE_QUERIES, {"collect": collect, "sampler": sampler}).all()
            pick = next(
                (
                    r
                    for r in rows
                    if (int(r.head), frozenset(json.loads(r.candidates))) not in refuse
                ),
                None,
            )
            if pick is None:
                return None
            with self._tx() as c:
                done = c.execute(_TAKE_QUERY, {"b_id": pick.id, "b_taker": taker})
            if done.rowcount == 1:
                return int(pick.head), [int(x) for x in json.loads(pick.candidates)]
        return None

    def count_answers(self) -> int:
        """Answers and undos recorded (``ts_answers``' rows), of every session."""
        with self.read.connect() as c:
            return int(c.execute(sa.select(sa.func.count()).select_from(answers)).scalar_one())

    def free_queries(self, collect: str, sampler: str) -> int:
        """Queries left in ``sampler``'s buffer."""
        q = collect_queries
        with self.read.connect() as c:
            return int(
                c.execute(
                    sa.select(sa.func.count())
                    .select_from(q)
                    .where(q.c.collect == collect, q.c.sampler == sampler, q.c.taken_by.is_(None))
                ).scalar_one()
            )

    # ------------------------------------------------------------ embedding versions
    def add_embedding(self, collect: str, sampler: str, version: Any) -> int:
        """Store a sampler's new embedding version (an :class:`EmbeddingVersion`); its number.

        Numbered 1, 2, ... per sampler; a racing refitter's version of the same number
        fails (the unique key) with :class:`WriteConflict`.
        """
        e = collect_embeddings
        with self.read.connect() as c:
            last = c.execute(
                sa.select(sa.func.max(e.c.version)).where(
                    e.c.collect == collect, e.c.sampler == sampler
                )
            ).scalar_one()
        number = int(last or 0) + 1
        row = {
            "collect": collect,
            "sampler": sampler,
            "version": number,
            "model": version.model,
            "n_rows": int(version.n_rows),
            "used": json.dumps(version.used, sort_keys=True),
            "n_test": int(version.n_test),
            "accuracy": None if version.accuracy is None else float(version.accuracy),
            "embedding": json.dumps(version.embedding),
            "created": time.time(),
        }
        try:
            with self._tx() as c:
                c.execute(sa.insert(e).values(**row))
        except sa.exc.IntegrityError as exc:
            raise WriteConflict(f"{sampler}: embedding version {number} stored meanwhile") from exc
        return number

    def embedding_versions(self, collect: str, *, states: bool = False) -> list[dict]:
        """Every embedding version of a collect design, by sampler then version.

        Records: sampler, version, model, n_rows, n_test, accuracy, created, used (dict);
        with ``states`` also ``embedding`` (the JSON state, large).
        """
        e = collect_embeddings
        cols = [
            e.c.sampler, e.c.version, e.c.model, e.c.n_rows, e.c.n_test,
            e.c.accuracy, e.c.created, e.c.used,
        ]  # fmt: skip
        if states:
            cols.append(e.c.embedding)
        q = sa.select(*cols).where(e.c.collect == collect).order_by(e.c.sampler, e.c.version)
        with self.read.connect() as c:
            rows = c.execute(q).all()
        out = []
        for r in rows:
            rec = dict(r._mapping)
            rec["used"] = json.loads(rec["used"])
            if states:
                rec["embedding"] = json.loads(rec["embedding"])
            out.append(rec)
        return out

    def latest_embedding(self, collect: str, sampler: str) -> dict | None:
        """The sampler's newest version (as :meth:`embedding_versions`, with its state)."""
        e = collect_embeddings
        q = (
            sa.select(e.c.version, e.c.model, e.c.n_rows, e.c.used, e.c.embedding)
            .where(e.c.collect == collect, e.c.sampler == sampler)
            .order_by(e.c.version.desc())
            .limit(1)
        )
        with self.read.connect() as c:
            r = c.execute(q).first()
        if r is None:
            return None
        rec = dict(r._mapping)
        rec["used"], rec["embedding"] = json.loads(rec["used"]), json.loads(rec["embedding"])
        return rec


class ParticipantRecords(CollectQueries):
    """Participants of studies and collect files.

    Enrolment, withdrawal, their sessions, and a session left by its person.
    """

    def enrol(
        self, study: str, pid: str, token_hash: str, plan: int = 1, platform_id: str | None = None
    ) -> int:
        """A new participant of ``study``; returns their enrolment number (0, 1, ...).

        ``plan``: the version of the study's plan of target orders for a study's first
        participant; later ones take the first one's (a study under way keeps its plan).
        ``platform_id``: a crowdsourcing platform's id for the participant, when given.

        :class:`IdTaken` when ``pid`` names a participant already. Enrolments of one study
        take turns (SQLite: the write lock; PostgreSQL: a transaction-scoped advisory lock
        on the study), so two never draw the same number; :class:`StoreBusy` if a write
        still fails after retries.
        """
        for attempt in range(20):
            try:
                with self._tx() as c:
                    if not self.is_sqlite:
                        key = zlib.crc32(f"ts_enrol:{study}".encode()) - 2**31
                        c.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})
                    taken = c.execute(
                        sa.select(participants.c.id).where(participants.c.id == pid)
                    ).first()
                    if taken is not None:
                        raise IdTaken(pid)
                    n = c.execute(
                        sa.select(
                            sa.func.coalesce(sa.func.max(participants.c.number), -1) + 1
                        ).where(participants.c.study == study)
                    ).scalar_one()
                    first = c.execute(
                        sa.select(participants.c.plan).where(
                            participants.c.study == study, participants.c.number == 0
                        )
                    ).scalar()
                    c.execute(
                        sa.insert(participants).values(
                            id=pid,
                            token_hash=token_hash,
                            study=study,
                            number=int(n),
                            created=time.time(),
                            plan=int(plan if first is None else first),
                            platform_id=platform_id,
                        )
                    )
                return int(n)
            except (sa.exc.IntegrityError, sa.exc.OperationalError):
                time.sleep(0.01 * (attempt + 1) * (0.5 + random.random()))
        raise StoreBusy("database: could not enrol a participant (too many at once)")

    def withdraw(self, pid: str, now: float) -> bool:
        """Record that participant ``pid`` stopped taking part.

        Once: the first time is kept. Their unfinished searches end, left. True when this
        call withdrew them.
        """
        left = json.dumps({"target": None, "left": True, "reason": "withdrawn"})
        with self._tx() as c:
            res = c.execute(
                sa.update(participants)
                .where(participants.c.id == pid, participants.c.withdrawn.is_(None))
                .values(withdrawn=now)
            )
            c.execute(
                sa.update(sessions)
                .where(sessions.c.participant == pid, sessions.c.done == sa.false())
                .values(done=True, result=left, updated=now)
            )
        return res.rowcount == 1

    def leave(self, sid: str, now: float) -> bool:
        """End session ``sid`` unfinished (left by its person: abandoned, not found).

        False when it had ended already.
        """
        left = json.dumps({"target": None, "left": True, "reason": "left"})
        with self._tx() as c:
            res = c.execute(
                sa.update(sessions)
                .where(sessions.c.id == sid, sessions.c.done == sa.false())
                .values(done=True, result=left, updated=now)
            )
        return res.rowcount == 1

    def participant(self, pid: str) -> Any:
        """The participant's row, or None.

        Its columns: id, token_hash, study, number, created, plan, withdrawn.
        """
        with self.read.connect() as c:
            return c.execute(_PARTICIPANT, {"pid": pid}).first()

    def has_participants(self, study: str) -> bool:
        """Whether ``study`` (a fingerprint) has enrolled anyone."""
        with self.read.connect() as c:
            q = sa.select(participants.c.id).where(participants.c.study == study).limit(1)
            return c.execute(q).first() is not None

    def participant_sessions(self, pid: str) -> list[SessionRow]:
        """The participant's sessions, by slot."""
        with self.read.connect() as c:
            rows = c.execute(_PARTICIPANT_SESSIONS, {"pid": pid}).all()
        return [SessionRow.from_row(r) for r in rows]

    def iter_participants(self) -> Iterator[Any]:
        """Every participant row, by number."""
        with self.read.connect() as c:
            yield from c.execute(sa.select(participants).order_by(participants.c.number))


class Store(ParticipantRecords):
    """The sessions database: sessions, their screens and answers, study participants.

    ``Store(url).setup()`` once before the workers start; then every worker opens
    ``Store(url)``.
    """

    # ------------------------------------------------------------------ reads
    def session(self, sid: str) -> SessionRow | None:
        """The session ``sid``, or None."""
        with self.read.connect() as c:
            r = c.execute(_SESSION, {"sid": sid}).first()
        return None if r is None else SessionRow.from_row(r)

    def screen(self, sid: str, number: int) -> tuple[dict, dict] | None:
        """(payload as shown, query) of a screen, or None."""
        with self.read.connect() as c:
            r = c.execute(_SCREEN, {"sid": sid, "number": number}).first()
        return None if r is None else (json.loads(r.payload), json.loads(r.query))

    def answer(self, sid: str, screen: int) -> tuple[str, int | None, bool, dict] | None:
        """(kind, choice, found, reply) recorded for a screen, or None."""
        with self.read.connect() as c:
            r = c.execute(
                sa.select(answers.c.kind, answers.c.choice, answers.c.found, answers.c.reply).where(
                    answers.c.session_id == sid, answers.c.screen == screen
                )
            ).first()
        return None if r is None else (r.kind, r.choice, bool(r.found), json.loads(r.reply))

    def _answered(self, *where: Any) -> list[tuple[str, dict]]:
        """(session id, record) of the answered screens matching ``where``, by session and number.

        A record: number, payload, query, choice, found, kind ("answer" or "undo"), undone,
        shown_at, answered_at, response_ms (the page's measure, None when not sent).
        """
        on = sa.and_(
            answers.c.session_id == screens.c.session_id, answers.c.screen == screens.c.number
        )
        q = (
            sa.select(
                screens.c.session_id,
                screens.c.number,
                screens.c.payload,
                screens.c.query,
                screens.c.shown_at,
                answers.c.choice,
                answers.c.found,
                answers.c.kind,
                answers.c.undone,
                answers.c.answered_at,
                answers.c.response_ms,
            )
            .select_from(screens.join(answers, on))
            .where(*where)
            .order_by(screens.c.session_id, screens.c.number)
        )
        with self.read.connect() as c:
            rows = c.execute(q).all()
        return [
            (
                r.session_id,
                {
                    "number": int(r.number),
                    "payload": json.loads(r.payload),
                    "query": json.loads(r.query),
                    "choice": r.choice,
                    "found": bool(r.found),
                    "kind": r.kind,
                    "undone": bool(r.undone),
                    "shown_at": float(r.shown_at),
                    "answered_at": float(r.answered_at),
                    "response_ms": r.response_ms,
                },
            )
            for r in rows
        ]

    def history(self, sid: str, start: int = 0) -> list[dict]:
        """The session's answered screens from ``start`` on, in order (undos included)."""
        return [
            rec for _, rec in self._answered(screens.c.session_id == sid, screens.c.number >= start)
        ]

    def effective(self, sid: str, start: int = 0) -> list[dict]:
        """The answers that count (not undos, not undone) from screen ``start`` on."""
        return [
            rec
            for _, rec in self._answered(
                screens.c.session_id == sid,
                screens.c.number >= start,
                answers.c.kind == "answer",
                answers.c.undone == sa.false(),
            )
        ]

    def all_answers(self) -> dict[str, list[dict]]:
        """Every answered screen of every session (as :meth:`history`), by session."""
        out: dict[str, list[dict]] = {}
        for sid, rec in self._answered():
            out.setdefault(sid, []).append(rec)
        return out

    def iter_sessions(self, *, withdrawn: bool = False) -> Iterator[SessionRow]:
        """Every session, by creation time (then id), but those of withdrawn participants.

        ``withdrawn``: those too (the owner's dashboard counts them).
        """
        gone = sa.select(participants.c.id).where(participants.c.withdrawn.is_not(None))
        q = sa.select(sessions).order_by(sessions.c.created, sessions.c.id)
        if not withdrawn:
            q = q.where(
                sa.or_(sessions.c.participant.is_(None), sessions.c.participant.not_in(gone))
            )
        with self.read.connect() as c:
            for r in c.execute(q):
                yield SessionRow.from_row(r)

    def prune(self, before: float, idle_before: float, *, dry_run: bool = False) -> dict:
        """Delete old free sessions with their screens and answers; the counts deleted.

        A free session (no study participant) goes when its last activity is before
        ``before`` and it is finished (found, or left by its person), or unfinished with
        its last activity before ``idle_before`` (abandoned). Study sessions stay, but those
        of withdrawn participants go whatever their age (the participant's row stays: the
        study's numbering and balance). Batches of 500 sessions, each in its own
        transaction. ``dry_run``: count only.
        """
        done = {"sessions": 0, "screens": 0, "answers": 0}
        withdrawn = sa.select(participants.c.id).where(participants.c.withdrawn.is_not(None))
        doomed = sa.select(sessions.c.id).where(
            sa.or_(
                sa.and_(
                    sessions.c.participant.is_(None),
                    sessions.c.updated < before,
                    sa.or_(sessions.c.done == sa.true(), sessions.c.updated < idle_before),
                ),
                sessions.c.participant.in_(withdrawn),
            )
        )
        if dry_run:  # everything at once, counted in the database
            with self.read.connect() as c:
                n = c.execute(sa.select(sa.func.count()).select_from(doomed.subquery()))
                done["sessions"] = int(n.scalar_one())
                self._count_answers_and_screens(c, doomed.scalar_subquery(), done, False)
            return done
        while True:
            with self._tx() as c:
                ids = list(c.execute(doomed.limit(500)).scalars())
                if not ids:
                    return done
                done["sessions"] += len(ids)
                self._count_answers_and_screens(c, ids, done, True)
                c.execute(sa.delete(sessions).where(sessions.c.id.in_(ids)))

    @staticmethod
    def _count_answers_and_screens(c: Connection, ids: Any, done: dict, delete: bool) -> None:
        """Count (and delete) the answers and screens of the sessions ``ids``."""
        for key, table in (("answers", answers), ("screens", screens)):
            where = table.c.session_id.in_(ids)
            count = sa.select(sa.func.count()).select_from(table).where(where)
            done[key] += int(c.execute(count).scalar_one())
            if delete:
                c.execute(sa.delete(table).where(where))

    def count_open(self, since: float) -> int:
        """Free sessions not finished and updated at ``since`` (a time.time()) or later."""
        with self.read.connect() as c:
            q = (
                sa.select(sa.func.count())
                .select_from(sessions)
                .where(
                    sessions.c.done == sa.false(),
                    sessions.c.participant.is_(None),
                    sessions.c.updated >= since,
                )
            )
            return int(c.execute(q).scalar() or 0)

    def counts(self) -> dict[str, int]:
        """Row counts of the sessions, answers and screens tables."""
        with self.read.connect() as c:
            return {
                "sessions": int(
                    c.execute(sa.select(sa.func.count()).select_from(sessions)).scalar() or 0
                ),
                "answers": int(
                    c.execute(sa.select(sa.func.count()).select_from(answers)).scalar() or 0
                ),
                "screens": int(
                    c.execute(sa.select(sa.func.count()).select_from(screens)).scalar() or 0
                ),
            }

    # ------------------------------------------------------------------ writes
    @staticmethod
    def _advance(c: Connection, sid: str, number: int, now: float, **values: Any) -> None:
        """Move the session from screen ``number`` to the next.

        Raise WriteConflict when it is not at that screen (any more) or is done.
        """
        res = c.execute(
            sa.update(sessions)
            .where(
                sessions.c.id == sid,
                sessions.c.screen == number,
                sessions.c.done == sa.false(),
            )
            .values(screen=number + 1, updated=now, **values)
        )
        if res.rowcount != 1:
            raise WriteConflict(sid)

    def record_undo(
        self,
        sid: str,
        number: int,
        *,
        undone_screen: int,
        reply: dict,
        payload: dict,
        query: Any,
    ) -> None:
        """An undo at screen ``number``.

        The answer to ``undone_screen`` stops counting (kept, marked undone), the undo is
        recorded as screen ``number``'s answer, and screen ``number + 1`` shows ``payload``
        (the undone screen again).
        """
        now = time.time()
        with self._tx() as c:
            self._advance(
                c,
                sid,
                number,
                now,
                n_queries=sessions.c.n_queries - 1,
                undos=sessions.c.undos + 1,
            )
            res = c.execute(
                sa.update(answers)
                .where(
                    answers.c.session_id == sid,
                    answers.c.screen == undone_screen,
                    answers.c.kind == "answer",
                    answers.c.undone == sa.false(),
                )
                .values(undone=True)
            )
            if res.rowcount != 1:
                raise WriteConflict(sid)
            _insert_answer(c, sid, number, None, False, reply, now, kind="undo")
            _insert_screen(c, sid, number + 1, payload, query, now)

    def create_session(
        self,
        *,
        sid: str,
        token_hash: str,
        mode: str,
        n_choices: int,
        seed: str,
        params: dict,
        catalogue: str,
        library: str,
        payload: dict,
        query: dict,
        participant: str | None = None,
        slot: int | None = None,
        target: int | None = None,
    ) -> None:
        """A new session and its screen 0, in one transaction.

        A study session: its participant, slot and target; WriteConflict when that slot
        already has a session.
        """
        now = time.time()
        with self._tx() as c:
            if participant is not None:
                taken = c.execute(
                    sa.select(sessions.c.id).where(
                        sessions.c.participant == participant, sessions.c.slot == slot
                    )
                ).first()
                if taken is not None:
                    raise WriteConflict(taken.id)
            c.execute(
                sa.insert(sessions).values(
                    id=sid,
                    token_hash=token_hash,
                    mode=mode,
                    n_choices=n_choices,
                    seed=seed,
                    params=json.dumps(params),
                    catalogue=catalogue,
                    library=library,
                    created=now,
                    updated=now,
                    screen=0,
                    done=False,
                    result=None,
                    participant=participant,
                    slot=slot,
                    target=target,
                )
            )
            _insert_screen(c, sid, 0, payload, query, now)

    def record_answer(
        self,
        sid: str,
        number: int,
        *,
        choice: int | None,
        found: bool,
        reply: dict,
        done: bool,
        result: Any,
        next_payload: dict | None,
        next_query: dict | None,
        response_ms: int | None = None,
    ) -> None:
        """Record the answer to screen ``number`` and the next screen, committed before returning.

        :class:`WriteConflict` when the session is no longer at that screen (another request
        answered it first: nothing is written).
        """
        now = time.time()
        with self._tx() as c:
            moved = c.execute(
                _ANSWERED,
                {
                    "b_sid": sid,
                    "b_number": number,
                    "b_next": number + 1,
                    "b_now": now,
                    "b_done": done,
                    "b_result": None if result is None else json.dumps(result),
                },
            )
            if moved.rowcount != 1:  # as _advance: not at that screen (any more), or done
                raise WriteConflict(sid)
            _insert_answer(c, sid, number, choice, found, reply, now, response_ms=response_ms)
            if next_payload is not None:
                _insert_screen(c, sid, number + 1, next_payload, next_query, now)
