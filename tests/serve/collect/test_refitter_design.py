"""Every process of a collecting server runs the design the server read and checked at its
start, never the file again: an edit of the collect file while the server runs (a new name,
other samplers) does not reach a restarted refitter or a restarted worker. A refitter that
keeps failing shows on the dashboard with its last error line, and the server says so once;
the dashboard shows each server's own refitter, dead as soon as it is gone."""

from __future__ import annotations

import os
import signal
import sqlite3
import time

import httpx
import pytest

from serve.helpers import (
    ServeProcess,
    children,
    cmdline,
    enrol,
    refitter_of,
    wait_until,
)
from tripletsearch.serve.store import Store

pytestmark = pytest.mark.once  # worker processes: once, not again under the sanitizers

COLLECT = dict(samplers=["active", "random"], dim=2, max_queries=400, seed=1)  # over the shared
ADMIN = {"Authorization": "Bearer test-admin"}  # ServeProcess's token


def wait_for(check, timeout=90.0, every=0.2):
    """``check()`` once it is truthy (:func:`~serve.helpers.wait_until`); fails after
    ``timeout`` s."""
    return wait_until(check, timeout=timeout, message="the condition waited for", every=every)


def beats_after(base: str, pid: int, t: float, rounds: int = 1) -> bool:
    """Whether refitter ``pid`` (server ``base``'s) beat ``rounds`` rounds after time ``t``
    (it beats every 2 s, :func:`~tripletsearch.serve.collect.refitter.run`)."""
    r = httpx.get(f"{base}/api/admin/collect", headers=ADMIN).json()["refitter"]
    ago = r["beat_s_ago"]
    return r["pid"] == pid and ago is not None and time.time() - ago > t + 2.0 * (rounds - 1)


def gone(pid: int) -> bool:
    return not os.path.exists(f"/proc/{pid}")


def serve(tmp_path, *extra, env=None, port=None):
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    args = ["--collect", str(tmp_path / "collect.toml"), "--database", db, *extra]
    return ServeProcess(*args, env=env, port=port)


def key_of(db: str) -> str:
    (row,) = Store(db).experiments()
    return row.key


def workers_of(pid: int) -> list[int]:
    """Server ``pid``'s uvicorn workers (spawned by multiprocessing): not its refitter, nor
    multiprocessing's resource tracker, also a child of the server's."""
    return [c for c in children(pid) if "spawn_main" in cmdline(c)]


def test_an_edited_file_does_not_reach_a_restarted_refitter_or_worker(tmp_path, collect_file):
    collect_file(tmp_path, **COLLECT)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    with serve(tmp_path, "--workers", "2") as srv:
        key, store = key_of(db), Store(db)
        assert wait_for(lambda: all(store.free_queries(key, s) > 0 for s in ("active", "random")))
        # the owner edits the file while the server runs: a new name, other samplers
        collect_file(tmp_path, **{**COLLECT, "samplers": ["random"]}, name="renamed")
        first = refitter_of(srv.proc.pid)
        with sqlite3.connect(tmp_path / "s.sqlite") as con:  # the buffers run dry
            con.execute("DELETE FROM ts_collect_queries WHERE taken_by IS NULL")
        os.kill(first, signal.SIGKILL)
        second = wait_for(lambda: (p := refitter_of(srv.proc.pid)) not in (None, first) and p)
        assert second
        t = time.time()  # (its rounds from here: below, while the rest goes on)
        # the new refitter fills the buffers of the collect the server runs, both samplers'
        assert wait_for(lambda: all(store.free_queries(key, s) > 0 for s in ("active", "random")))
        with sqlite3.connect(tmp_path / "s.sqlite") as con:
            keys = {k for (k,) in con.execute("SELECT DISTINCT collect FROM ts_collect_queries")}
        assert keys == {key}
        # a worker killed is restarted by uvicorn, and serves the same collect
        worker = workers_of(srv.proc.pid)[0]
        os.kill(worker, signal.SIGKILL)
        assert wait_for(lambda: len([w for w in workers_of(srv.proc.pid) if w != worker]) == 2)
        with httpx.Client(base_url=srv.base, timeout=30) as c:
            assert c.get("/api/experiment").json()["title"] == "Alike?"
            pids = [enrol(c)[0]["id"] for _ in range(6)]  # (both workers, most likely)
        assert {store.participant(p).study for p in pids} == {key}
        # no crash loop: the second refitter runs on, round after round
        wait_until(lambda: beats_after(srv.base, second, t, rounds=2), message="its beats")
        assert refitter_of(srv.proc.pid) == second
        board = httpx.get(f"{srv.base}/api/admin/collect", headers=ADMIN).json()
        assert board["refitter"]["alive"] and board["refitter"]["pid"] == second
        r = board["refitter"]
        assert (r["restarts"], r["failures"], r["error"]) == (1, 1, "killed by SIGKILL")
        assert Store(db).experiments()[0].name == "alike"  # nothing registered anew
    out = srv.proc.stdout.read()
    assert "Traceback" not in out, out
    assert out.count("killed by SIGKILL") == 1, out


FAULT = """
import os

def _refitter():
    try:
        with open("/proc/self/cmdline", "rb") as fh:
            return b"collect.refitter" in fh.read()
    except OSError:
        return False

if _refitter():  # the refitter's database calls fail, as on a broken disk
    from tripletsearch.serve.store import Store

    def lease(self, *args, **kwargs):
        raise RuntimeError("injected fault: disk I/O error")

    Store.lease = lease
"""


def test_a_refitter_that_keeps_failing_shows_its_last_error_and_is_said_once(
    tmp_path, collect_file
):
    collect_file(tmp_path, **COLLECT)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(FAULT)
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    with serve(tmp_path, env={"PYTHONPATH": path}) as srv:

        def failing():
            board = httpx.get(f"{srv.base}/api/admin/collect", headers=ADMIN).json()
            return board["refitter"] if board["refitter"]["failures"] >= 3 else None

        state = wait_for(failing, timeout=60)  # 1 + 2 + 4 s of back-off
        assert state and state["error"] == "RuntimeError: injected fault: disk I/O error"
        page = httpx.get(f"{srv.base}/collect/dashboard")
        assert page.status_code == 200  # (the page shows state["error"]: the browser test)
    out = srv.proc.stdout.read()
    assert out.count("Traceback") == 1, out  # the first failure in full, then held back
    assert out.count("keeps failing") == 1, out
    assert "keeps failing (last: RuntimeError: injected fault: disk I/O error)" in out


def test_each_servers_dashboard_shows_its_own_refitter_dead_once_gone(tmp_path, collect_file):
    collect_file(tmp_path, **COLLECT)
    with serve(tmp_path) as a, serve(tmp_path) as b:
        mine = {a.base: refitter_of(a.proc.pid), b.base: refitter_of(b.proc.pid)}
        assert all(mine.values()) and len(set(mine.values())) == 2
        for _ in range(2):  # over beats of both: never the other server's
            t = time.time()
            for base, pid in mine.items():
                r = httpx.get(f"{base}/api/admin/collect", headers=ADMIN).json()["refitter"]
                assert r["pid"] == pid and r["alive"], r
            for base, pid in mine.items():
                wait_until(lambda b=base, p=pid, t=t: beats_after(b, p, t), message="a next beat")
        os.kill(mine[a.base], signal.SIGKILL)
        assert wait_for(lambda: gone(mine[a.base]), every=0.02)  # reaped by its supervisor
        r = httpx.get(f"{a.base}/api/admin/collect", headers=ADMIN).json()["refitter"]
        assert not (r["pid"] == mine[a.base] and r["alive"]), r  # never the dead one alive
        other = httpx.get(f"{b.base}/api/admin/collect", headers=ADMIN).json()["refitter"]
        assert other["pid"] == mine[b.base] and other["alive"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_normal_stop_says_nothing_of_the_refitter(tmp_path, sig, collect_file):
    """The server's stop (its process group signalled, as a terminal's Ctrl-C or a service
    manager does) ends the refitter with it: no restart, no line about it, no traceback."""
    collect_file(tmp_path, **COLLECT)
    srv = serve(tmp_path, "--workers", "2")
    try:
        refitter = refitter_of(srv.proc.pid)
        assert refitter is not None  # a server up: its workers and its refitter's first beat
        wait_until(lambda: len(workers_of(srv.proc.pid)) >= 2, message="two workers")
        wait_until(lambda: beats_after(srv.base, refitter, 0.0), message="a first beat")
        os.killpg(srv.proc.pid, sig)
        srv.proc.wait(timeout=30)
    finally:
        srv.stop()
    out = srv.proc.stdout.read()
    assert "refitter" not in out and "Traceback" not in out, out


def test_a_study_servers_restarted_worker_runs_the_study_it_started_with(tmp_path):
    """The workers of ``serve --study`` too: an edit of the study file after people took
    part (which the next start refuses) does not reach a worker uvicorn restarts."""
    study = 'title = "Find the colour"\ncatalogue = "colours"\ntargets = 3\nseed = 3\n'
    (tmp_path / "study.toml").write_text(study)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    args = ["--study", str(tmp_path / "study.toml"), "--database", db, "--workers", "2"]
    with ServeProcess(*args) as srv:
        enrolled = httpx.post(f"{srv.base}/api/participants", json={"consent": True})
        first = enrolled.json()["id"]
        (tmp_path / "study.toml").write_text(study.replace("seed = 3", "seed = 4").replace(
            "Find the colour", "Another title"))  # fmt: skip
        killed = set(wait_for(lambda: len(w := workers_of(srv.proc.pid)) == 2 and w))
        for worker in killed:  # both
            os.kill(worker, signal.SIGKILL)
        assert wait_for(lambda: len(set(workers_of(srv.proc.pid)) - killed) == 2)
        with httpx.Client(base_url=srv.base, timeout=30) as c:  # (new connections)
            for _ in range(4):
                assert c.get("/api/experiment").json()["title"] == "Find the colour"
            pr = enrol(c)[0]
        store = Store(db)
        assert store.participant(pr["id"]).study == store.participant(first).study
        assert store.participant(pr["id"]).number == 1
