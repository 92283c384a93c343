"""The refitter: the process that fits each sampler to its answers and refills its buffer.

:func:`refit_once` is one round, outside any request: per sampler, fit an embedding to its
participants' answers (attention checks, repeats and the held-out test queries left out,
:mod:`.quality`) when they grew by the sampler's refit rule, store that version with the
answers it used and its held-out accuracy, and refill the sampler's buffer of queries in
the database. :func:`refitter` runs rounds in a process of its own (started by
:func:`~.supervisor.start_refitter`), under a database lease so that several servers on one
database share one refitter.

The refitter runs the collect its server read, checked and registered at its start (handed
over in the server's design file, :func:`~..service.processes.write_design`), never the
collect file again: an edit of the file while the server runs (a new name, other samplers)
cannot send it to fill buffers nobody reads, or crash it. Its server's supervisor
(:mod:`.supervisor`) restarts it when it dies and keeps what the owner's dashboard shows of
it, per server.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import os
import signal
import socket
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...collect import (
    REFIT_MIN,
    SAMPLER_MODELS,
    TripletSampler,
    embedding_from_state,
    embedding_state,
)
from ...utils import derived_seed
from ..experiment import bind
from ..service.processes import die_with_parent, read_design, server_id
from ..store import Store, WriteConflict
from ..store.unavailable import unavailable
from .agreement import refresh_agreement
from .file import CollectConfig
from .quality import (
    Counted,
    counted_sessions,
    held_out,
    sampler_answers,
    triplet_accuracy,
)

log = logging.getLogger("tripletsearch.serve")

__all__ = [
    "cause",
    "EmbeddingVersion",
    "refit_once",
    "refitter",
    "state_key",
    "watch_key",
    "gone_process",
    "BUFFER",
    "LEASE_SECONDS",
    "NEW_ANSWERS",
]

BUFFER = 200  # queries a sampler keeps ready in the database
LEASE_SECONDS = 60.0  # a refitter that stops renewing hands over after this
NEW_ANSWERS = REFIT_MIN // 2  # answers since the last read that make the refitter read again


@dataclass(frozen=True)
class EmbeddingVersion:
    """An embedding a refit fitted, as stored.

    Its model, the rows and answers it used (``used``: session id -> the last screen whose
    answer it used), its held-out accuracy on ``n_test`` triplets and its state
    (:func:`tripletsearch.collect.embedding_state`).
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
    fp, name, screen = config.fingerprint, config.samplers[i], config.screen
    model = next((m for m in config.models if m in SAMPLER_MODELS), "gamma-ckl")
    # one pick among candidates: told the triplets it implies (as before trials); ranked
    # picks and odd-one-out: the trials, fitted by their own likelihood
    rows, used = sampler_answers(counted, name, None if screen.is_choice else screen.width)
    sampler = TripletSampler(
        config.catalogue.n_items,
        config.dim,
        method=name,
        model=model,
        refit=None,
        random_state=derived_seed(config.seed, i, len(rows)),
        n_jobs=1,
        **screen.sampler_options(),
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


def asks_random(sampler: TripletSampler) -> bool:
    """Whether ``sampler`` asks random queries now.

    The ``random`` method always; the others until their burn-in's end
    (:attr:`~tripletsearch.collect.TripletSampler.burn_in_`) and an embedding.
    """
    until = sampler.burn_in_
    return until is None or sampler.embedding_ is None or sampler.n_answers_ < until


def refit_once(
    store: Store,
    config: CollectConfig,
    *,
    buffer: int = BUFFER,
    fast_server_ms: float | None = None,
) -> dict[str, int]:
    """Refit every sampler whose answers grew, refill the buffers; queries added per sampler.

    Each sampler is fitted to its own answers (:func:`~.quality.sampler_answers`) when its
    refit rule says so (``TripletSampler.refit_due_``: they grew by 10 % and 50 triplets
    since its last version; warm-started from it); each version is stored with the answers
    it used and its accuracy on the held-out test triplets. Then each sampler asks the
    queries its buffer lacks. First, the participants' agreement with everyone else's
    answers is scored again when due (:func:`~.agreement.refresh_agreement`: a check rule).
    ``fast_server_ms``: the server's clock check (:func:`~.quality.checks`; None: as the
    server recorded it with the collect, :func:`~..clock.fast_server_ms`).
    Runs outside any request.
    """
    fp = config.fingerprint
    answered = store.all_answers()  # one read for all
    # the agreement rule's scores, when due
    refresh_agreement(store, config, answered, fast_server_ms=fast_server_ms)
    counted = counted_sessions(store, fp, answered, fast_server_ms=fast_server_ms)
    tests = held_out(counted)
    added: dict[str, int] = {}
    for i, name in enumerate(config.samplers):
        sampler, version = _refit_sampler(store, config, i, counted, tests)
        missing = buffer - store.free_queries(fp, name)
        got: Any = []
        if missing > 0 and config.screen.is_choice:
            got = sampler.ask(missing, k=config.k)
        elif missing > 0:  # (the trial's own screens; an odd-one-out's rows have no head)
            got = config.screen.buffer_rows(sampler.ask(missing))
        # (asked at random, as the method does before its burn-in's end: version 0)
        added[name] = store.add_queries(fp, name, 0 if asks_random(sampler) else version, got)
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
    """Where server ``server``'s supervisor keeps what it saw of its refitter of ``key``."""
    return f"refitter-watch:{key}:{_tag(server)}"


def refitter(
    database: str,
    config: CollectConfig,
    *,
    server: str | None = None,
    every: float = 2.0,
    rounds: int = 0,
    ready: Any = None,
    fast_server_ms: float | None = None,
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
    stop after that many (tests). ``ready``: an event set after the first round.
    ``fast_server_ms``: the server's clock check (:func:`~.quality.checks`; its
    setting). On SIGTERM it hands its lease over and ends.
    """
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
                    refit_once(store, config, fast_server_ms=fast_server_ms)
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


def main(argv: list[str] | None = None) -> None:
    """``python -m tripletsearch.serve.collect.refitter DATABASE DESIGN [SERVER] [OPTION]``.

    The refitter as its server's child: the collect of the server's design file, its state
    kept under ``SERVER`` (default: the server named in the environment), the server's
    clock check ``--fast-server-ms=MS`` (default: as its server recorded it); it ends
    with its parent, and on SIGTERM or SIGINT (its server's stop: no traceback).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    fast_server_ms: float | None = None
    for a in [a for a in args if a.startswith("--fast-server-ms=")]:
        args.remove(a)
        fast_server_ms = float(a.partition("=")[2])
        if not 0 <= fast_server_ms < math.inf:
            raise ValueError(f"--fast-server-ms: expected a finite number >= 0, got {a}")
    database, design, *rest = args
    die_with_parent(signal.SIGTERM)

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    logging.basicConfig(level=logging.INFO, format="refitter: %(message)s")
    config = read_design(design)["collect"]
    try:
        refitter(database, config, server=rest[0] if rest else None, fast_server_ms=fast_server_ms)
    except Exception as exc:  # the trace for the log; its last line the cause, for the dashboard
        import traceback

        traceback.print_exc()
        print(cause(exc), file=sys.stderr, flush=True)
        raise SystemExit(1) from None


def cause(exc: BaseException) -> str:
    """One line saying why ``exc`` happened: the database's own message where it is one.

    The database or its disk failing (:func:`~..store.unavailable.unavailable`): ``the
    database failed: <the driver's message>``; another database error: its type and the
    driver's message (``.orig``, without the SQL or SQLAlchemy's link); else the
    exception's type and first line.
    """
    trouble = unavailable(exc)
    if trouble is not None:
        return f"the database failed: {trouble[0]}"
    orig = getattr(exc, "orig", None) or exc
    lines = str(orig).strip().splitlines()
    return f"{type(orig).__name__}: {lines[0]}" if lines else type(orig).__name__


if __name__ == "__main__":
    main()
