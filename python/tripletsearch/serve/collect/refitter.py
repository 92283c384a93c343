"""The refitter: the process that fits each sampler to its answers and refills its buffer.

:func:`refit_once` is one round, outside any request: per sampler, fit an embedding to its
participants' answers (attention checks, repeats and the held-out test queries left out,
:mod:`.quality`) when they grew by the sampler's refit rule, store that version with the
answers it used and its held-out accuracy, and refill the sampler's buffer of queries in
the database. :func:`refitter` runs rounds in a process of its own (:func:`start_refitter`),
under a database lease so that several servers on one database share one refitter.
"""

from __future__ import annotations

import os
import socket
import time
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
from .quality import Counted, counted_sessions, held_out, sampler_answers, triplet_accuracy

__all__ = [
    "EmbeddingVersion",
    "refit_once",
    "refitter",
    "start_refitter",
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
    queries its buffer lacks. Runs outside any request.
    """
    fp = config.fingerprint
    counted = counted_sessions(store, fp, store.all_answers())  # one read for all
    tests = held_out(counted)
    added: dict[str, int] = {}
    for i, name in enumerate(config.samplers):
        sampler, version = _refit_sampler(store, config, i, counted, tests)
        missing = buffer - store.free_queries(fp, name)
        got: Any = sampler.ask(missing, k=config.k) if missing > 0 else []
        added[name] = store.add_queries(fp, name, version, got)
    return added


def refitter(
    database: str, collect_file: str, *, every: float = 2.0, rounds: int = 0, ready: Any = None
) -> None:
    """The refitter process: :func:`refit_once` every ``every`` seconds, under a lease.

    It refits while it holds the collect design's lease (one refitter for all servers on
    the database), at a lower CPU priority than the servers, and reads the answers again
    only when :data:`NEW_ANSWERS` more came in or a buffer runs under half full.
    ``rounds`` > 0: stop after that many (tests). ``ready``: an event set after the first
    round (the buffers filled, or another server's refitter holds the lease).
    """
    from ..experiment import bind
    from .file import load_collect

    if hasattr(os, "nice"):
        os.nice(19)
    store, owner = Store(database), f"{socket.gethostname()}:{os.getpid()}"
    config = bind(load_collect(collect_file), store, register=False)  # its key, by name
    name = f"refit:{config.fingerprint}"
    done, read = 0, -NEW_ANSWERS
    while rounds <= 0 or done < rounds:
        if store.lease(name, owner, LEASE_SECONDS, gone=gone_process):
            n = store.count_answers()  # cheap: the answers are read only when they grew
            if n - read >= NEW_ANSWERS or _buffers_low(store, config):
                refit_once(store, config)
                read = n
            done += 1
        if ready is not None:
            ready.set()
        time.sleep(every)


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


def start_refitter(database: str, collect_file: str, *, wait: float = 120.0) -> Any:
    """Start :func:`refitter` in a process of its own (a daemon: it ends with the server).

    Waits (up to ``wait`` seconds) for its first round: the process's start and the first
    fill of the buffers do not compete with the first participants' requests.
    """
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    proc = ctx.Process(
        target=refitter,
        args=(database, os.path.abspath(collect_file)),
        kwargs={"ready": ready},
        daemon=True,
    )
    proc.start()
    ready.wait(wait)
    return proc
