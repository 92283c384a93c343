"""``/api/health`` says whether the server can work: "degraded" (503) while its writes fail
(a full disk: SQLite's own "database or disk is full"), "ok" again once a write goes
through (or none was tried for a while); what it runs on (the worker's pid and memory) and
why it cannot work only for the owner's admin token. The owner's dashboards say what they
must know of the server itself; every reply forbids framing (``X-Frame-Options: DENY``
beside the CSP's ``frame-ancestors 'none'``)."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import event

from serve.helpers import auth, in_process, parts_of, start, write_study
from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.store.engine import FAILING_FOR_S
from tripletsearch.serve.study import load_study

OWNER = "owner-token"


def filling(store):
    """A switch that makes the database file unable to grow (SQLite's max_page_count)."""
    full = {"on": False}

    @event.listens_for(store.write, "begin")
    def no_room(conn):
        pages = conn.exec_driver_sql("PRAGMA page_count").scalar()
        conn.exec_driver_sql(f"PRAGMA max_page_count = {pages if full['on'] else 1 << 30}")

    return full


def test_health_shows_the_worker_to_its_owner_only(tmp_path):
    app = create_app(
        demo_catalogue(),
        f"sqlite:///{tmp_path / 's.sqlite'}",
        config=ServeConfig(admin_token=OWNER),
    )
    with in_process(app) as c:
        for headers in ({}, auth("not-the-token"), auth("x" * 40)):
            r = c.get("/api/health", headers=headers)
            assert r.status_code == 200 and set(r.json()) == {"status", "database_ms"}, r.json()
        r = c.get("/api/health", headers=auth(OWNER))
        worker = r.json()["worker"]
        assert r.json()["status"] == "ok" and worker["pid"] > 0 and worker["process"] > 0
    app = create_app(demo_catalogue(), f"sqlite:///{tmp_path / 't.sqlite'}")  # no owner
    with in_process(app) as c:
        assert "worker" not in c.get("/api/health", headers=auth("anything")).json()


def test_health_is_degraded_while_writes_fail_and_ok_once_they_work(tmp_path):
    app = create_app(
        demo_catalogue(),
        f"sqlite:///{tmp_path / 's.sqlite'}",
        config=ServeConfig(admin_token=OWNER, max_queries=60),
    )
    full = filling(parts_of(app).store)
    with in_process(app) as c:
        start(c, n_choices=4)
        full["on"] = True
        refused = 0
        for _ in range(400):  # new searches until one cannot be recorded
            r = c.post("/api/sessions", json={"n_choices": 4})
            if r.status_code == 503:
                refused += 1
                break
        assert refused == 1, "the file never filled"
        for _ in range(3):  # as long as writes fail: degraded, 503, to everyone
            r = c.get("/api/health")
            assert r.status_code == 503 and r.json()["status"] == "degraded", r.json()
            assert set(r.json()) == {"status", "database_ms"}  # why: the owner's
        owner = c.get("/api/health", headers=auth(OWNER)).json()
        assert owner["writes"]["reason"] == "database or disk is full"
        assert owner["writes"]["failing_since"] <= time.time() and owner["worker"]["pid"] > 0
        store = parts_of(app).store  # not known to fail once none was tried for a while
        assert store.failing_writes(now=time.time() + FAILING_FOR_S + 1) is None
        full["on"] = False  # room again: the next write goes through, and health says ok
        assert c.post("/api/sessions", json={"n_choices": 4}).status_code == 201
        r = c.get("/api/health")
        assert r.status_code == 200 and r.json()["status"] == "ok", r.json()


@pytest.mark.parametrize("days, said", [(3.5, "(in 3 days)"), (0.5, " hours)"), (30, None)])
def test_the_dashboard_says_the_certificate_expires_soon(tmp_path, days, said):
    study = load_study(write_study(tmp_path))
    end = time.time() + days * 86400
    certificate = {"file": "/etc/cert.pem", "not_before": time.time() - 86400, "not_after": end}
    config = ServeConfig(
        database=f"sqlite:///{tmp_path / 's.sqlite'}", admin_token=OWNER, certificate=certificate
    )
    app = create_app(None, config=config, study=study)
    full = filling(parts_of(app).store)
    with in_process(app) as c:
        notices = c.get("/api/admin/study", headers=auth(OWNER)).json()["notices"]
        if said is None:
            assert notices == []
        else:
            (line,) = notices
            assert "the HTTPS certificate /etc/cert.pem expires on" in line and said in line
            assert "renew it and restart the server" in line
        full["on"] = True
        for _ in range(400):  # enrol until the file is full
            if c.post("/api/participants", json={"consent": True}).status_code == 503:
                break
        notices = c.get("/api/admin/study", headers=auth(OWNER)).json()["notices"]
        assert "every answer is refused (503)" in notices[-1]
        assert "(database or disk is full)" in notices[-1]


def test_every_reply_forbids_framing(tmp_path):
    app = create_app(
        demo_catalogue(),
        f"sqlite:///{tmp_path / 's.sqlite'}",
        config=ServeConfig(admin_token=OWNER),
    )
    with in_process(app) as c:
        page = c.get("/")
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        replies = [page, c.get("/api/health"), c.get("/api/catalogue?limit=1")]
        replies += [c.get("/api/no-such-route"), c.get("/api/admin/export")]
        for r in replies:
            assert r.headers["x-frame-options"] == "DENY", (r.url, r.status_code)
