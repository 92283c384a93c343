"""The refitter's supervision: its server keeps it running, says its deaths, shows its state.

:class:`Supervisor` (:func:`start_refitter`) runs the refitter (:mod:`.refitter`) as a child
of the server on the collect of the server's design file, restarts it when it dies, says a
death and a run of failures once in the server's log, and keeps what it saw in the database
(:func:`~.refitter.watch_key`). :func:`refitter_state` is what the owner's dashboard shows of a
server's refitter: alive or not as soon as its process is gone, its last error line while
it keeps failing; one state per server on the database.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from typing import Any

from ..service.processes import server_id
from ..store import Store
from .refitter import gone_process, state_key, watch_key

log = logging.getLogger("tripletsearch.serve")

__all__ = ["Supervisor", "start_refitter", "refitter_state"]

ALIVE_S = 15.0  # a refitter of another host that beat within this is alive (it beats every 2 s)
RECOVERED_S = 60.0  # a restarted refitter that ran this long is no longer failing
STOP_GRACE_S = 10.0  # a refitter asked to stop waits this for its server's own stop
REFITTER = "tripletsearch.serve.collect.refitter"  # the child's module


def refitter_state(
    store: Store, key: str, *, server: str | None = None, alive_s: float = ALIVE_S
) -> dict[str, Any]:
    """What the owner's dashboard shows of server ``server``'s refitter of collect ``key``.

    ``server``: default this process's (:func:`~..service.processes.server_id`: a worker
    shows its own server's refitter, never another server's on the same database). A
    refitter of this host is alive while its process runs (a death shows at once, and
    within a second its supervisor's record of it); of another host, while it beat within
    ``alive_s`` seconds. With its pid, how long ago it beat, whether it holds the lease,
    the collect's last refit and the answers since (by whichever refitter holds the
    lease), its restarts and, while it fails (until it ran :data:`RECOVERED_S` seconds),
    its consecutive failures and its last error line.
    """
    server = server or server_id()
    shared = store.get_meta(state_key(key)) or {}
    own = store.get_meta(state_key(key, server))
    watch = store.get_meta(watch_key(key, server)) or {}
    beat = own if own is not None else ({} if watch else shared)  # (one run apart: its own)
    pid, host = watch.get("pid", beat.get("pid")), watch.get("host", beat.get("host"))
    now = time.time()
    mine = beat.get("beat") is not None and beat.get("pid") == pid
    if pid is None or watch.get("running") is False:
        alive = False
    elif host == socket.gethostname():
        alive = not gone_process(f"{host}:{pid}")
    else:
        alive = mine and now - float(beat["beat"]) <= alive_s
    failures = int(watch.get("failures", 0))
    return {
        "alive": bool(alive),
        "pid": pid,
        "server": server,
        "beat_s_ago": round(now - float(beat["beat"]), 1) if mine else None,
        "holds_lease": bool(mine and beat.get("holds_lease")),
        "last_refit": shared.get("last_refit"),
        "answers_waiting": max(0, store.count_answers() - int(shared.get("read", 0))),
        "restarts": int(watch.get("restarts", 0)),
        "failures": failures,
        "error": watch.get("error") if failures else None,
    }


def _why(code: int, lines: Any) -> str:
    """Why a refitter ended: the signal that killed it, or its last line on stderr."""
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    said = [line.strip() for line in lines if line.strip()]
    # a database's trace ends with its SQL and SQLAlchemy's link: the cause is above them
    noise = ("(Background on this error at:", "[SQL:", "[parameters:")
    said = [x for x in said if not x.startswith(noise)]
    last = said[-1] if said else ""
    return last[:300] or f"ended with code {code}"


# a refitter that ended as asked (SIGTERM, SIGINT, SIGHUP: its server ending, most often)
_ASKED = {0, -signal.SIGTERM, -signal.SIGINT, -getattr(signal, "SIGHUP", signal.SIGTERM)}


class Supervisor:
    """Keeps the refitter running as a child of this process, at the lowest CPU priority.

    The child runs the collect of the server's ``design`` file
    (:func:`~..service.processes.write_design`), as the server registered it, with the
    server's ``fast_server_ms`` (``--fast-server-ms=`` on its command line; None: its
    default). A daemon
    thread checks it every ``check`` seconds; when it died, it is joined (no zombie holds
    the lease) and started again after a backoff (1, 2, 4, ... 30 seconds; back to 1 once
    it ran :data:`RECOVERED_S`). What it saw (pid, running, restarts, consecutive failures,
    the last error line) is kept in the database (:func:`~.refitter.watch_key`) for the dashboard.
    The log says a death and its reason once, and once that the refitter keeps failing
    (the child's stderr, forwarded to this process's, is held back until a restarted
    child ran a while: no traceback every 30 s). A child that ended as asked (SIGTERM,
    SIGINT: its server stopping) is restarted only if the server did not stop within
    :data:`STOP_GRACE_S`, and a server's stop says nothing. The child ends with this
    process (:func:`~..service.processes.die_with_parent`); :meth:`stop` ends it first
    (SIGTERM: it hands its lease over).
    """

    def __init__(
        self,
        database: str,
        design: str,
        key: str,
        *,
        server: str | None = None,
        check: float = 1.0,
        fast_server_ms: float | None = None,
    ):

        self.database, self.design, self.key = database, os.path.abspath(design), key
        self.server = server or server_id()
        self.fast_server_ms = fast_server_ms
        self.check = check
        self.proc: Any = None
        self.restarts = 0
        self.failures = 0  # consecutive deaths, until a child runs RECOVERED_S
        self.error: str | None = None
        self._lines: deque[str] = deque(maxlen=50)  # the child's last lines on stderr
        self._reader: threading.Thread | None = None
        self._quiet = False  # hold the child's stderr back (it keeps failing)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._store: Store | None = None

    def _spawn(self) -> Any:
        cmd = [sys.executable, "-m", REFITTER, self.database, self.design, self.server]
        if self.fast_server_ms is not None:  # the server's setting (default: the module's)
            cmd.append(f"--fast-server-ms={self.fast_server_ms!r}")
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace"
        )
        lines: deque[str] = deque(maxlen=50)
        self._lines = lines
        self._reader = threading.Thread(
            target=self._read, args=(proc, lines), name="refitter-stderr", daemon=True
        )
        self._reader.start()
        return proc

    def _read(self, proc: Any, lines: deque[str]) -> None:
        """Keep the child's stderr lines; forward them unless held back."""
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            if not self._quiet:
                with contextlib.suppress(OSError, ValueError):
                    sys.stderr.write(line)
                    sys.stderr.flush()

    def _record(self, *, running: bool, ended: int | None = None) -> None:
        """Keep what this supervisor saw of its refitter (the dashboard shows it)."""
        value = {
            "server": self.server,
            "host": socket.gethostname(),
            "pid": self.proc.pid,
            "running": running,
            "ended": ended,
            "restarts": self.restarts,
            "failures": self.failures,
            "error": self.error,
            "at": time.time(),
        }
        try:
            if self._store is None:
                self._store = Store(self.database)
            self._store.put_meta(watch_key(self.key, self.server), value)
        except Exception as exc:  # the database is away: the log still says it
            log.debug("refitter state not kept: %s", exc)

    def start(self, *, wait: float = 120.0) -> Supervisor:
        """Start the refitter and its watch; wait (up to ``wait`` s) for its first round.

        The process's start and the first fill of the buffers do not compete with the
        first participants' requests.
        """
        self.proc = self._spawn()
        self._record(running=True)
        store, t0 = Store(self.database), time.time()
        try:
            while time.time() - t0 < wait and self.proc.poll() is None:
                beat = store.get_meta(state_key(self.key, self.server))
                if beat is not None and beat.get("pid") == self.proc.pid:
                    break
                time.sleep(0.2)
        finally:
            store.dispose()
        self._thread = threading.Thread(target=self._watch, name="refitter-watch", daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        backoff, since = 1.0, time.monotonic()
        while not self._stop.wait(self.check):
            code = self.proc.poll()
            if code is None:
                if time.monotonic() - since > RECOVERED_S:
                    backoff = 1.0
                    if self.failures:
                        self._recovered()
                continue
            if code in _ASKED and self._stop.wait(STOP_GRACE_S):
                return  # its server stops: nothing to say
            if self._reader is not None:
                self._reader.join(2.0)  # its last lines
            self._died(code, backoff)
            self._quiet = True  # a restart after a death is quiet until it ran a while
            if self._stop.wait(backoff):
                return
            self.proc, since = self._spawn(), time.monotonic()
            self.restarts += 1
            backoff = min(2 * backoff, 30.0)
            self._record(running=True)
            if self.failures == 1:
                log.warning("refitter restarted (pid %d)", self.proc.pid)

    def _died(self, code: int, backoff: float) -> None:
        """Count a death, keep its reason, and say it (once per run of failures)."""
        pid, why = self.proc.pid, _why(code, self._lines)
        if code in _ASKED:
            why = f"was stopped ({why if code else 'code 0'}) while its server runs"
        self.failures += 1
        self.error = why
        self._record(running=False, ended=code)
        if self.failures == 1:
            log.warning("refitter (pid %d) ended: %s; restarting it in %g s", pid, why, backoff)
        elif self.failures == 2:
            log.error(
                "the refitter keeps failing (last: %s): restarted after up to 30 s each time; "
                "the collect's dashboard shows its last error; until it runs, the samplers' "
                "buffers run down and participants get fallback queries",
                why,
            )

    def _recovered(self) -> None:
        """A restarted refitter ran :data:`RECOVERED_S`: no longer failing."""
        if self.failures > 1:
            log.warning(
                "refitter running again (pid %d) after %d failures", self.proc.pid, self.failures
            )
        self.failures, self.error, self._quiet = 0, None, False
        self._record(running=True)

    def stop(self, timeout: float = 5.0) -> None:
        """End the watch and the refitter (SIGTERM, then SIGKILL after ``timeout``)."""
        self._stop.set()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._store is not None:
            self._store.dispose()


def start_refitter(
    database: str,
    design: str,
    key: str,
    *,
    wait: float = 120.0,
    fast_server_ms: float | None = None,
) -> Any:
    """Start the supervised refitter of collect ``key`` (:class:`Supervisor`); it.

    ``design``: the server's design file (:func:`~..service.processes.write_design`: the
    collect as the server registered it). Waits (up to ``wait`` seconds) for its first
    round. ``fast_server_ms``: the server's clock check
    (:attr:`~..config.ServeConfig.fast_server_ms`), handed to the child on its command line
    (None: the refitter's default).
    """
    return Supervisor(database, design, key, fast_server_ms=fast_server_ms).start(wait=wait)
