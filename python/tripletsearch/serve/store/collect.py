"""The collect mode's rows: the samplers' buffers of queries and their embedding versions.

A sampler's refits put queries in (:meth:`CollectRecords.add_queries`); participants'
sessions take them out, each query once (:meth:`CollectRecords.take_query`). Each embedding
a refit fits is kept (``ts_collect_embeddings``: :meth:`CollectRecords.add_embedding`)
with the answers it used.
"""

from __future__ import annotations

import json
import time
from typing import Any

import sqlalchemy as sa

from .engine import Database, WriteConflict
from .tables import collect_embeddings, collect_queries

__all__ = ["CollectRecords"]

_e = collect_embeddings
_NEWEST_VERSION = (
    sa.select(_e.c.sampler, sa.func.max(_e.c.version).label("version"))
    .where(_e.c.collect == sa.bindparam("collect"))
    .group_by(_e.c.sampler)
    .subquery()
)
# each sampler's newest version of a collect (CollectRecords.newest_embeddings)
_NEWEST = (
    sa.select(_e.c.sampler, _e.c.version, _e.c.n_rows)
    .join(
        _NEWEST_VERSION,
        sa.and_(
            _e.c.sampler == _NEWEST_VERSION.c.sampler, _e.c.version == _NEWEST_VERSION.c.version
        ),
    )
    .where(_e.c.collect == sa.bindparam("collect"))
    .order_by(_e.c.sampler)
)

_QUERY_COLUMNS = (
    collect_queries.c.id, collect_queries.c.head, collect_queries.c.candidates,
    collect_queries.c.version,
)  # fmt: skip
_FREE_QUERIES = (
    sa.select(*_QUERY_COLUMNS)
    .where(
        collect_queries.c.collect == sa.bindparam("collect"),
        collect_queries.c.sampler == sa.bindparam("sampler"),
        collect_queries.c.taken_by.is_(None),
        collect_queries.c.id > sa.bindparam("after"),
    )
    .order_by(collect_queries.c.id)
    .limit(64)
)
_HELD_QUERY = (
    sa.select(*_QUERY_COLUMNS)
    .where(
        collect_queries.c.collect == sa.bindparam("collect"),
        collect_queries.c.sampler == sa.bindparam("sampler"),
        collect_queries.c.taken_by == sa.bindparam("taker"),
    )
    .order_by(collect_queries.c.id)
    .limit(1)
)
_TAKE_QUERY = (
    sa.update(collect_queries)
    .where(collect_queries.c.id == sa.bindparam("b_id"), collect_queries.c.taken_by.is_(None))
    .values(taken_by=sa.bindparam("b_taker"))
)
_RELEASE_QUERY = (
    sa.update(collect_queries)
    .where(
        collect_queries.c.id == sa.bindparam("b_id"),
        collect_queries.c.taken_by == sa.bindparam("b_taker"),
    )
    .values(taken_by=None)
)


def _taken(row: Any) -> tuple[int, int, list[int], int]:
    """A buffer's row as :meth:`CollectRecords.take_query` returns it."""
    return (
        int(row.id),
        int(row.head),
        [int(x) for x in json.loads(row.candidates)],
        int(row.version),
    )


class CollectRecords(Database):
    """The collect mode's buffer of queries and its samplers' embedding versions."""

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
        self, collect: str, sampler: str, taker: str, refuse: Any = (), keep: bool = True
    ) -> tuple[int, int, list[int], int] | None:
        """The oldest free query of ``sampler``'s buffer, now taken by ``taker``.

        Returns (its id, head, candidates, the embedding version it was chosen with: 0, a
        random query), or None when the buffer has none left. Queries
        whose (head, candidate set) is in ``refuse`` are passed over (and stay free for
        others), however many: the buffer is read 64 queries at a time until one fits. Two
        takers never get the same query (a conditional update, retried). A query taken for
        a screen that is never recorded is given back with :meth:`release_query`; one that
        ``taker`` holds still (its reply lost, its release failed: the database failing)
        is given again, so that a retry of the same screen gets the same query. ``keep``
        False: the same reads and the same conditional update, the query left free (a screen
        that asks something else served along the same path in the same time).
        """
        for _ in range(8):
            pick, held = self._free_query(collect, sampler, taker, refuse)
            if pick is None:
                return None
            if held:
                return _taken(pick)
            with self._tx() as c:
                done = c.execute(_TAKE_QUERY, {"b_id": pick.id, "b_taker": taker if keep else None})
            if done.rowcount == 1:
                return _taken(pick)
        return None

    def _free_query(self, collect: str, sampler: str, taker: str, refuse: Any) -> Any:
        """(the query ``taker`` holds or the oldest free one not in ``refuse``, held).

        The query is a row, or None when there is none.
        """
        after = -1

        def fits(r: Any) -> bool:
            return (int(r.head), frozenset(json.loads(r.candidates))) not in refuse

        with self._reading() as c:
            held = c.execute(_HELD_QUERY, {"collect": collect, "sampler": sampler, "taker": taker})
            mine = held.first()
            if mine is not None and fits(mine):
                return mine, True
            while True:
                params = {"collect": collect, "sampler": sampler, "after": after}
                rows = c.execute(_FREE_QUERIES, params).all()
                if not rows:
                    return None, False
                for r in rows:
                    if fits(r):
                        return r, False
                after = rows[-1].id

    def release_query(self, query_id: int, taker: str) -> bool:
        """Give back query ``query_id`` that ``taker`` took (free again); whether it was theirs."""
        with self._tx() as c:
            done = c.execute(_RELEASE_QUERY, {"b_id": int(query_id), "b_taker": taker})
        return done.rowcount == 1

    def free_queries(self, collect: str, sampler: str) -> int:
        """Queries left in ``sampler``'s buffer."""
        q = collect_queries
        with self._reading() as c:
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
        with self._reading() as c:
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
        with self._reading() as c:
            rows = c.execute(q).all()
        out = []
        for r in rows:
            rec = dict(r._mapping)
            rec["used"] = json.loads(rec["used"])
            if states:
                rec["embedding"] = json.loads(rec["embedding"])
            out.append(rec)
        return out

    def newest_embeddings(self, collect: str) -> list[tuple[str, int, int]]:
        """Each sampler's newest version of a collect design: (sampler, version, n_rows).

        One indexed read whatever the number of versions kept, its statement built once (the
        collect mode reads it on every screen, so that no screen's reply time tells a check
        from another).
        """
        with self._reading() as c:
            rows = c.execute(_NEWEST, {"collect": collect}).all()
        return [(str(r[0]), int(r[1]), int(r[2])) for r in rows]

    def latest_embedding(self, collect: str, sampler: str) -> dict | None:
        """The sampler's newest version (as :meth:`embedding_versions`, with its state)."""
        e = collect_embeddings
        q = (
            sa.select(e.c.version, e.c.model, e.c.n_rows, e.c.used, e.c.embedding)
            .where(e.c.collect == collect, e.c.sampler == sampler)
            .order_by(e.c.version.desc())
            .limit(1)
        )
        with self._reading() as c:
            r = c.execute(q).first()
        if r is None:
            return None
        rec = dict(r._mapping)
        rec["used"], rec["embedding"] = json.loads(rec["used"]), json.loads(rec["embedding"])
        return rec
