"""The refitter's error on the dashboard names the cause: the database's own message (the
driver's, SQLAlchemy's ``.orig``), never the last line of SQLAlchemy's text ("(Background
on this error at: https://sqlalche.me/...)"), its SQL or its parameters."""

from __future__ import annotations

import sqlite3

import sqlalchemy as sa

from tripletsearch.serve.collect.refitter import cause
from tripletsearch.serve.collect.supervisor import _why


def database_error(kind, driver):
    return kind("INSERT INTO ts_meta (key, value) VALUES (?, ?)", ("lease:x", "y"), driver)


def test_the_cause_is_the_databases_own_message():
    full = database_error(
        sa.exc.OperationalError, sqlite3.OperationalError("database or disk is full")
    )
    assert "sqlalche.me" in str(full)  # what the dashboard showed: its last line
    assert cause(full) == "the database failed: database or disk is full"
    taken = database_error(
        sa.exc.IntegrityError, sqlite3.IntegrityError("UNIQUE constraint failed: ts_meta.key")
    )
    assert cause(taken) == "IntegrityError: UNIQUE constraint failed: ts_meta.key"
    assert cause(RuntimeError("injected fault\nsecond line")) == "RuntimeError: injected fault"


def test_a_dead_refitters_reason_skips_sqlalchemys_trailer():
    """A trace on stderr ending in SQLAlchemy's SQL, parameters and link (a refitter of an
    older release, or one killed before it said the cause): the reason is the line above."""
    trace = [
        "Traceback (most recent call last):",
        '  File "refitter.py", line 1, in <module>',
        "sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) database or disk is full",
        "[SQL: INSERT INTO ts_meta (key, value) VALUES (?, ?)]",
        "[parameters: ('lease:x', 'y')]",
        "(Background on this error at: https://sqlalche.me/e/21/e3q8)",
    ]
    assert _why(1, trace) == trace[2]
    assert _why(1, [*trace, "the database failed: database or disk is full"]) == (
        "the database failed: database or disk is full"
    )


FAULT = """
import sqlite3

import sqlalchemy as sa
from tripletsearch.serve.store import Store

def lease(self, *args, **kwargs):  # the disk is full: SQLite's own error, through SQLAlchemy
    raise sa.exc.OperationalError(
        "INSERT INTO ts_meta", {}, sqlite3.OperationalError("database or disk is full")
    )

Store.lease = lease
"""


def test_a_failing_refitter_says_the_cause_last(tmp_path, collect_file, monkeypatch):
    """The refitter's own process: its trace for the log, then the cause, its last line."""
    import os
    import subprocess
    import sys
    import tempfile

    from tripletsearch.serve.collect import load_collect
    from tripletsearch.serve.experiment import bind
    from tripletsearch.serve.service.processes import write_design
    from tripletsearch.serve.store import Store

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the design's folder: the test's
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    store = Store(db)
    store.setup()
    config = bind(load_collect(collect_file(tmp_path)), store)
    design = write_design({"collect": config})
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(FAULT)
    path = os.pathsep.join(p for p in (str(tmp_path / "site"), os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, "-m", "tripletsearch.serve.collect.refitter", db, design],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": path, "TMPDIR": str(tmp_path)},
    )  # fmt: skip
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and "Traceback" in done.stderr, done.stderr
    assert lines[-1] == "the database failed: database or disk is full", lines[-4:]
    assert _why(done.returncode, lines) == lines[-1]
