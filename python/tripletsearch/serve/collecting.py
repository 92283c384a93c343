"""The collect mode's participants and refits: ``/api/collect``'s service.

:class:`CollectService` enrols consenting, pseudonymous participants (assigned at random
to one of the collect file's samplers, from the file's seed and their enrolment number),
starts each one's collect session (:class:`~.modes.collect.CollectMode`) and answers
through the search service like every mode (a repeated screen gets the stored reply; a
choice out of range or an answer to a screen never shown is a 4xx with a message).

:func:`refit_once` is what the refitter does, outside any request: per sampler, fit an
embedding to its participants' answers (attention checks, repeats and the held-out test
queries left out) and refill its buffer of queries in the database.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import derived_seed
from ..collect import TripletSampler
from ..collect._sampler import (
    REFIT_GROWTH,
    REFIT_MIN,
    SAMPLER_MODELS,
    embedding_from_state,
    embedding_state,
)
from .collect import CollectConfig
from .errors import Conflict
from .modes.collect import ANSWER_KINDS, CollectMode, collect_fingerprint
from .participants import Participants
from .schema import Answer
from .service import Owner, SearchService
from .store import SessionRow, Store, WriteConflict

__all__ = [
    "CollectService",
    "refit_once",
    "refitter",
    "start_refitter",
    "gone_process",
    "sampler_rows",
    "checks",
    "held_out_rows",
    "triplet_accuracy",
    "EmbeddingVersion",
    "BUFFER",
]

BUFFER = 200  # queries a sampler keeps ready in the database
ARM_SEED = 7  # purpose of the seeds that assign participants to samplers


class CollectService:
    """A collect file's participants: enrolment after consent, their queries, answers."""

    def __init__(self, config: CollectConfig, service: SearchService):
        self.config, self.service, self.store = config, service, service.store
        self.fingerprint = collect_fingerprint(config)
        self.participants = Participants(service.store, self.fingerprint)

    def info(self) -> dict:
        """The public facts: title, instructions, consent, ``k``, ``max_queries``, ``mode``.

        ``mode`` names the renderer the page shows the queries with.
        """
        c = self.config
        return {
            "mode": CollectMode.name,
            "title": c.title,
            "instructions": c.instructions,
            "consent": c.consent,
            "k": c.k,
            "max_queries": c.max_queries,
        }

    def enrol(self, platform_id: str | None = None) -> dict:
        """A new participant (who consented): ``{"id", "token"}``."""
        return self.participants.enrol(platform_id=platform_id)

    def withdraw(self, pid: str, token: str | None) -> dict:
        """The participant stops taking part: ``{"withdrawn": true}`` (repeats: the same).

        Their answers stay in the database and are left out of every fit and the export.
        """
        return self.participants.withdraw(pid, token, self.service.live)

    def sampler_of(self, number: int) -> str:
        """The sampler of participant ``number``: drawn with the file's seed."""
        rng = np.random.default_rng(derived_seed(self.config.seed, ARM_SEED, number))
        return self.config.samplers[int(rng.integers(len(self.config.samplers)))]

    def _session(self, pid: str, token: str | None) -> tuple[Any, SessionRow]:
        """The participant's row and their collect session (started when new)."""
        row = self.participants.authorize(pid, token)
        if row.withdrawn is not None:
            raise Conflict("this participant has stopped taking part")
        assert token is not None  # authorized
        for _ in range(3):  # a racing request may start it: then read it back
            sessions = self.store.participant_sessions(pid)
            if sessions:
                return row, sessions[0]
            number = int(row.number)
            owner = Owner(pid, 0, None, token, derived_seed(self.config.seed, number))
            params = {"sampler": self.sampler_of(number), "participant": pid}
            try:
                self.service.start_session(
                    CollectMode.name,
                    self.config.k,
                    params,
                    owner=owner,
                    max_queries=self.config.max_queries,
                )
            except WriteConflict:
                continue
        raise Conflict("could not start the participant's queries; try again")

    def next(self, pid: str, token: str | None) -> dict:
        """The participant's current query, or the debrief after their last."""
        _, session = self._session(pid, token)
        if session.done:
            return self._done()
        screen = self.store.screen(session.id, session.screen)
        assert screen is not None
        return {"query": _public(screen[0])}

    def answer(self, pid: str, token: str | None, request: Answer) -> dict:
        """Record the answer to the current query; the next query or the debrief."""
        _, session = self._session(pid, token)
        reply = self.service.answer(session.id, token, request)
        if reply["done"]:
            return self._done()
        return {"query": _public(reply["screen"])}

    def _done(self) -> dict:
        c = self.config
        reply: dict = {"done": True, "debrief": c.debrief}
        if c.completion_code is not None:
            reply["completion_code"] = c.completion_code
        if c.redirect is not None:
            reply["redirect"] = c.redirect
        return reply


def _public(payload: dict) -> dict:
    """A stored screen as the API gives it: ``{"screen", "head", "candidates"}``."""
    return {
        "screen": payload["number"],
        "head": payload["head"],
        "candidates": payload["candidates"],
    }


PASS_SHARE = 0.5  # a participant passing fewer of their checks than this is flagged
# a participant whose median response time (as the page measured it, over at least
# FAST_AFTER answers) is under this clicks without looking: flagged. People took seconds
# per triplet in NEXT's and salmon's studies.
FAST_MS, FAST_AFTER = 250, 5


def checks(answered: list[dict]) -> dict[str, Any]:
    """A participant's checks from their answered screens (records of ``all_answers``).

    ``attention``: (passed, answered) of the checks with a known answer (a skip fails);
    ``repeats``: (agreed, answered) of the repeated queries (the same candidate picked
    as the first time); ``response_ms``: the median response time the page measured
    (None: fewer than :data:`FAST_AFTER` measured); ``flagged``: either share below
    :data:`PASS_SHARE`, or the median under :data:`FAST_MS`. A flagged participant's
    answers stay in the database and are left out of the fits.
    """
    counted = [h for h in answered if h["kind"] == "answer" and not h["undone"]]
    picked = {h["number"]: h for h in counted}
    attention = [h for h in counted if h["query"].get("kind") == "attention"]
    passed = sum(h["choice"] == h["query"]["expected"] for h in attention)
    agreed = total = 0
    for h in counted:
        q = h["query"]
        first = picked.get(q.get("of", -1)) if q.get("kind") == "repeat" else None
        if first is None or first["choice"] is None:
            continue
        total += 1
        was = first["query"]["candidates"][first["choice"]]
        agreed += h["choice"] is not None and q["candidates"][h["choice"]] == was
    times = [h["response_ms"] for h in counted if h.get("response_ms") is not None]
    median = float(np.median(times)) if len(times) >= FAST_AFTER else None
    flagged = (
        (attention and passed < PASS_SHARE * len(attention))
        or (total and agreed < PASS_SHARE * total)
        or (median is not None and median < FAST_MS)
    )
    return {
        "attention": (passed, len(attention)),
        "repeats": (agreed, total),
        "response_ms": median,
        "flagged": bool(flagged),
    }


def _counted_sessions(
    store: Store, fingerprint: str, answered: dict | None
) -> list[tuple[SessionRow, list[dict]]]:
    """The design's sessions whose answers count (participants not flagged), with them."""
    space = f"collect:{fingerprint}"
    by_session = store.all_answers() if answered is None else answered
    out = []
    for s in store.iter_sessions():  # withdrawn participants' sessions are not listed
        if s.catalogue != space:
            continue
        history = by_session.get(s.id, [])
        if not checks(history)["flagged"]:
            out.append((s, history))
    return out


def _rows_of(history: list[dict], kinds: tuple[str, ...]) -> tuple[list[tuple[int, int, int]], int]:
    """The triplet rows of a session's answers to queries of ``kinds``; the last screen used."""
    rows: list[tuple[int, int, int]] = []
    last = -1
    for h in history:
        if h["kind"] != "answer" or h["undone"] or h["choice"] is None:
            continue
        q = h["query"]
        if q.get("kind") not in kinds:
            continue
        cands, picked = q["candidates"], q["candidates"][h["choice"]]
        rows.extend((q["head"], picked, c) for c in cands if c != picked)
        last = max(last, int(h["number"]))
    return rows, last


def _triplets(rows: list[tuple[int, int, int]]) -> np.ndarray:
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def sampler_rows(
    store: Store, fingerprint: str, sampler: str, answered: dict | None = None
) -> np.ndarray:
    """The triplet rows ``(head, picked, other)`` that ``sampler`` fits.

    Its participants' answers to burn-in, adaptive and random queries (not checks,
    repeats or tests); participants withdrawn or flagged by their checks (:func:`checks`)
    left out. A skip gives none; k candidates give k - 1 rows. ``answered``: the store's
    ``all_answers()`` when the caller read them already (one read for every sampler).
    """
    return _sampler_answers(_counted_sessions(store, fingerprint, answered), sampler)[0]


def _sampler_answers(
    counted: list[tuple[SessionRow, list[dict]]], sampler: str
) -> tuple[np.ndarray, dict[str, int]]:
    """``sampler``'s rows (:func:`sampler_rows`) and the answers used: session -> last screen."""
    rows: list[tuple[int, int, int]] = []
    used: dict[str, int] = {}
    for s, history in counted:
        if (s.params or {}).get("sampler") != sampler:
            continue
        got, last = _rows_of(history, ANSWER_KINDS)
        if got:
            rows.extend(got)
            used[s.id] = last
    return _triplets(rows), used


def held_out_rows(store: Store, fingerprint: str, answered: dict | None = None) -> np.ndarray:
    """The held-out triplets: every counted participant's answers to the test queries."""
    return _held_out(_counted_sessions(store, fingerprint, answered))


def _held_out(counted: list[tuple[SessionRow, list[dict]]]) -> np.ndarray:
    return _triplets([r for _, h in counted for r in _rows_of(h, ("test",))[0]])


def triplet_accuracy(X: np.ndarray, rows: np.ndarray) -> float | None:
    """The share of ``rows`` (head, closer, farther) whose closer item is nearer in ``X``.

    Every model of the library predicts the nearer candidate as the likelier pick; a tie
    counts a half. None without rows.
    """
    if len(rows) == 0:
        return None
    d_close = np.sum((X[rows[:, 0]] - X[rows[:, 1]]) ** 2, axis=1)
    d_far = np.sum((X[rows[:, 0]] - X[rows[:, 2]]) ** 2, axis=1)
    return float(np.mean((d_close < d_far) + 0.5 * (d_close == d_far)))


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


def _refit_due(n_rows: int, fitted: int, minimum: int) -> bool:
    """As ``TripletSampler.refit_due_``: enough answers, grown by 10 % and 50 since."""
    grown = n_rows - fitted
    return n_rows >= minimum and grown >= REFIT_MIN and grown >= REFIT_GROWTH * fitted


def _refit_sampler(
    store: Store, config: CollectConfig, i: int, counted: list, tests: np.ndarray
) -> tuple[TripletSampler, int]:
    """Sampler ``i`` with its rows told and its newest embedding (refitted when due).

    Returns the sampler and its embedding's version number (0: none yet).
    """
    fp, name = collect_fingerprint(config), config.samplers[i]
    model = next((m for m in config.models if m in SAMPLER_MODELS), "gamma-ckl")
    rows, used = _sampler_answers(counted, name)
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
        sampler.set_embedding(embedding_from_state(latest["embedding"], config.catalogue.n_items))
    fitted = 0 if latest is None else int(latest["n_rows"])
    number = 0 if latest is None else int(latest["version"])
    if _refit_due(len(rows), fitted, max(sampler._method.min_answers(), config.dim + 2)):
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

    Each sampler is fitted to its own answers (:func:`sampler_rows`) when they grew by
    10 % and 50 triplets since its last version (warm-started from it); each version is
    stored with the answers it used and its accuracy on the held-out test triplets
    (:func:`held_out_rows`). Then each sampler asks the queries its buffer lacks. Runs outside
    any request.
    """
    fp = collect_fingerprint(config)
    counted = _counted_sessions(store, fp, store.all_answers())  # one read for all
    tests = _held_out(counted)
    added: dict[str, int] = {}
    for i, name in enumerate(config.samplers):
        sampler, version = _refit_sampler(store, config, i, counted, tests)
        missing = buffer - store.free_queries(fp, name)
        got: Any = sampler.ask(missing, k=config.k) if missing > 0 else []
        added[name] = store.add_queries(fp, name, version, got)
    return added


LEASE_SECONDS = 60.0  # a refitter that stops renewing hands over after this


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
    from .collect import load_collect

    if hasattr(os, "nice"):
        os.nice(19)
    config = load_collect(collect_file)
    store, owner = Store(database), f"{socket.gethostname()}:{os.getpid()}"
    name = f"refit:{collect_fingerprint(config)}"
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


NEW_ANSWERS = REFIT_MIN // 2  # answers since the last read that make the refitter read again


def _buffers_low(store: Store, config: CollectConfig) -> bool:
    """Whether a sampler's buffer is under half full."""
    fp = collect_fingerprint(config)
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
