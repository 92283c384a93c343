"""A collecting server's processes: the refitter is its supervised child (killed: a new one
at nice 19 within a minute, while no participant is served an unrecorded fallback), and
every child (workers, refitter) dies with the server, on SIGTERM and on kill -9 of the
main process alone; a restart on the same port then works."""

from __future__ import annotations

import contextlib
import os
import signal
import textwrap
import threading
import time

import httpx
import pytest

from serve.helpers import (
    ServeProcess,
    catalogue_folder,
    children,
    cmdline,
    refitter_of,
    wait_healthy,
)
from tripletsearch.serve.service.processes import nice_of
from tripletsearch.serve.store import Store

pytestmark = pytest.mark.once  # worker processes: once, not again under the sanitizers

COLLECT = """
catalogue = "items"
samplers = ["active", "random"]
test_share = 0.1
n_choices = 2
dim = 2
max_queries = 400
burn_in = 2
seed = 1
"""


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def collecting(tmp_path, *extra: str) -> ServeProcess:
    catalogue_folder(tmp_path)
    (tmp_path / "collect.toml").write_text(textwrap.dedent(COLLECT))
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    return ServeProcess("--collect", str(tmp_path / "collect.toml"), "--database", db, *extra)


def people_answering(base: str, stop: threading.Event, pids: list) -> None:
    """Participants answering (a tenth of a second apart) until ``stop``."""
    with httpx.Client(base_url=base, timeout=30) as c:
        while not stop.is_set():
            pr = c.post("/api/collect/participants", json={"consent": True}).json()
            pids.append(pr["id"])
            h = {"Authorization": f"Bearer {pr['token']}"}
            base_url = f"/api/collect/participants/{pr['id']}"
            reply = c.post(f"{base_url}/next", json={}, headers=h).json()
            while "query" in reply and not stop.is_set():
                time.sleep(0.1)
                body = {"screen": reply["query"]["screen"], "choice": 0}
                reply = c.post(f"{base_url}/answer", json=body, headers=h).json()


def test_a_killed_refitter_is_restarted_and_fallbacks_are_recorded(tmp_path):
    with collecting(tmp_path) as srv:
        first = refitter_of(srv.proc.pid)
        assert first is not None and nice_of(first) == 19
        stop, pids = threading.Event(), []
        clients = [
            threading.Thread(target=people_answering, args=(srv.base, stop, pids)) for _ in range(3)
        ]
        for t in clients:
            t.start()
        time.sleep(2.0)
        os.kill(first, signal.SIGKILL)
        t0, second = time.monotonic(), None
        while time.monotonic() - t0 < 60:
            second = refitter_of(srv.proc.pid)
            if second is not None and second != first:
                break
            time.sleep(0.5)
        restarted_in = time.monotonic() - t0
        time.sleep(3.0)
        stop.set()
        for t in clients:
            t.join(30)
        assert second is not None and second != first and restarted_in < 60
        assert nice_of(second) == 19  # a restart is at the lowest priority too
        assert first not in children(srv.proc.pid)  # the dead one joined: no zombie
    store = Store(f"sqlite:///{tmp_path / 's.sqlite'}")
    active = {s.id for s in store.iter_sessions() if (s.params or {}).get("sampler") == "active"}
    kinds = [h["query"]["kind"] for sid in active for h in store.history(sid)]
    assert kinds and "random" not in kinds  # a query not from the sampler: "fallback"
    assert set(kinds) <= {"burn-in", "adaptive", "fallback", "test"}


@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=["sigterm", "sigint", "kill9"]
)
def test_every_child_dies_with_the_server(tmp_path, sig):
    srv = collecting(tmp_path, "--workers", "2")
    try:
        pgid = srv.proc.pid
        assert refitter_of(srv.proc.pid) is not None
        assert len(children(srv.proc.pid)) >= 3  # two workers and the refitter
        os.kill(srv.proc.pid, sig)  # the main process only
        srv.proc.wait(timeout=15)
        t0 = time.monotonic()
        while group_alive(pgid) and time.monotonic() - t0 < 10:
            time.sleep(0.2)
        left = [p for p in os.listdir("/proc") if p.isdigit() and _in_group(int(p), pgid)]
        assert not group_alive(pgid), [cmdline(int(p)) for p in left]
        # the port is free and the lease handed over: a new server on it serves at once
        again = ServeProcess(
            "--collect", str(tmp_path / "collect.toml"),
            "--database", f"sqlite:///{tmp_path / 's.sqlite'}", port=srv.port,
        )  # fmt: skip
        with again:
            wait_healthy(again.base)
            assert refitter_of(again.proc.pid) is not None
    finally:
        srv.stop()


def _in_group(pid: int, pgid: int) -> bool:
    with contextlib.suppress(OSError):
        return os.getpgid(pid) == pgid
    return False
