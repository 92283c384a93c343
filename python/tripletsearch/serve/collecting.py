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
from typing import Any

import numpy as np

from .._validation import derived_seed
from ..collect import TripletSampler
from ..collect._sampler import SAMPLER_MODELS
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
    "sampler_rows",
    "checks",
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


def checks(answered: list[dict]) -> dict[str, Any]:
    """A participant's checks from their answered screens (records of ``all_answers``).

    ``attention``: (passed, answered) of the checks with a known answer (a skip fails);
    ``repeats``: (agreed, answered) of the repeated queries (the same candidate picked
    as the first time); ``flagged``: either share below :data:`PASS_SHARE`. A flagged
    participant's answers stay in the database and are left out of the fits.
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
    flagged = (attention and passed < PASS_SHARE * len(attention)) or (
        total and agreed < PASS_SHARE * total
    )
    return {
        "attention": (passed, len(attention)),
        "repeats": (agreed, total),
        "flagged": bool(flagged),
    }


def sampler_rows(
    store: Store, fingerprint: str, sampler: str, answered: dict | None = None
) -> np.ndarray:
    """The triplet rows ``(head, picked, other)`` that ``sampler`` fits.

    Its participants' answers to burn-in, adaptive and random queries (not checks,
    repeats or tests); participants withdrawn or flagged by their checks (:func:`checks`)
    left out. A skip gives none; k candidates give k - 1 rows. ``answered``: the store's
    ``all_answers()`` when the caller read them already (one read for every sampler).
    """
    space = f"collect:{fingerprint}"
    rows: list[tuple[int, int, int]] = []
    by_session = store.all_answers() if answered is None else answered
    for s in store.iter_sessions():
        if s.catalogue != space or (s.params or {}).get("sampler") != sampler:
            continue
        if checks(by_session.get(s.id, []))["flagged"]:
            continue
        for h in by_session.get(s.id, []):
            if h["kind"] != "answer" or h["undone"] or h["choice"] is None:
                continue
            q = h["query"]
            if q.get("kind") not in ANSWER_KINDS:
                continue
            cands, picked = q["candidates"], q["candidates"][h["choice"]]
            rows.extend((q["head"], picked, c) for c in cands if c != picked)
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def refit_once(store: Store, config: CollectConfig, *, buffer: int = BUFFER) -> dict[str, int]:
    """Refill every sampler's buffer of queries; the queries added per sampler.

    Each sampler is fitted to its own answers (:func:`sampler_rows`) when it has enough
    for its method, then asks the queries its buffer lacks. Runs outside any request.
    """
    fp = collect_fingerprint(config)
    model = next((m for m in config.models if m in SAMPLER_MODELS), "gamma-ckl")
    added: dict[str, int] = {}
    answered = store.all_answers()  # read once for every sampler
    for i, name in enumerate(config.samplers):
        missing = buffer - store.free_queries(fp, name)
        if missing <= 0:
            added[name] = 0
            continue
        rows = sampler_rows(store, fp, name, answered)
        sampler = TripletSampler(
            config.catalogue.n_items,
            config.dim,
            method=name,
            model=model,
            refit=None,
            random_state=derived_seed(config.seed, i, len(rows)),
            n_jobs=1,
        )
        if len(rows):
            sampler.tell(rows)
            if sampler.refit_due_:
                sampler.refit()
        added[name] = store.add_queries(fp, name, len(rows), sampler.ask(missing, k=config.k))
    return added


LEASE_SECONDS = 60.0  # a refitter that stops renewing hands over after this


def refitter(database: str, collect_file: str, *, every: float = 2.0, rounds: int = 0) -> None:
    """The refitter process: :func:`refit_once` every ``every`` seconds, under a lease.

    It refits while it holds the collect design's lease (one refitter for all servers on
    the database), at a lower CPU priority than the servers. ``rounds`` > 0: stop after
    that many (tests).
    """
    from .collect import load_collect

    if hasattr(os, "nice"):
        os.nice(10)
    config = load_collect(collect_file)
    store, owner = Store(database), f"{socket.gethostname()}:{os.getpid()}"
    name = f"refit:{collect_fingerprint(config)}"
    done = 0
    while rounds <= 0 or done < rounds:
        if store.lease(name, owner, LEASE_SECONDS):
            refit_once(store, config)
            done += 1
        time.sleep(every)


def start_refitter(database: str, collect_file: str) -> Any:
    """Start :func:`refitter` in a process of its own (a daemon: it ends with the server)."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    proc = ctx.Process(target=refitter, args=(database, os.path.abspath(collect_file)), daemon=True)
    proc.start()
    return proc
