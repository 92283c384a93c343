"""The collect mode's API (in process, SQLite): participants, their queries (attention
checks, repeats, burn-in, test share, the samplers' buffers), answers, the debrief, and
the refit that fills the buffers."""

from __future__ import annotations

import re
import sqlite3
from collections import Counter

import numpy as np
import pytest

from serve.helpers import answer_all, claiming, enrol, in_process, take_part
from tripletsearch.people import CollectPerson
from tripletsearch.serve import create_app
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.collect.quality import held_out_rows, sampler_rows
from tripletsearch.serve.collect.refitter import refit_once
from tripletsearch.serve.collect.screens import BUFFER_KINDS
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.store import Store

COLLECT = dict(  # this collect file's keys over the shared ones
    samplers=["random", "active"],
    test_share=0.25,
    n_choices=3,
    dim=2,
    max_queries=24,
    burn_in=4,
    attention=[2, 12],
    repeats=[8, 20],
    debrief="Thanks!",
    completion_code="DONE-1",
)
# in-process people answer at once: a test that counts their answers turns the server's
# clock check off, as a server's setting would (the check's own tests: test_scripts.py)
INSTANT = {"fast_server_ms": 0}


@pytest.fixture
def collect(tmp_path, collect_file):
    collect_file(tmp_path, **COLLECT)
    cfg = load_collect(tmp_path / "collect.toml")
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    return cfg, db


def run(c, cfg, pid, h, rng, skip_at=()):
    """Answer every query through the participants' routes (the candidate nearest the head
    by a hidden 1-D order, a skip at ``skip_at``); the screens seen and the last reply."""
    order = np.arange(cfg.catalogue.n_items, dtype=float)[:, None]  # the hidden 1-D order
    person = CollectPerson("person", order, gamma=None, lapse=0.0, seconds=0.9, spread=0.0)
    seen = []

    def body(reply: dict) -> dict:
        q = reply["screen"]
        seen.append(q)
        assert reply["mode"] == "collect" and reply["target"] is None
        assert len(q["candidates"]) == cfg.k and set(q["head"]) >= {"id", "name", "hex"}
        if q["number"] in skip_at:
            return {"screen": q["number"], "choice": None}
        return person.answer(q)

    return seen, answer_all(c, pid, h, body=body)


def test_a_participant_answers_every_query_and_gets_the_debrief(collect):
    cfg, db = collect
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        info = c.get("/api/experiment").json()
        assert info["title"] == "Alike?" and info["n_choices"] == 3 and info["max_queries"] == 24
        assert c.post("/api/sessions", json={}).status_code == 403  # no free searches
        pr, h = enrol(c, platform_id="prolific-77")
        seen, last = run(c, cfg, pr["id"], h, np.random.default_rng(0), skip_at=(5,))
        end = {"done": True, "outcome": "finished", "n_slots": 1, "debrief": "Thanks!"}
        end["completion_code"] = "DONE-1"
        assert last == end
        again = c.post(f"/api/participants/{pr['id']}/next", json={}, headers=h)
        assert again.json() == last
    assert [q["number"] for q in seen] == list(range(24))
    store = Store(db)
    (session,) = store.participant_sessions(pr["id"])
    queries = {h["number"]: h["query"] for h in store.history(session.id)}
    kinds = Counter(q["kind"] for q in queries.values())
    # no embedding yet predicts which earlier queries are clear: no repeat (an ordinary
    # query at those positions; the repeats of clear queries: test_checks.py)
    assert kinds["attention"] == 2 and kinds["repeat"] == 0 and kinds["burn-in"] == 3
    for pos in cfg.attention:  # the head among its own candidates, at its expected place
        q = queries[pos]
        assert q["candidates"][q["expected"]] == q["head"]
    keys = [
        (q["head"], frozenset(q["candidates"])) for n, q in queries.items() if q["kind"] != "repeat"
    ]
    assert len(keys) == len(set(keys))  # never the same query twice
    assert store.participant(pr["id"]).platform_id == "prolific-77"
    with sqlite3.connect(db.removeprefix("sqlite:///")) as con:
        ms = con.execute("SELECT screen, choice, response_ms FROM ts_answers ORDER BY screen")
        rows = ms.fetchall()
    assert rows[5][1] is None and rows[5][2] is None  # the skip
    assert all(r[2] == 900 for r in rows if r[0] != 5)


def test_bad_answers_are_refused_and_repeats_get_the_stored_reply(collect):
    cfg, db = collect
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        pr, h = enrol(c)
        base = f"/api/participants/{pr['id']}"
        first = c.post(f"{base}/next", json={}, headers=h).json()["screen"]
        for body, status, match in (
            ({"screen": 0, "choice": 3}, 400, r"choice: expected an index in 0\.\.2"),
            ({"screen": 5, "choice": 0}, 400, "has not been shown"),
            ({"screen": 0, "choice": 1, "skip": True}, 400, "unknown field"),
            ({"screen": 0, "choice": 1, "response_ms": -1}, 400, "response_ms"),
            ({"screen": 0, "choice": 1, "found": True}, 400, "found"),
        ):
            r = c.post(f"{base}/answer", json=body, headers=h)
            assert r.status_code == status and re.search(match, r.json()["error"]), (body, r.text)
        ok = c.post(f"{base}/answer", json={"screen": 0, "choice": 1}, headers=h).json()
        same = c.post(f"{base}/answer", json={"screen": 0, "choice": 1}, headers=h).json()
        assert ok == same and ok["screen"]["number"] == 1  # the stored reply
        other = c.post(f"{base}/answer", json={"screen": 0, "choice": 2}, headers=h)
        assert other.status_code == 409
        assert c.post(f"{base}/next", json={}, headers={}).status_code == 401
        assert c.post("/api/participants", json={"consent": False}).status_code == 400
        long_id = {"consent": True, "platform_id": "x" * 200}
        assert c.post("/api/participants", json=long_id).status_code == 400
        zalgo = "x" + "\u0301" * 120  # combining marks that draw over the rows around
        for bad in ("p\x00q", "a\nb", "\u202eevil", zalgo, "\u0301x", "e\u0301\u0302\u0303"):
            r = c.post("/api/participants", json={"consent": True, "platform_id": bad})
            assert r.status_code == 400 and "platform_id" in r.json()["error"], bad
        # accents (one or two marks) enrol; one id typed two ways is one: without a visit's
        # value (no platform) a second session of it is refused
        for fine, status in (("Jos\u00e9", 201), ("Jose\u0301", 409), ("\u1ec7\u0300x", 201)):
            r = c.post("/api/participants", json={"consent": True, "platform_id": fine})
            assert r.status_code == status, fine
        assert first["number"] == 0


def test_the_refit_fills_each_samplers_buffer_and_queries_are_taken_once(collect):
    cfg, db = collect
    app = create_app(cfg.catalogue, db, collect=cfg)  # the tables set up
    store = Store(db)
    fp = cfg.fingerprint
    assert refit_once(store, cfg, buffer=40) == {"random": 40, "active": 40}
    assert refit_once(store, cfg, buffer=40) == {"random": 0, "active": 0}  # full
    with in_process(app) as c:
        people = [enrol(c) for _ in range(4)]
        for pr, h in people:
            run(c, cfg, pr["id"], h, np.random.default_rng(1))
    with sqlite3.connect(db.removeprefix("sqlite:///")) as con:
        taken = con.execute(
            "SELECT sampler, taken_by FROM ts_collect_queries WHERE taken_by IS NOT NULL"
        ).fetchall()
    takers = [t for _, t in taken]
    assert len(takers) == len(set(takers)) and len(takers) > 0  # each query shown once
    sessions = [store.participant_sessions(pr["id"])[0] for pr, _ in people]
    adaptive = Counter()
    for s in sessions:
        for h in store.history(s.id):
            if h["query"]["kind"] in BUFFER_KINDS:
                adaptive[s.params["sampler"]] += 1
                assert h["query"]["sampler"] == s.params["sampler"]
    assert sum(adaptive.values()) == len(takers)
    # each sampler fits its own participants' answers: k - 1 rows a click, no checks
    for name in cfg.samplers:
        rows = sampler_rows(store, fp, name, **INSTANT)
        mine = [s for s in sessions if s.params["sampler"] == name]
        expect = 0
        for s in mine:
            for h in store.history(s.id):
                if h["query"]["kind"] in ("burn-in", *BUFFER_KINDS):
                    expect += cfg.k - 1
        assert len(rows) == expect
        assert all(r[0] not in (r[1], r[2]) for r in rows)
    refit_once(store, cfg, buffer=40, **INSTANT)  # with answers: fitted, then refilled
    assert store.free_queries(fp, "active") == 40


def test_samplers_are_assigned_at_enrolment_in_balanced_blocks(tmp_path, collect_file):
    """After any number of participants (withdrawn ones too) the samplers' counts differ by
    at most one; each participant's sampler is kept at enrolment, and their queries come
    from it; the blocks' orders vary with the seed."""
    collect_file(tmp_path, **{**COLLECT, "samplers": ["random", "active", "arr"]})
    cfg = load_collect(tmp_path / "collect.toml")
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    store = Store(db)
    firsts = []
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        for n in range(20):
            pr, h = enrol(c)
            if n % 4 == 1:  # some withdraw: they still count
                c.post(f"/api/participants/{pr['id']}/withdraw", json={}, headers=h)
            rows = [r for r in store.iter_participants() if r.study == cfg.fingerprint]
            counts = Counter(r.arm for r in rows)
            assert set(counts) <= set(cfg.samplers)
            assert max(counts.values()) - min(counts.get(s, 0) for s in cfg.samplers) <= 1
            if n % 3 == 0:
                firsts.append(rows[-1].arm)
        board = c.get("/api/admin/collect").status_code  # (no admin token: 404)
        assert board == 404
        pr, h = enrol(c)
        c.post(f"/api/participants/{pr['id']}/next", json={}, headers=h)
        (session,) = store.participant_sessions(pr["id"])
        assert session.params["sampler"] == store.participant(pr["id"]).arm
    assert len(set(firsts)) > 1  # the blocks' orders are not one fixed order


def test_one_refitter_holds_the_lease(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.sqlite'}")
    store.setup()
    assert store.lease("refit:x", "a", 10.0, now=0.0)
    assert not store.lease("refit:x", "b", 10.0, now=5.0)  # a holds it
    assert store.lease("refit:x", "a", 10.0, now=5.0)  # renewed: until 15
    assert not store.lease("refit:x", "b", 10.0, now=14.0)
    assert store.lease("refit:x", "b", 10.0, now=15.5)  # expired: handed over
    assert store.lease("refit:y", "a", 10.0, now=15.5)  # another job, another lease


def test_a_killed_refitters_lease_is_taken_over_at_once(tmp_path):
    import os
    import socket
    import subprocess
    import sys

    from tripletsearch.serve.collect.refitter import gone_process

    store = Store(f"sqlite:///{tmp_path / 's.sqlite'}")
    store.setup()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    host = socket.gethostname()
    try:
        assert store.lease("refit:z", f"{host}:{child.pid}", 60.0, now=0.0)
        assert not gone_process(f"{host}:{child.pid}")
        assert not store.lease("refit:z", "b", 60.0, now=1.0, gone=gone_process)  # alive
    finally:
        child.kill()
        child.wait()
    assert gone_process(f"{host}:{child.pid}")  # killed: its lease is free
    assert not gone_process(f"another-host:{child.pid}")  # elsewhere: cannot tell
    assert not gone_process(f"{host}:{os.getpid()}")
    assert store.lease("refit:z", "b", 60.0, now=2.0, gone=gone_process)


def test_a_catalogue_still_without_an_embedding_offers_no_search(collect):
    cfg, db = collect
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        assert c.get("/api/catalogue?limit=0").json()["modes"] == []
        r = c.post("/api/sessions", json={"mode": "find"})
        assert r.status_code == 403 and "collects triplets" in r.json()["error"]
        assert c.get("/api/catalogue?limit=2").json()["n_items"] == 30


@pytest.mark.once
def test_serve_collect_runs_the_refitter_in_a_process_of_its_own(tmp_path, collect_file):
    """``serve --collect``: the refitter fills the samplers' buffers while people answer,
    and past the burn-in people get their sampler's queries from it."""
    import httpx

    from serve.helpers import ServeProcess, wait_until

    collect_file(tmp_path, **COLLECT)
    cfg = load_collect(tmp_path / "collect.toml")
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    with ServeProcess("--collect", str(tmp_path / "collect.toml"), "--database", db) as srv:
        store, fp = Store(db), cfg.fingerprint
        wait_until(  # the refitter's first round (a process start, then a fit)
            lambda: all(store.free_queries(fp, s) > 0 for s in cfg.samplers),
            timeout=60,
            message="every sampler's buffer filled",
        )
        with httpx.Client(base_url=srv.base) as c:
            pr, h = enrol(c)
            seen, last = run(c, cfg, pr["id"], h, np.random.default_rng(2))
        assert last["done"] and last["completion_code"] == "DONE-1"
    (session,) = store.participant_sessions(pr["id"])
    kinds = Counter(h["query"]["kind"] for h in store.history(session.id))
    assert sum(kinds[k] for k in BUFFER_KINDS) > 0  # from the buffer the refitter filled


def record(number, kind, choice, candidates, **extra):
    return {
        "number": number,
        "kind": "answer",
        "undone": False,
        "choice": choice,
        "query": {"kind": kind, "head": 0, "candidates": candidates, **extra},
    }


def test_checks_flag_a_participant_who_fails_them():
    from tripletsearch.serve.collect.quality import CHECK_RULES, checks

    good = [
        record(0, "random", 1, [4, 5, 6]),
        record(1, "attention", 2, [7, 8, 0], expected=2),
        record(2, "repeat", 0, [5, 4, 6], of=0, clear=0.9),  # picked 5 again
    ]
    assert checks(good) == {
        "attention": (1, 1),
        "gold": (0, 0),
        "repeats": (1, 1),
        "clear_repeats": (1, 1),
        "response_ms": None,  # the page measured none
        "server_ms": None,
        "agreement": None,
        "flags": [],
        "flagged": False,
        "rules": CHECK_RULES,
    }
    wrong = [*good[:1], record(1, "attention", 0, [7, 8, 0], expected=2), good[2]]
    assert checks(wrong)["flagged"] and checks(wrong)["attention"] == (0, 1)
    fickle = [*good[:2], record(2, "repeat", 1, [5, 4, 6], of=0, clear=0.9)]  # picked 4
    for n, (choice, cands) in enumerate([(2, [6, 5, 4]), (0, [4, 6, 5]), (1, [6, 4, 5])], 3):
        fickle.append(record(n, "repeat", choice, cands, of=0, clear=0.9))  # picked 4 again
    assert checks(fickle)["repeats"] == (0, 4) and checks(fickle)["flagged"]
    assert not checks(fickle[:-1])["flagged"]  # three clear repeats: not judged (rules 3)
    assert [f["rule"] for f in checks(fickle)["flags"]] == ["repeats"]
    # a repeat of a query no embedding predicted clearly (rules 1's): shown, not judged
    tie = [*good[:2], record(2, "repeat", 1, [5, 4, 6], of=0)]
    assert checks(tie)["repeats"] == (0, 1) and not checks(tie)["flagged"]
    skipped = [*good[:1], record(1, "attention", None, [7, 8, 0], expected=2)]
    assert checks(skipped)["flagged"]  # a skip fails a check
    assert checks([])["flagged"] is False  # nothing to judge yet
    # clicking without looking: a median response time under a quarter second
    timed = [{**r, "response_ms": ms} for r, ms in zip(good * 2, [180, 200, 2400, 150, 90, 3000])]
    assert checks(timed)["response_ms"] == 190.0 and checks(timed)["flagged"]
    slow = [{**r, "response_ms": ms} for r, ms in zip(good * 2, [900, 1200, 2400, 150, 90, 3000])]
    assert checks(slow)["response_ms"] == 1050.0 and not checks(slow)["flagged"]
    few = [{**r, "response_ms": 100} for r in good]  # too few measured to judge
    assert checks(few)["response_ms"] is None and not checks(few)["flagged"]


def test_a_flagged_participants_answers_are_left_out_of_the_fits(collect):
    cfg, db = collect
    store, fp = Store(db), cfg.fingerprint
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        pr, _h, _end = take_part(c)  # always the first candidate: fails the checks
    (session,) = store.participant_sessions(pr["id"])
    from tripletsearch.serve.collect.quality import checks

    got = checks(store.all_answers()[session.id])
    expected = [
        h["query"]["expected"]
        for h in store.history(session.id)
        if h["query"]["kind"] == "attention"
    ]
    assert got["attention"] == (expected.count(0), len(cfg.attention))
    assert expected.count(0) == 0 and got["flagged"]  # this seed: both checks failed
    assert len(sampler_rows(store, fp, session.params["sampler"])) == 0  # left out of fits
    assert len(store.history(session.id)) == cfg.max_queries  # kept in the database


def test_each_embedding_version_is_stored_with_the_answers_it_used(collect):
    cfg, db = collect
    app = create_app(cfg.catalogue, db, collect=cfg)
    store, fp = Store(db), cfg.fingerprint
    with in_process(app) as c:
        for _ in range(24):  # twelve a sampler (balanced): past active's burn-in of 295 rows
            pr, h = enrol(c)
            run(c, cfg, pr["id"], h, np.random.default_rng(2))
    refit_once(store, cfg, buffer=10, **INSTANT)
    versions = store.embedding_versions(fp, states=True)
    assert {v["sampler"] for v in versions} == set(cfg.samplers)
    # the held-out triplets, recomputed from the stored answers: the test queries' picks
    tests = []
    for s in store.iter_sessions():
        for h in store.history(s.id):
            q = h["query"]
            if q["kind"] == "test" and h["choice"] is not None:
                picked = q["candidates"][h["choice"]]
                tests += [(q["head"], picked, o) for o in q["candidates"] if o != picked]
    tests = np.array(tests)
    for v in versions:
        assert v["version"] == 1 and v["model"] == "gamma-ckl"
        # "used" names the answers: the sampler's kinds up to each session's last screen
        rows = []
        for sid, last in v["used"].items():
            for h in store.history(sid):
                q = h["query"]
                kinds = ("burn-in", *BUFFER_KINDS, "fallback")
                if q["kind"] in kinds and h["number"] <= last:
                    picked = q["candidates"][h["choice"]]
                    rows += [(q["head"], picked, o) for o in q["candidates"] if o != picked]
        assert sorted(rows) == sorted(
            map(tuple, sampler_rows(store, fp, v["sampler"], **INSTANT).tolist())
        )
        assert v["n_rows"] == len(rows)
        X = np.array(v["embedding"]["embedding"])
        assert X.shape == (cfg.catalogue.n_items, cfg.dim)
        near = np.sum((X[tests[:, 0]] - X[tests[:, 1]]) ** 2, axis=1)
        far = np.sum((X[tests[:, 0]] - X[tests[:, 2]]) ** 2, axis=1)
        right = near < far
        assert v["n_test"] == len(tests) and v["accuracy"] == pytest.approx(right.mean())
        # the people answered by a hidden 1-D order: the fit predicts most held-out picks
        assert v["accuracy"] > 0.6
    refit_once(store, cfg, buffer=10, **INSTANT)  # no new answers: no new version
    assert len(store.embedding_versions(fp)) == len(versions)
    with sqlite3.connect(db.removeprefix("sqlite:///")) as con:
        made = con.execute("SELECT DISTINCT version FROM ts_collect_queries").fetchall()
    assert {m for (m,) in made} <= {0, 1}


def misses(q: dict) -> int:
    """The candidate after the head when the head is shown (an attention check failed)."""
    ids = [x["id"] for x in q["candidates"]]
    return (ids.index(q["head"]["id"]) + 1) % len(ids) if q["head"]["id"] in ids else 0


def wilson(p: float, n: int) -> tuple[float, float]:
    """The 95 % Wilson interval from its textbook form (Agresti and Coull 1998, eq. 2)."""
    z2 = 1.959963984540054**2
    mid, half = p + z2 / (2 * n), 1.959963984540054 * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return (mid - half) / (1 + z2 / n), (mid + half) / (1 + z2 / n)


def test_the_owners_dashboard_reports_answers_checks_accuracy_and_the_map(collect):
    cfg, db = collect
    config = ServeConfig(admin_token="owner-token", **INSTANT)
    app = create_app(cfg.catalogue, db, collect=cfg, config=config)
    store, fp = Store(db), cfg.fingerprint
    admin = {"Authorization": "Bearer owner-token"}
    with in_process(app) as c:
        assert c.get("/api/admin/collect").status_code == 401
        assert c.get("/api/admin/collect", headers={"Authorization": "Bearer x"}).status_code == 401
        people = [enrol(c) for _ in range(9)]
        for pr, h in people[:8]:
            run(c, cfg, pr["id"], h, np.random.default_rng(3))
        answer_all(  # fails the checks
            c, people[8][0]["id"], people[8][1],
            body=lambda r: {"screen": r["screen"]["number"], "choice": misses(r["screen"]),
                            "response_ms": 500 + 100 * r["n_queries"]},
        )  # fmt: skip
        early = c.get("/api/admin/collect", headers=admin).json()
        refit_once(store, cfg, buffer=10, **INSTANT)
        board = c.get("/api/admin/collect", headers=admin).json()
        assert c.get("/collect/dashboard").status_code == 200
    assert early["map"] is None and all(v == [] for v in early["samplers"].values())
    rows = board["participants"]
    assert [p["id"] for p in rows] == [pr["id"] for pr, _ in people]
    assert [p["flagged"] for p in rows] == [False] * 8 + [True] and board["flagged"] == 1
    assert rows[8]["attention"] == [0, len(cfg.attention)]
    assert [f["rule"] for f in rows[8]["flags"]] == ["attention"]
    assert all(p["answers"] == cfg.max_queries and p["done"] for p in rows)
    assert rows[8]["response_ms_median"] == float(np.median(500 + 100 * np.arange(24)))
    for p in rows[:8]:
        assert p["skips"] == 0 and p["attention"] == [2, 2] and p["repeats"] == [0, 0]
    assert board["answers"]["count"][-1] == 9 * cfg.max_queries
    assert np.all(np.diff(board["answers"]["t"]) >= 0)
    stored = store.embedding_versions(fp)
    for name in cfg.samplers:
        got = [(v["n_rows"], v["accuracy"]) for v in board["samplers"][name]]
        assert got == [(v["n_rows"], v["accuracy"]) for v in stored if v["sampler"] == name]
        for v in board["samplers"][name]:  # each accuracy with its count and 95 % interval
            assert v["n_test"] == len(held_out_rows(store, fp, **INSTANT)) > 0
            assert v["interval"][0] < v["accuracy"] < v["interval"][1]
            assert v["interval"] == pytest.approx(wilson(v["accuracy"], v["n_test"]))
    m = board["map"]
    assert m["n_rows"] == max(v["n_rows"] for v in stored)
    assert len(m["points"]) == len(m["items"]) == cfg.catalogue.n_items
    assert [it["name"] for it in m["items"]] == list(cfg.catalogue.names)
    # the map keeps the embedding's distances (a rotation of its 2-D points)
    X = np.array(store.latest_embedding(fp, m["sampler"])["embedding"]["embedding"])
    P = np.array(m["points"])
    d = lambda A: np.linalg.norm(A[:, None] - A[None], axis=-1)  # noqa: E731
    np.testing.assert_allclose(d(P), d(X), atol=1e-3)


def test_the_dashboard_plane_keeps_the_largest_spread():
    from tripletsearch.serve.collect.dashboard import plane

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(50, 3)) * [5.0, 2.0, 0.01]  # almost flat in its third axis
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    P = plane(Z @ Q.T + 7.0)
    d = lambda A: np.linalg.norm(A[:, None] - A[None], axis=-1)  # noqa: E731
    np.testing.assert_allclose(d(P), d(Z), atol=0.05)
    assert P.shape == (50, 2) and np.allclose(P.mean(0), 0)
    one = plane(np.arange(5.0)[:, None])  # a 1-D embedding: its line, then zeros
    np.testing.assert_allclose(one[:, 1], 0) and np.testing.assert_allclose(
        np.abs(np.diff(one[:, 0])), 1
    )


def test_no_dashboard_without_an_admin_token_or_a_collect_file(collect):
    cfg, db = collect
    with in_process(create_app(cfg.catalogue, db, collect=cfg)) as c:
        r = c.get("/api/admin/collect", headers={"Authorization": "Bearer x"})
        assert r.status_code == 404 and "admin" in r.json()["error"]
    with in_process(create_app(cfg.catalogue, db, config=ServeConfig(admin_token="t"))) as c:
        r = c.get("/api/admin/collect", headers={"Authorization": "Bearer t"})
        assert r.status_code == 404 and "collects no triplets" in r.json()["error"]
        assert c.get("/collect/dashboard").status_code == 404


def test_a_participant_who_stops_is_left_out_of_the_fits_and_the_export(collect):
    cfg, db = collect
    store, fp = Store(db), cfg.fingerprint
    config = ServeConfig(admin_token="t", **INSTANT)
    app = create_app(cfg.catalogue, db, collect=cfg, config=config)
    with in_process(app) as c:
        (a, ha), (b, hb) = enrol(c), enrol(c)
        run(c, cfg, a["id"], ha, np.random.default_rng(0))
        # b stops before the last query
        reply = answer_all(c, b["id"], hb, body=claiming(900), most=cfg.max_queries - 1)
        assert not reply["done"]
        url = f"/api/participants/{b['id']}/withdraw"
        assert c.post(url, json={}, headers=ha).status_code == 401  # another's token
        gone = c.post(url, json={}, headers=hb).json()
        assert gone["withdrawn"] is True and gone["outcome"] == "withdrawn"
        assert c.post(url, json={}, headers=hb).json() == gone  # repeat
        r = c.post(f"/api/participants/{b['id']}/next", json={}, headers=hb)
        assert r.status_code == 200  # their end screen again, as withdraw's reply
        assert r.json() == {k: v for k, v in gone.items() if k != "withdrawn"}
        board = c.get("/api/admin/collect", headers={"Authorization": "Bearer t"}).json()
    by_id = {p["id"]: p for p in board["participants"]}
    assert by_id[b["id"]]["withdrawn"] and not by_id[a["id"]]["withdrawn"]
    (sa_,) = store.participant_sessions(a["id"])
    mine = sampler_rows(store, fp, sa_.params["sampler"], **INSTANT)
    from tripletsearch.serve.collect.export import collect_triplets

    exported = {t["participant"] for t in collect_triplets(store, **INSTANT)}
    assert exported == {a["id"]} and len(mine) > 0
    (sb,) = store.participant_sessions(b["id"])
    assert len(store.history(sb.id)) == cfg.max_queries - 1  # kept in the database
