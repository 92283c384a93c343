"""A real server's configuration reaches every process: its workers (``TRIPLETSEARCH_SERVE``,
the configuration's dict) and its refitter (the server's clock check), as given once on
``tripletsearch serve``'s command line."""

from __future__ import annotations

import json

import httpx
import pytest

from serve.helpers import (
    ServeProcess,
    catalogue_folder,
    children,
    cmdline,
    refitter_of,
    wait_until,
)
from tripletsearch.cli import main
from tripletsearch.serve import clock
from tripletsearch.serve.store import Store

pytestmark = pytest.mark.once  # worker processes: once, not again under the sanitizers


def _environment(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as fh:
        pairs = [p.split(b"=", 1) for p in fh.read().split(b"\0") if b"=" in p]
    return {k.decode(): v.decode() for k, v in pairs}


def test_the_workers_and_the_refitter_run_the_servers_configuration(tmp_path):
    catalogue_folder(tmp_path)
    (tmp_path / "collect.toml").write_text(
        'title = "Alike?"\ncatalogue = "items"\nsamplers = ["random"]\nmax_queries = 12\n'
        "agreement = false\n"
    )
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    args = ["--collect", str(tmp_path / "collect.toml"), "--database", db]
    args += ["--workers", "2", "--fast-server-ms", "40", "--max-queries", "17"]
    with ServeProcess(*args) as srv:
        refitter = wait_until(lambda: refitter_of(srv.proc.pid), message="the refitter")
        # the server recorded its clock bound with the collect: the refitter (and every
        # other reader of the checks) reads it there, not from its command line
        assert "--fast-server-ms" not in cmdline(refitter)
        store = Store(db)
        (row,) = store.experiments()
        assert clock.fast_server_ms(store, row.key) == 40.0
        store.dispose()

        def workers():
            mine = [c for c in children(srv.proc.pid) if c != refitter]
            found = [
                w
                for p in mine
                for w in [p, *children(p)]
                # (uvicorn's spawned workers: multiprocessing's resource tracker, a child of
                # the server's too, inherits the variable but serves nothing)
                if "TRIPLETSEARCH_SERVE" in _environment(w) and "spawn_main" in cmdline(w)
            ]
            return found if len(found) >= 2 else None

        seen = wait_until(workers, message="two workers")
        configs = [json.loads(_environment(w)["TRIPLETSEARCH_SERVE"]) for w in seen]
        assert all(c == configs[0] for c in configs)
        config = configs[0]
        assert (config["fast_server_ms"], config["max_queries"], config["database"]) == (
            40.0,
            17,
            db,
        )
        assert config["design"] and config["catalogue"] is None and config["demo"] is None
        with httpx.Client(base_url=srv.base, timeout=30) as c:  # a collect server: closed
            reply = c.post("/api/sessions", json={"mode": "find"})
            assert reply.status_code in (403, 409) and "collects triplets" in reply.json()["error"]


def test_a_bad_clock_check_is_one_line_and_code_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TRIPLETSEARCH_ADMIN_TOKEN", "x")  # (no token file written)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    code = main(["serve", "--demo", "colours", "--database", db, "--fast-server-ms", "-5"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: --fast-server-ms: expected a number >= 0, got -5.0"
