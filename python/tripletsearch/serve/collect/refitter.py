"""The refitter: the process that fits each sampler to its answers and refills its buffer.

:func:`refit_once` is one round, outside any request: per sampler, fit an embedding to its
participants' answers (attention checks, repeats and the held-out test queries left out,
:mod:`.quality`) when they grew by the sampler's refit rule, store that version with the
answers it used and its held-out accuracy, and refill the sampler's buffer of queries in
the database. :func:`refitter` runs rounds in a process of its own (:func:`start_refitter`),
under a database lease so that several servers on one database share one refitter.

The refitter runs the collect its server read, checked and registered at its start (handed
over in the server's design file, :func:`~..service.processes.write_design`), never the
collect file again: an edit of the file while the server runs (a new name, other samplers)
cannot send it to fill buffers nobody reads, or crash it. Its server's :class:`Supervisor`
restarts it when it dies and keeps what the owner's dashboard shows of it per server
(:func:`refitter_state`): alive or not within a second of its death, its last error line
when it keeps failing, said once in the server's log.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._validation import derived_seed
from ...collect import TripletSampler
from ...collect._sampler import (
    REFIT_MIN,
    SAMPLER_MODELS,
    embedding_from_state,
    embedding_state,
)
from ..store import Store, WriteConflict
from .file import CollectConfig
from .quality import (
    Counted,
    counted_sessions,
    held_out,
    refresh_agreement,
    sampler_answers,
    triplet_accuracy,
)

log = logging.getLogger("tripletsearch.serve")

__all__ = [
    "EmbeddingVersion",
    "refit_once",
    "refitter",
    "start_refitter",
    "Supervisor",
    "state_key",
    "watch_key",
    "refitter_state",
    "gone_process",
    "BUFFER",
    "LEASE_SECONDS",
    "NEW_ANSWERS",
]

BUFFER = 200  # queries a sampler keeps ready in the database
LEASE_SECONDS = 60.0  # a refitter that stops renewing hands over after this
NEW_ANSWERS = REFIT_MIN // 2  # answers since the last read that make the refitter read again
ALIVE_S = 15.0  # a refitter of another host that beat within this is alive (it beats every 2 s)
RECOVERED_S = 60.0  # a restarted refitter that ran this long is no longer failing
STOP_GRACE_S = 10.0  # a refitter asked to stop waits this for its server's own stop


@dataclass(frozen=True)
class EmbeddingVersion:
    """An embedding a refit fitted, as stored.

    Its model, the rows and answers it used (``used``: session id -> the last screen whose
    answer it used), its held-out accuracy on ``n_test`` triplets and its state
    (``tripletsearch.collect._sampler.embedding_state``).
    """

    model: str
    n_rows: int
    used: dict[str, int]
    n_test: int
    accuracy: float | None
    embedding: dict


def _refit_sampler(
    store: Store, config: CollectConfig, i: int, counted: Counted, tests: np.ndarray
) -> tuple[TripletSampler, int]:
    """Sampler ``i`` with its rows told and its newest embedding (refitted when due).

    Returns the sampler and its embedding's version number (0: none yet).
    """
    fp, name = config.fingerprint, config.samplers[i]
    model = next((m for m in config.models if m in SAMPLER_MODELS), "gamma-ckl")
    rows, used = sampler_answers(counted, name)
    sampler = TripletSampler(
        config.catalogue.n_items,
        config.dim,
        method=name,
        model=model,
        refit=None,
        random_state=derived_seed(config.seed, i, len(rows)),
        n_jobs=1,
    )
    latest = store.latest_embedding(fp, name)
    if len(rows):
        sampler.tell(rows)
    if latest is not None:
        emb = embedding_from_state(latest["embedding"], config.catalogue.n_items)
        sampler.set_embedding(emb, n_fitted=int(latest["n_rows"]))
    number = 0 if latest is None else int(latest["version"])
    if sampler.refit_due_:  # the sampler's own rule (10 % and 50 answers since its version)
        emb = sampler.refit()  # warm-started from the installed version
        version = EmbeddingVersion(
            model=model,
            n_rows=len(rows),
            used=used,
            n_test=len(tests),
            accuracy=triplet_accuracy(np.asarray(emb.embedding_), tests),
            embedding=embedding_state(emb),
        )
        try:
            number = store.add_embedding(fp, name, version)
        except WriteConflict:
            number += 1  # another refitter stored this version meanwhile
    return sampler, number


def refit_once(store: Store, config: CollectConfig, *, buffer: int = BUFFER) -> dict[str, int]:
    """Refit every sampler whose answers grew, refill the buffers; queries added per sampler.

    Each sampler is fitted to its own answers (:func:`~.quality.sampler_answers`) when its
    refit rule says so (``TripletSampler.refit_due_``: they grew by 10 % and 50 triplets
    since its last version; warm-started from it); each version is stored with the answers
    it used and its accuracy on the held-out test triplets. Then each sampler asks the
    queries its buffer lacks. First, the participants' agreement with everyone else's
    answers is scored again when due (:func:`~.quality.refresh_agreement`: a check rule).
    Runs outside any request.
    """
    fp = config.fingerprint
    answered = store.all_answers()  # one read for all
    refresh_agreement(store, config, answered)  # the agreement rule's scores, when due
    counted = counted_sessions(store, fp, answered)
    tests = held_out(counted)
    added: dict[str, int] = {}
    for i, name in enumerate(config.samplers):
        sampler, version = _refit_sampler(store, config, i, counted, tests)
        missing = buffer - store.free_queries(fp, name)
        got: Any = sampler.ask(missing, k=config.k) if missing > 0 else []
        added[name] = store.add_queries(fp, name, version, got)
    return added


def _tag(server: str) -> str:
    return hashlib.sha256(server.encode()).hexdigest()[:12]


def state_key(key: str, server: str | None = None) -> str:
    """Where refitters of collect ``key`` keep their state in ``ts_meta``.

    Without ``server``: the state of the refitter that holds the lease (its last refit, the
    answers it read); with: that of server ``server``'s own refitter (its beat, whether it
    holds the lease), one per server (:func:`~..service.processes.server_id`).
    """
    return f"refitter:{key}" if server is None else f"refitter:{key}:{_tag(server)}"


def watch_key(key: str, server: str) -> str:
    """Where server ``server``'s :class:`Supervisor` keeps what it saw of its refitter."""
    return f"refitter-watch:{key}:{_tag(server)}"


def refitter(
    database: str,
    config: CollectConfig,
    *,
    server: str | None = None,
    every: float = 2.0,
    rounds: int = 0,
    ready: Any = None,
) -> None:
    """The refitter: :func:`refit_once` every ``every`` seconds, under a lease.

    ``config``: the collect as its server registered it (its key; one without is looked up
    by its name, read only). It refits while it holds the collect's lease (one refitter
    for all servers on the database), at the lowest CPU priority, and reads the answers
    again only when :data:`NEW_ANSWERS` more came in or a buffer runs under half full.
    After each round it keeps its state in the database under its server's name
    (``server``, default :func:`~..service.processes.server_id`; :func:`state_key`: pid,
    when it beat, whether it holds the lease) and, holding the lease, the collect's (its
    last refit, the answers it read), which the owner's dashboard shows. ``rounds`` > 0:
    stop after that many (tests). ``ready``: an event set after the first round. On
    SIGTERM it hands its lease over and ends.
    """
    from ..experiment import bind
    from ..service.processes import server_id

    if hasattr(os, "nice") and os.nice(0) < 19:
        os.nice(19 - os.nice(0))
    store, owner = Store(database), f"{socket.gethostname()}:{os.getpid()}"
    if not config.key:  # (a server hands it over registered)
        config = bind(config, store, register=False)
    server = server or server_id()
    name = f"refit:{config.fingerprint}"
    state = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
    state.update(last_refit=None, read=0, holds_lease=False)
    done, read = 0, -NEW_ANSWERS
    try:
        while rounds <= 0 or done < rounds:
            state["holds_lease"] = store.lease(name, owner, LEASE_SECONDS, gone=gone_process)
            if state["holds_lease"]:
                n = store.count_answers()  # cheap: the answers are read only when they grew
                if n - read >= NEW_ANSWERS or _buffers_low(store, config):
                    refit_once(store, config)
                    read = n
                    state.update(last_refit=time.time(), read=n)
                done += 1
            beat = {**state, "beat": time.time(), "server": server}
            store.put_meta(state_key(config.fingerprint, server), beat)
            if state["holds_lease"]:  # the collect's: only its lease holder's
                store.put_meta(state_key(config.fingerprint), beat)
            if ready is not None:
                ready.set()
            time.sleep(every)
    finally:
        with contextlib.suppress(Exception):  # a clean end hands the lease over at once
            store.release(name, owner)


def _buffers_low(store: Store, config: CollectConfig) -> bool:
    """Whether a sampler's buffer is under half full."""
    fp = config.fingerprint
    return any(store.free_queries(fp, name) < BUFFER // 2 for name in config.samplers)


def gone_process(holder: str) -> bool:
    """Whether lease holder ``holder`` ("host:pid") was a process of this host that is gone."""
    host, _, pid = holder.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


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
    from ..service.processes import server_id

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
    last = next((line.strip() for line in reversed(lines) if line.strip()), "")
    return last[:300] or f"ended with code {code}"


# a refitter that ended as asked (SIGTERM, SIGINT, SIGHUP: its server ending, most often)
_ASKED = {0, -signal.SIGTERM, -signal.SIGINT, -getattr(signal, "SIGHUP", signal.SIGTERM)}


class Supervisor:
    """Keeps the refitter running as a child of this process, at the lowest CPU priority.

    The child runs the collect of the server's ``design`` file
    (:func:`~..service.processes.write_design`), as the server registered it. A daemon
    thread checks it every ``check`` seconds; when it died, it is joined (no zombie holds
    the lease) and started again after a backoff (1, 2, 4, ... 30 seconds; back to 1 once
    it ran :data:`RECOVERED_S`). What it saw (pid, running, restarts, consecutive failures,
    the last error line) is kept in the database (:func:`watch_key`) for the dashboard.
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
    ):
        from ..service.processes import server_id

        self.database, self.design, self.key = database, os.path.abspath(design), key
        self.server = server or server_id()
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
        cmd = [sys.executable, "-m", __name__, self.database, self.design, self.server]
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace"
        )
        self._lines = lines = deque(maxlen=50)
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


def start_refitter(database: str, design: str, key: str, *, wait: float = 120.0) -> Any:
    """Start the supervised refitter of collect ``key`` (:class:`Supervisor`); it.

    ``design``: the server's design file (:func:`~..service.processes.write_design`: the
    collect as the server registered it). Waits (up to ``wait`` seconds) for its first
    round.
    """
    return Supervisor(database, design, key).start(wait=wait)


def main(argv: list[str] | None = None) -> None:
    """``python -m tripletsearch.serve.collect.refitter DATABASE DESIGN [SERVER]``.

    The refitter as its server's child: the collect of the server's design file, its state
    kept under ``SERVER`` (default: the server named in the environment); it ends with its
    parent, and on SIGTERM or SIGINT (its server's stop: no traceback).
    """
    from ..service.processes import die_with_parent, read_design

    database, design, *rest = sys.argv[1:] if argv is None else argv
    die_with_parent(signal.SIGTERM)

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    logging.basicConfig(level=logging.INFO, format="refitter: %(message)s")
    config = read_design(design)["collect"]
    refitter(database, config, server=rest[0] if rest else None)


if __name__ == "__main__":
    main()
