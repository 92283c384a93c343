"""The service as it runs: ``tripletsearch serve`` processes killed with SIGKILL and
restarted, several workers racing on one screen, and two servers sharing a real
PostgreSQL server that the test starts."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest

from serve.helpers import ServeProcess, postgres_bindir, postgres_cluster
from tripletsearch.people import FindPerson
from tripletsearch.serve.catalogue import demo_catalogue
from tripletsearch.serve.store import Store

# servers, clusters, worker processes: run once, not again under the sanitizers (.ci/run)
pytestmark = pytest.mark.once

CAT = demo_catalogue()


def auth(token):
    return {"Authorization": f"Bearer {token}"}


def answer(base, s, body, client=None):
    c = client or httpx
    return c.post(f"{base}/api/sessions/{s['id']}/answer", json=body, headers=auth(s["token"]))


def session_state(base, s):
    return httpx.get(f"{base}/api/sessions/{s['id']}", headers=auth(s["token"])).json()


def test_kill9_mid_session_loses_nothing(tmp_path):
    url = f"sqlite:///{tmp_path / 'sessions.sqlite'}"
    rng = np.random.default_rng(0)
    people = [FindPerson(CAT, int(t), 3.0, rng) for t in rng.choice(CAT.n_items, 4, replace=False)]
    srv = ServeProcess("--demo", "colours", "--database", url)
    try:
        sessions = [
            httpx.post(srv.base + "/api/sessions", json={"n_choices": 4}).json() for _ in people
        ]
        screens = [s["screen"] for s in sessions]
        acked: list[tuple[int, dict, dict]] = []  # (session, body, reply) the server confirmed
        for _ in range(2):
            for i, (s, p) in enumerate(zip(sessions, people)):
                if screens[i] is None:
                    continue
                body = p.answer(screens[i])
                r = answer(srv.base, s, body)
                assert r.status_code == 200
                acked.append((i, body, r.json()))
                screens[i] = r.json()["screen"]
        # answers in flight when the server dies: whatever was confirmed must survive
        stop = threading.Event()
        inflight: list[tuple[int, dict, dict]] = []

        def hammer():
            j = 0
            with httpx.Client(timeout=5) as c:
                while not stop.is_set():
                    i = j % len(sessions)
                    j += 1
                    if screens[i] is None:
                        continue
                    body = people[i].answer(screens[i])
                    try:
                        r = answer(srv.base, sessions[i], body, c)
                    except httpx.HTTPError:
                        return
                    if r.status_code == 200:
                        inflight.append((i, body, r.json()))
                        screens[i] = r.json()["screen"]

        t = threading.Thread(target=hammer)
        t.start()
        threading.Event().wait(0.5)
        srv.kill9()
        stop.set()
        t.join()
    finally:
        srv.stop()
    assert inflight, "the server died before any in-flight answer was confirmed"
    acked += inflight
    srv = ServeProcess("--demo", "colours", "--database", url)
    try:
        for i, body, reply in acked:  # every confirmed answer is there, replied the same
            r = answer(srv.base, sessions[i], body)
            assert r.status_code == 200 and r.json() == reply
        for i, s in enumerate(sessions):
            check_and_finish(srv.base, s, people[i], acked, i)
    finally:
        srv.stop()


def check_and_finish(base, s, person, acked, i):
    """Session ``i`` after the restart: nothing confirmed lost, nothing recorded twice, the
    next screen the one it stopped at; then the search goes on to its target."""
    st = session_state(base, s)
    confirmed = [b for j, b, _ in acked if j == i]
    recorded = [(h["screen"], h["choice"], h["found"]) for h in st["history"]]
    assert [(b["screen"], b["choice"], b["found"]) for b in confirmed] == recorded[: len(confirmed)]
    assert len({h["screen"] for h in st["history"]}) == len(st["history"])
    if not st["done"]:
        last = [r for j, _, r in acked if j == i]
        if len(recorded) == len(confirmed):
            assert st["screen"] == (last[-1]["screen"] if last else s["screen"])
        screen = st["screen"]
        for _ in range(300):
            r = answer(base, s, person.answer(screen))
            assert r.status_code == 200, r.text
            if r.json()["done"]:
                break
            screen = r.json()["screen"]
    final = session_state(base, s)
    assert final["done"] and final["result"]["target"] == person.target


def race(bases, s, bodies, n_threads=16):
    """Submit the bodies concurrently across the servers; (status, json) per request."""
    barrier = threading.Barrier(n_threads)

    def one(k):
        barrier.wait()
        r = answer(bases[k % len(bases)], s, bodies[k % len(bodies)])
        return r.status_code, r.json()

    with ThreadPoolExecutor(n_threads) as ex:
        return list(ex.map(one, range(n_threads)))


def check_races(bases, db_url):
    s = httpx.post(bases[0] + "/api/sessions", json={"mode": "find", "n_choices": 4}).json()
    # the same answer 16 times at once (double clicks, retries): recorded once
    out = race(bases, s, [{"screen": 0, "choice": 1}])
    assert all(code == 200 for code, _ in out)
    assert all(reply == out[0][1] for _, reply in out)
    # different answers to the next screen at once: one wins, the rest are refused
    out = race(bases, s, [{"screen": 1, "choice": c} for c in range(4)])
    winners = {reply["n_queries"] for code, reply in out if code == 200}
    assert winners == {2}
    assert all(code in (200, 409) for code, _ in out)
    st = session_state(bases[-1], s)
    assert st["n_queries"] == 2 and [h["screen"] for h in st["history"]] == [0, 1]
    won = st["history"][1]["choice"]
    for code, reply in out:  # every 200 is the winner's reply, every 409 names it
        if code == 409:
            assert f"choice {won}" in reply["error"]
    counts = Store(db_url).counts()
    return s, counts


def test_two_workers_share_an_sqlite_file(tmp_path):
    url = f"sqlite:///{tmp_path / 'sessions.sqlite'}"
    with ServeProcess("--demo", "colours", "--database", url, "--workers", "2") as srv:
        check_races([srv.base], url)
        # whole searches interleaved across the workers
        rng = np.random.default_rng(3)
        for t in rng.choice(CAT.n_items, 3, replace=False):
            run_whole_search([srv.base], int(t), rng)


def run_whole_search(bases, target, rng):
    person = FindPerson(CAT, target, 3.0, rng)
    s = httpx.post(bases[0] + "/api/sessions", json={"mode": "find", "n_choices": 4}).json()
    screen, n = s["screen"], 0
    while True:
        r = answer(bases[n % len(bases)], s, person.answer(screen))  # alternate servers
        assert r.status_code == 200, r.text
        n += 1
        if r.json()["done"]:
            break
        screen = r.json()["screen"]
    st = session_state(bases[-1], s)
    assert st["result"]["target"] == target and st["n_queries"] == n
    return n


@pytest.mark.skipif(
    postgres_bindir() is None and not os.environ.get("TRIPLETSEARCH_REQUIRE_POSTGRES"),
    reason="PostgreSQL is not installed (Debian: apt-get install postgresql)",
)
def as_version_2(url):
    """Tables as schema version 2 laid them out (version 3 only renamed three columns,
    version 4 added columns and the collect mode's table)."""
    import sqlalchemy as sa

    Store(url).setup()
    engine = sa.create_engine(url)
    with engine.begin() as c:
        for old, new in (("k", "n_choices"), ("queries", "screen"), ("n_answers", "n_queries")):
            c.exec_driver_sql(f"ALTER TABLE ts_sessions RENAME COLUMN {new} TO {old}")
        for column in ("plan", "withdrawn", "platform_id"):
            c.exec_driver_sql(f"ALTER TABLE ts_participants DROP COLUMN {column}")
        c.exec_driver_sql("ALTER TABLE ts_answers DROP COLUMN response_ms")
        c.exec_driver_sql("DROP TABLE ts_collect_queries")
        c.exec_driver_sql("UPDATE ts_meta SET value = '2' WHERE key = 'schema_version'")
    engine.dispose()


def test_enrolments_under_contention_on_postgresql():
    # 150 enrolments of one study from 30 threads at once (13 of 150 answered 500: numbers
    # drawn twice, retried until the retries ran out): each gets its own number and id
    from tripletsearch.serve.participation.participants import Participants
    from tripletsearch.serve.service import SearchService

    with postgres_cluster() as url:
        store = Store(url, pool_size=32)
        store.setup()
        group = Participants(SearchService(CAT, store), "contended-study")
        with ThreadPoolExecutor(30) as pool:
            enrolled = list(pool.map(lambda _: group.enrol(), range(150)))
        rows = [group.authorize(e["id"], e["token"]) for e in enrolled]
        store.dispose()
    assert sorted(int(r.number) for r in rows) == list(range(150))
    assert len({e["id"] for e in enrolled}) == 150


def test_two_servers_share_postgresql():
    # two servers of two workers each (the deployment recipe of the serving guide): a
    # person's requests alternate between the servers and land on any worker
    two = ("--demo", "colours", "--workers", "2")
    with postgres_cluster() as url:
        as_version_2(url)  # the first server upgrades it: the migration on PostgreSQL
        with ServeProcess(*two, "--database", url) as a:
            Store(url).check()  # at the current version (raises otherwise)
            with ServeProcess(*two, "--database", url) as b:
                bases = [a.base, b.base]
                _, before = check_races(bases, url)
                rng = np.random.default_rng(4)
                total = sum(
                    run_whole_search(bases, int(t), rng)
                    for t in rng.choice(CAT.n_items, 4, replace=False)
                )
                after = Store(url).counts()
                assert after["answers"] == before["answers"] + total
                assert after["sessions"] == before["sessions"] + 4
            # a server killed and restarted on PostgreSQL: the session goes on
            s = httpx.post(a.base + "/api/sessions", json={"n_choices": 3}).json()
            r = answer(a.base, s, {"screen": 0, "choice": 2})
            a.kill9()
        with ServeProcess("--demo", "colours", "--database", url) as c:
            st = session_state(c.base, s)
            assert st["n_queries"] == 1 and st["screen"] == r.json()["screen"]
            assert answer(c.base, s, {"screen": 0, "choice": 2}).json() == r.json()
