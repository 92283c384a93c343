"""A collecting server's processes: the refitter is its supervised child (while it fills no
buffer, participants get fallback queries, recorded as such; killed: a new one at nice 19
within a minute, and queries from its buffer again), and
every child (workers, refitter) dies with the server, on SIGTERM and on kill -9 of the
main process alone; a restart on the same port then works."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal

import httpx
import pytest

from serve.helpers import (
    ServeProcess,
    answer_all,
    children,
    cmdline,
    enrol,
    refitter_of,
    wait_healthy,
    wait_until,
    write_collect,
)
from tripletsearch.serve.collect import load_collect
from tripletsearch.serve.collect.screens import BUFFER_KINDS
from tripletsearch.serve.service.processes import nice_of
from tripletsearch.serve.store import Store

pytestmark = pytest.mark.once  # worker processes: once, not again under the sanitizers

COLLECT = dict(  # this collect file's keys over the shared ones
    samplers=["active", "random"], test_share=0.1, dim=2, max_queries=400, seed=1, title=None
)


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def collecting(tmp_path, *extra: str) -> ServeProcess:
    """``serve --collect`` of this module's collect file, written in ``tmp_path``."""
    write_collect(tmp_path, **COLLECT)
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    return ServeProcess("--collect", str(tmp_path / "collect.toml"), "--database", db, *extra)


def kinds_answered(c, store, pr, h, screens: int) -> list[str]:
    """Participant ``pr`` (their session started) answers ``screens`` more screens (the
    first candidate); the kinds of the queries they answered, as recorded."""
    (session,) = store.participant_sessions(pr["id"])
    done = len(store.history(session.id))
    assert not answer_all(c, pr["id"], h, most=screens)["done"]
    return [row["query"]["kind"] for row in store.history(session.id)[done:]]


def test_a_killed_refitter_is_restarted_and_fallbacks_are_recorded(tmp_path):
    """While no refitter fills the buffer (stopped, its buffer taken), a participant past
    the burn-in gets fallback queries, recorded as such; killed, the refitter is restarted at
    nice 19, refills the buffer, and queries come from it again."""
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    with collecting(tmp_path) as srv, httpx.Client(base_url=srv.base, timeout=30) as c:
        cfg = load_collect(tmp_path / "collect.toml")
        store, fp = Store(db), cfg.fingerprint
        first = refitter_of(srv.proc.pid)
        assert first is not None and nice_of(first) == 19
        wait_until(lambda: store.free_queries(fp, "active") > 0, message="a first buffer")
        os.kill(first, signal.SIGSTOP)  # alive (not restarted), filling nothing
        try:
            for taker in itertools.count():  # the buffer taken, as by a rush of people
                if store.take_query(fp, "active", f"taker {taker}") is None:
                    break
            for _ in range(4):  # the arms are balanced: one of two enrolments is active
                pr, h = enrol(c)
                c.post(f"/api/participants/{pr['id']}/next", json={}, headers=h)
                (session,) = store.participant_sessions(pr["id"])
                if session.params["sampler"] == "active":
                    break
            assert session.params["sampler"] == "active"
            kinds = kinds_answered(c, store, pr, h, 12)
        finally:
            os.kill(first, signal.SIGKILL)
        burn_in = ["burn-in"] * cfg.burn_in
        assert kinds[: cfg.burn_in] == burn_in and "fallback" in kinds
        assert set(kinds[cfg.burn_in :]) <= {"fallback", "test"}  # the buffer empty

        second = wait_until(
            lambda: (r := refitter_of(srv.proc.pid)) not in (None, first) and r,
            message="a refitter restarted after a SIGKILL",
        )
        # a restart is at the lowest priority too (the refitter lowers its own at start)
        wait_until(lambda: nice_of(second) == 19, timeout=30, message="the restart at nice 19")
        assert first not in children(srv.proc.pid)  # the dead one joined: no zombie
        wait_until(lambda: store.free_queries(fp, "active") > 0, message="a buffer refilled")
        again = kinds_answered(c, store, pr, h, 12)
    # the screen shown while the buffer was empty stays as shown; the next ones: its queries
    assert again[0] in {"fallback", "test"}
    assert set(again) & set(BUFFER_KINDS) and set(again[1:]) <= {*BUFFER_KINDS, "test"}


def test_every_child_dies_with_the_server(tmp_path):
    """SIGTERM, SIGINT, then kill -9 to the main process alone: each time every child (the two
    workers and the refitter) dies with it, and a new server on the same port (the port free,
    the lease handed over) serves at once; it is the next signal's server."""
    servers = [collecting(tmp_path, "--workers", "2")]
    try:
        for sig, workers in ((signal.SIGTERM, "2"), (signal.SIGINT, "2"), (signal.SIGKILL, "1")):
            srv = servers[-1]
            pgid = srv.proc.pid
            assert refitter_of(srv.proc.pid) is not None, sig
            # its two workers (multiprocessing's resource tracker, a child too, not one)
            wait_until(
                lambda p=srv.proc.pid: sum("spawn_main" in cmdline(c) for c in children(p)) == 2,
                message=f"{sig.name}: two workers",
            )
            os.kill(srv.proc.pid, sig)  # the main process only
            srv.proc.wait(timeout=15)
            wait_until(
                lambda g=pgid: not group_alive(g),
                timeout=10,
                message=lambda g=pgid, s=sig: f"{s.name}: left: {[cmdline(p) for p in _group(g)]}",
            )
            again = ServeProcess(
                "--collect", str(tmp_path / "collect.toml"),
                "--database", f"sqlite:///{tmp_path / 's.sqlite'}", "--workers", workers,
                port=srv.port,
            )  # fmt: skip
            servers.append(again)
            wait_healthy(again.base)
            assert refitter_of(again.proc.pid) is not None, sig
    finally:
        for srv in servers:
            srv.stop()


def _group(pgid: int) -> list[int]:
    """The processes of group ``pgid``."""
    out = []
    for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
        with contextlib.suppress(OSError):
            if os.getpgid(pid) == pgid:
                out.append(pid)
    return out
