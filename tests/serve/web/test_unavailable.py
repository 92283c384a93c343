"""The database or its disk failing is a 503 with Retry-After and one line of the log per
request, no trace (issue 40: a full disk answered each request 500 with about 100 lines of
traceback); a bug is still a 500 with its trace."""

from __future__ import annotations

import errno
import logging
import os
import sqlite3

import numpy as np
import pytest
import sqlalchemy as sa
from sqlalchemy import event

from serve.helpers import auth, in_process, parts_of, start
from tripletsearch.people import FindPerson
from tripletsearch.serve import create_app, demo_catalogue
from tripletsearch.serve.config import ServeConfig
from tripletsearch.serve.store import StoreBusy
from tripletsearch.serve.store.unavailable import unavailable


def driver(message: str) -> sa.exc.OperationalError:
    return sa.exc.OperationalError("UPDATE ts_sessions", {}, sqlite3.OperationalError(message))


@pytest.mark.parametrize(
    "exc,wait",
    [
        (driver("database or disk is full"), 5),
        (driver("database is locked"), 1),
        (driver("disk I/O error"), 5),
        (OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), 5),
        (StoreBusy("database: could not enrol a participant (too many at once)"), 1),
        (sa.exc.TimeoutError("QueuePool limit of size 8 overflow 32 reached"), 5),
    ],
)
def test_what_counts_as_the_database_failing(exc, wait):
    reason, seconds = unavailable(exc)
    assert seconds == wait and "\n" not in reason and "UPDATE" not in reason
    wrapped = RuntimeError("while recording")
    wrapped.__cause__ = exc  # raise ... from: the cause counts
    assert unavailable(wrapped) == (reason, seconds)


@pytest.mark.parametrize(
    "exc",
    [
        RuntimeError("a bug"),
        KeyError("screen"),
        OSError(errno.ENOENT, "No such file or directory"),
        sa.exc.IntegrityError("INSERT", {}, sqlite3.IntegrityError("UNIQUE constraint failed")),
        sa.exc.ProgrammingError("SELECT", {}, sqlite3.ProgrammingError("no such column")),
    ],
)
def test_a_bug_is_not_the_database_failing(exc):
    assert unavailable(exc) is None


def serve_records(caplog):
    return [r for r in caplog.records if r.name.startswith("tripletsearch.serve")]


def test_a_full_disk_is_503_with_retry_after_and_one_line_per_request(tmp_path, caplog):
    """SQLite's own "database or disk is full" (the file may grow no more pages): every
    answer refused 503 with Retry-After, one warning line each, no trace; once there is room
    again the same answer is taken and the search goes on."""
    cat = demo_catalogue()
    app = create_app(
        cat,
        f"sqlite:///{tmp_path / 's.sqlite'}",
        config=ServeConfig(random_state=0, max_queries=60),
    )
    store = parts_of(app).store
    full = {"on": False}

    @event.listens_for(store.write, "begin")
    def no_room(conn):
        pages = conn.exec_driver_sql("PRAGMA page_count").scalar()
        conn.exec_driver_sql(f"PRAGMA max_page_count = {pages if full['on'] else 1 << 30}")

    with in_process(app) as c:
        s = start(c, n_choices=4)
        person = FindPerson(cat, 300, 3.0, np.random.default_rng(0))
        screen, refused = s["screen"], 0
        full["on"] = True
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="tripletsearch.serve"):
            for _ in range(400):  # answers until the file needs a page more, then 10 more
                body, h = person.answer(screen), auth(s["token"])
                r = c.post(f"/api/sessions/{s['id']}/answer", json=body, headers=h)
                if r.status_code == 200:
                    screen = r.json()["screen"]
                    if screen is None:  # found: another search
                        s = start(c, n_choices=4)
                        screen = s["screen"]
                    continue
                assert r.status_code == 503 and r.headers["retry-after"] == "5", r.text
                assert "try again" in r.json()["error"] and "Traceback" not in r.text
                refused += 1
                if refused == 10:
                    break
        assert refused == 10
        lines = serve_records(caplog)
        assert len(lines) == refused, [r.getMessage() for r in lines]
        for rec in lines:
            assert rec.levelno == logging.WARNING and rec.exc_info is None
            assert rec.getMessage().endswith("database or disk is full")
            assert "\n" not in rec.getMessage()
        full["on"] = False  # room again: the answer refused is taken now
        r = c.post(f"/api/sessions/{s['id']}/answer", json=body, headers=h)
        assert r.status_code == 200, r.text
        got = c.get(f"/api/sessions/{s['id']}", headers=h).json()
        assert [h["screen"] for h in got["history"]] == list(range(len(got["history"])))


def test_a_bug_is_still_a_500_with_its_trace(tmp_path, caplog, monkeypatch):
    app = create_app(
        demo_catalogue(), f"sqlite:///{tmp_path / 's.sqlite'}", config=ServeConfig(random_state=0)
    )
    with in_process(app) as c:
        s = start(c, n_choices=4)

        def broken(*args, **kw):
            raise KeyError("a bug")

        # no seam: create_app builds its own Store from the URL (none to hand it a faulty one)
        monkeypatch.setattr(parts_of(app).store, "record_answer", broken)
        caplog.clear()
        body = {"screen": 0, "choice": 0}
        r = c.post(f"/api/sessions/{s['id']}/answer", json=body, headers=auth(s["token"]))
        assert r.status_code == 500 and "retry-after" not in r.headers
        assert r.json() == {"error": "internal server error"}
        (rec,) = serve_records(caplog)
        assert rec.levelno == logging.ERROR and rec.exc_info is not None
