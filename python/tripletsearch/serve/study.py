"""Study mode: the paper's user study as a ready experiment.

A study file (TOML) names the catalogue, the search methods to compare, the targets, the
items per screen and the seed::

    title = "Find the colour"
    catalogue = "colours"            # a bundled demo, or a catalogue folder / CSV file
    methods = ["gamma-ckl", "gauss"] # DiscreteSearch methods, compared blindly
    targets = 10                     # how many (drawn once with the seed), or item ids
    k = 4                            # items per screen
    seed = 0                         # targets, orders and every searcher's seed
    max_queries = 60                 # screens before a search gives up
    gamma = 3.0                      # gamma-ckl's user model ("auto": inferred per person)
    sigma = "auto"                   # gauss's probit noise ("auto": 0.1 of the items' RMS
                                     # distance to their mean, the paper's 0.1 at its scale)
    consent = "..."                  # shown before anything is recorded

Each person who opens ``/study`` and consents becomes a pseudonymous participant (a random
id, never a name) who searches every target once, in an order of their own. The method of
each search is assigned blindly and balanced: participant p searches target t with method
``methods[(p + t) mod M]``, so over any M consecutive participants every target meets every
method once. The method is stored with the session on the server and appears in nothing
the participant's browser receives.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import derived_seed
from ..discrete import METHODS
from .catalogue import DEMOS, Catalogue, demo_catalogue, load_catalogue
from .service import K_RANGE, SearchService, ServiceError, _object, _token_hash
from .store import Conflict

__all__ = ["Study", "load_study", "StudyService"]

_KEYS = {
    "title",
    "catalogue",
    "methods",
    "targets",
    "k",
    "seed",
    "max_queries",
    "gamma",
    "sigma",
    "consent",
}
DEFAULT_CONSENT = (
    "This is a study of how people search by comparisons. You will be shown a target and "
    "will look for it by picking, on each screen, the item closest to it.\n\n"
    "We record your clicks and their timing under a random participant id; we do not record "
    "your name or anything that identifies you. You can stop at any time."
)


@dataclass(frozen=True)
class Study:
    """A study's configuration (see the module docstring)."""

    title: str
    catalogue: Catalogue
    catalogue_source: str
    methods: tuple[str, ...]
    targets: tuple[int, ...]
    k: int
    seed: int
    max_queries: int
    gamma: float | str
    sigma: float
    consent: str

    @property
    def fingerprint(self) -> str:
        """Identifies the study's design in the database.

        Participants are numbered within it.
        """
        design = {
            "title": self.title,
            "catalogue": self.catalogue.fingerprint,
            "methods": self.methods,
            "targets": self.targets,
            "k": self.k,
            "seed": self.seed,
        }
        return hashlib.sha256(json.dumps(design, sort_keys=True).encode()).hexdigest()[:16]

    def plan(self, number: int) -> list[tuple[int, str]]:
        """Participant ``number``'s searches: (target, method) in the order they do them."""
        order = np.random.default_rng([self.seed, number]).permutation(len(self.targets))
        m = len(self.methods)
        return [(self.targets[t], self.methods[(number + int(t)) % m]) for t in order]

    def session_seed(self, number: int, slot: int) -> int:
        """The searcher's seed for participant ``number``'s search ``slot``.

        From the study's seed, so a study replays (same answers, same screens).
        """
        return derived_seed(self.seed, number, slot)

    def params(self, method: str) -> dict:
        """The searcher parameters for ``method``: the method, the study's gamma and sigma."""
        return {"method": method, "gamma": self.gamma, "sigma": self.sigma}


def _fail(path: str, message: str) -> ValueError:
    return ValueError(f"{path}: {message}")


def load_study(path: Any) -> Study:
    """Read and check a study file."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - the serve extra installs tomli there
        import tomli as tomllib
    name = os.fspath(path)
    try:
        with open(name, "rb") as fh:
            cfg = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise _fail(name, f"not valid TOML ({exc})") from None
    unknown = set(cfg) - _KEYS
    if unknown:
        raise _fail(name, f"unknown key(s) {sorted(unknown)} (known: {sorted(_KEYS)})")
    source = cfg.get("catalogue")
    if not isinstance(source, str) or not source:
        raise _fail(name, "catalogue: give a demo name ('colours') or a catalogue path")
    if source in DEMOS:
        cat = demo_catalogue(source)
    else:
        p = Path(source)
        cat = load_catalogue(p if p.is_absolute() else Path(name).parent / p)
    methods = cfg.get("methods", ["gamma-ckl", "gauss"])
    if (
        not isinstance(methods, list)
        or not methods
        or any(m not in METHODS for m in methods)
        or len(set(methods)) != len(methods)
    ):
        raise _fail(name, f"methods: a list of distinct names from {sorted(METHODS)}")
    k = cfg.get("k", 4)
    if isinstance(k, bool) or not isinstance(k, int) or not K_RANGE[0] <= k <= K_RANGE[1]:
        raise _fail(name, f"k: an integer from {K_RANGE[0]} to {K_RANGE[1]}")
    seed = cfg.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise _fail(name, "seed: an integer >= 0")
    targets = cfg.get("targets", 10)
    if isinstance(targets, int) and not isinstance(targets, bool):
        if not 1 <= targets <= cat.n_items:
            raise _fail(name, f"targets: 1 to {cat.n_items}")
        chosen = np.random.default_rng(seed).choice(cat.n_items, size=targets, replace=False)
        target_ids = tuple(int(t) for t in chosen)
    elif isinstance(targets, list) and targets:
        if any(isinstance(t, bool) or not isinstance(t, int) for t in targets):
            raise _fail(name, "targets: item ids (integers)")
        if any(not 0 <= t < cat.n_items for t in targets) or len(set(targets)) != len(targets):
            raise _fail(name, f"targets: distinct item ids in 0..{cat.n_items - 1}")
        target_ids = tuple(targets)
    else:
        raise _fail(name, "targets: a count or a list of item ids")
    max_queries = cfg.get("max_queries", 60)
    if isinstance(max_queries, bool) or not isinstance(max_queries, int) or max_queries < 1:
        raise _fail(name, "max_queries: an integer >= 1")
    gamma = cfg.get("gamma", 3.0)
    if gamma != "auto" and (
        isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not gamma > 0
    ):
        raise _fail(name, "gamma: a number > 0 or 'auto'")
    sigma = cfg.get("sigma", "auto")
    if sigma == "auto":
        X = cat.embedding
        sigma = 0.1 * float(np.sqrt(np.mean(np.sum((X - X.mean(0)) ** 2, axis=1))))
    elif isinstance(sigma, bool) or not isinstance(sigma, (int, float)) or not sigma > 0:
        raise _fail(name, "sigma: a number > 0 or 'auto'")
    title, consent = cfg.get("title", "A search study"), cfg.get("consent", DEFAULT_CONSENT)
    if not isinstance(title, str) or not isinstance(consent, str):
        raise _fail(name, "title and consent: strings")
    return Study(
        title=title,
        catalogue=cat,
        catalogue_source=source,
        methods=tuple(methods),
        targets=target_ids,
        k=k,
        seed=seed,
        max_queries=max_queries,
        gamma=gamma if gamma == "auto" else float(gamma),
        sigma=float(sigma),
        consent=consent,
    )


class StudyService:
    """Participants of a study: enrolment after consent, their searches one after the other.

    Each session's token is the participant's; nothing about the method is shown.
    """

    def __init__(self, study: Study, service: SearchService):
        self.study, self.service, self.store = study, service, service.store
        service.closed_reason = "this server runs a study: open /study"
        service.max_queries = study.max_queries

    def info(self) -> dict:
        """The study's public facts: title, consent text, ``k`` and ``n_slots`` (searches)."""
        s = self.study
        return {"title": s.title, "consent": s.consent, "k": s.k, "n_slots": len(s.targets)}

    def enrol(self, body: Any) -> dict:
        """Enrol a new participant (the body must be ``{"consent": true}``); ``{"id", "token"}``."""
        body = _object(body, {"consent"})
        if body.get("consent") is not True:
            raise ServiceError(400, "consent: the study needs consent (true) before it starts")
        pid = "P-" + secrets.token_hex(4).upper()
        token = secrets.token_urlsafe(32)
        self.store.enrol(self.study.fingerprint, pid, _token_hash(token))
        return {"id": pid, "token": token}

    def _participant(self, pid: str, token: str | None) -> Any:
        import hmac

        row = self.store.participant(pid) if isinstance(pid, str) and len(pid) <= 64 else None
        if row is None or row.study != self.study.fingerprint:
            raise ServiceError(404, "no such participant in this study")
        if not token or not hmac.compare_digest(_token_hash(token), row.token_hash):
            raise ServiceError(401, "missing or wrong token for this participant")
        return row

    def next(self, pid: str, token: str | None, body: Any) -> dict:
        """The participant's current search (started when new).

        ``{"done": false, "slot", "n_slots", "target", "queries", "session": {"id",
        "screen"}}``, or ``{"done": true, "n_slots"}`` after the last one.
        """
        _object(body, set())
        row = self._participant(pid, token)
        plan = self.study.plan(int(row.number))
        for _ in range(3):  # a racing request may start the same slot: then read it back
            sessions = {s.slot: s for s in self.store.participant_sessions(pid)}
            slot = next((j for j in range(len(plan)) if not _finished(sessions.get(j))), None)
            if slot is None:
                return {"done": True, "n_slots": len(plan)}
            target, method = plan[slot]
            current = sessions.get(slot)
            if current is None:
                try:
                    self.service.start_session(
                        "find",
                        self.study.k,
                        self.study.params(method),
                        participant=pid,
                        slot=slot,
                        target=target,
                        token=token,
                        seed=self.study.session_seed(int(row.number), slot),
                    )
                except Conflict:
                    continue
                current = {s.slot: s for s in self.store.participant_sessions(pid)}[slot]
            screen = self.store.screen(current.id, current.queries)
            return {
                "done": False,
                "slot": slot,
                "n_slots": len(plan),
                "target": self.study.catalogue.item(target),
                "queries": current.n_answers,
                "session": {"id": current.id, "screen": None if screen is None else screen[0]},
            }
        raise ServiceError(409, "could not start the next search; try again")


def _finished(row: Any) -> bool:
    return row is not None and bool(row.done)
