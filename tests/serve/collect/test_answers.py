"""A collect participant's answer in one pass: the session read once, and no query of a
sampler's buffer used up by an answer that lost a race (two workers answering the same
screen at once)."""

from __future__ import annotations

import json
import threading

import sqlalchemy as sa
from sqlalchemy import event

from serve.helpers import enrol, in_process, parts_of, write_collect
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.collect.refitter import refit_once
from tripletsearch.serve.store import Store
from tripletsearch.serve.store.tables import collect_queries

# every screen from the buffer: no burn-in, no tests, no checks
COLLECT = dict(  # this collect file's keys over the shared ones
    test_share=0.0, dim=2, max_queries=10, burn_in=0, seed=3, title=None
)


def setup_collect(tmp_path):
    write_collect(tmp_path, **COLLECT)
    cfg = load_collect(tmp_path / "collect.toml")
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    store = Store(db)
    store.setup()
    assert refit_once(store, cfg, buffer=30) == {"random": 30}
    return cfg, db, store


def taken(store, cfg):
    """(taker, head, candidates) of the buffer's queries that are taken."""
    q = collect_queries
    with store.read.connect() as c:
        rows = c.execute(
            sa.select(q.c.taken_by, q.c.head, q.c.candidates).where(
                q.c.collect == cfg.fingerprint, q.c.taken_by.is_not(None)
            )
        ).all()
    return sorted((r.taken_by, r.head, r.candidates) for r in rows)


def test_an_answer_reads_its_session_once(tmp_path):
    cfg, db, _ = setup_collect(tmp_path)
    app = create_app(cfg.catalogue, db, collect=cfg, setup=False)
    with in_process(app) as c:
        pr, h = enrol(c)
        base = f"/api/participants/{pr['id']}"
        q = c.post(f"{base}/next", json={}, headers=h).json()["screen"]
        statements: list[str] = []

        def record(conn, cursor, statement, *args):
            statements.append(statement)

        store = parts_of(app).store
        for engine in {store.read, store.write}:
            event.listen(engine, "before_cursor_execute", record)
        r = c.post(f"{base}/answer", json={"screen": q["number"], "choice": 0}, headers=h)
        assert r.status_code == 200, r.text
        assert r.json()["screen"]["number"] == 1
        for engine in {store.read, store.write}:
            event.remove(engine, "before_cursor_execute", record)
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    session_reads = [s for s in reads if "FROM ts_sessions" in s]
    assert len(session_reads) == 1, session_reads
    # what the answer did write: the session moved on, the answer and the next screen
    writes = [
        s.split()[0].upper()
        for s in statements
        if not s.lstrip().upper().startswith(("SELECT", "BEGIN", "COMMIT", "ROLLBACK", "PRAGMA"))
    ]
    assert writes.count("INSERT") == 2 and "UPDATE" in writes


def test_two_workers_racing_on_one_screen_use_up_one_query(tmp_path):
    """Both workers take a query from the buffer for the next screen; the one whose write
    loses gives its query back: every taken query is on a recorded screen."""
    cfg, db, store = setup_collect(tmp_path)
    apps = [create_app(cfg.catalogue, db, collect=cfg, setup=False) for _ in range(2)]
    with in_process(apps[0]) as c1, in_process(apps[1]) as c2:
        pr, h = enrol(c1)
        base = f"/api/participants/{pr['id']}"
        q = c1.post(f"{base}/next", json={}, headers=h).json()["screen"]
        both_took = threading.Barrier(2, timeout=30)
        for app in apps:  # each worker waits, after taking its query, for the other's
            own = parts_of(app).store.take_query

            def take(*args, _own=own, **kw):
                got = _own(*args, **kw)
                both_took.wait()
                return got

            # no seam: create_app builds its own Store from the URL (none to hand it a faulty one)
            parts_of(app).store.take_query = take
        replies = [None, None]

        def answer(i, client):
            body = {"screen": q["number"], "choice": 1}
            replies[i] = client.post(f"{base}/answer", json=body, headers=h)

        threads = [threading.Thread(target=answer, args=(i, c)) for i, c in enumerate((c1, c2))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert [r.status_code for r in replies] == [200, 200], [r.text for r in replies]
        assert replies[0].json() == replies[1].json()  # the loser got the winner's reply
        assert not both_took.broken
    (session,) = store.participant_sessions(pr["id"])
    shown = {h["number"]: h["query"] for h in store.history(session.id)}
    current = store.screen(session.id, session.screen)
    shown[session.screen] = current[1]
    assert session.screen == 1 and session.n_queries == 1
    got = taken(store, cfg)
    # two taken: screen 0's and the winner's screen 1 (the loser's is free again)
    assert [t for t, _, _ in got] == [f"{pr['id']}:0", f"{pr['id']}:1"]
    for taker, head, candidates in got:
        number = int(taker.rsplit(":", 1)[1])
        assert shown[number]["head"] == head
        assert sorted(shown[number]["candidates"]) == sorted(json.loads(candidates))  # (shuffled)
    assert store.free_queries(cfg.fingerprint, "random") == 30 - 2
