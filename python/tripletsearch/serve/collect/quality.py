"""Which collected answers count: a participant's checks, and the triplets of their answers.

:func:`checks` flags a participant by their attention checks, repeats and response times;
:func:`counted_sessions` is the one filter of the answers that count (a collect design's
sessions, participants withdrawn or flagged left out), which the refitter, the export and
the dashboard all read through; :func:`triplet_rows` turns answers into triplet rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...outcomes import triplet_agreement
from ..modes.collect import ANSWER_KINDS
from ..store import SessionRow, Store

__all__ = [
    "checks",
    "counted_sessions",
    "triplet_rows",
    "sampler_answers",
    "sampler_rows",
    "held_out",
    "held_out_rows",
    "triplet_accuracy",
    "EXPORT_KINDS",
    "PASS_SHARE",
    "FAST_MS",
    "FAST_SERVER_MS",
    "FAST_AFTER",
]

# the kinds of query whose answers are exported as triplets (the checks are not)
EXPORT_KINDS = (*ANSWER_KINDS, "test")
PASS_SHARE = 0.5  # a participant passing fewer of their checks than this is flagged
# a participant whose median response time (as the page measured it, over at least
# FAST_AFTER answers) is under this clicks without looking: flagged. People took seconds
# per triplet in NEXT's and salmon's studies.
FAST_MS, FAST_AFTER = 250, 5
# the same bound on the server's own time per screen (shown to answered), whatever the
# page claims
FAST_SERVER_MS = FAST_MS

Counted = list[tuple[SessionRow, list[dict]]]


def _median(values: list[float]) -> float | None:
    """The median of at least :data:`FAST_AFTER` values, else None."""
    return float(np.median(values)) if len(values) >= FAST_AFTER else None


def checks(answered: list[dict]) -> dict[str, Any]:
    """A participant's checks from their answered screens (records of ``all_answers``).

    ``attention``: (passed, answered) of the self-match checks (the head among its own
    candidates: a check for inattention, which a script recognises); ``gold``: (passed,
    answered) of the known-answer queries (shown as any pair: what a script cannot tell
    apart); ``repeats``: (agreed, answered) of the repeated queries (the same candidate
    picked as the first time); ``server_ms``: the median of the server's own time per
    screen (shown to answered), ``response_ms``: the median the page measured (None: fewer
    than :data:`FAST_AFTER`); ``flagged``: a share of checks passed below
    :data:`PASS_SHARE`, or either median under :data:`FAST_MS` (clicking without looking,
    whatever the page claims). A skip fails a check. A flagged participant's answers stay
    in the database and are left out of the fits.
    """
    counted = [h for h in answered if h["kind"] == "answer" and not h["undone"]]
    picked = {h["number"]: h for h in counted}
    known = {
        kind: [h for h in counted if h["query"].get("kind") == kind]
        for kind in ("attention", "gold")
    }
    passed = {k: sum(h["choice"] == h["query"]["expected"] for h in v) for k, v in known.items()}
    agreed = total = 0
    for h in counted:
        q = h["query"]
        first = picked.get(q.get("of", -1)) if q.get("kind") == "repeat" else None
        if first is None or first["choice"] is None:
            continue
        total += 1
        was = first["query"]["candidates"][first["choice"]]
        agreed += h["choice"] is not None and q["candidates"][h["choice"]] == was
    page = _median([h["response_ms"] for h in counted if h.get("response_ms") is not None])
    server = _median(
        [1e3 * (h["answered_at"] - h["shown_at"]) for h in counted if "answered_at" in h]
    )
    flagged = (
        any(v and passed[k] < PASS_SHARE * len(v) for k, v in known.items())
        or (total and agreed < PASS_SHARE * total)
        or (page is not None and page < FAST_MS)
        or (server is not None and server < FAST_SERVER_MS)
    )
    return {
        "attention": (passed["attention"], len(known["attention"])),
        "gold": (passed["gold"], len(known["gold"])),
        "repeats": (agreed, total),
        "response_ms": page,
        "server_ms": server,
        "flagged": bool(flagged),
    }


def counted_sessions(
    store: Store, fingerprint: str | None, answered: dict | None = None
) -> Counted:
    """The sessions of collect design ``fingerprint`` whose answers count, with them.

    ``fingerprint`` None: of every collect design in the database. Participants withdrawn
    (not listed by ``iter_sessions``) or flagged by their :func:`checks` are left out.
    ``answered``: the store's ``all_answers()`` when the caller read them already (one
    read for everything it computes).
    """
    by_session = store.all_answers() if answered is None else answered
    out = []
    for s in store.iter_sessions():
        if not _of_design(s, fingerprint):
            continue
        history = by_session.get(s.id, [])
        if not checks(history)["flagged"]:
            out.append((s, history))
    return out


def _of_design(session: SessionRow, fingerprint: str | None) -> bool:
    if fingerprint is None:
        return session.catalogue.startswith("collect:")
    return session.catalogue == f"collect:{fingerprint}"


def triplet_rows(
    history: list[dict], kinds: tuple[str, ...]
) -> tuple[list[tuple[int, int, int]], list[int]]:
    """The triplet rows of a session's answers to queries of ``kinds``, and the screen of each.

    A pick among k candidates gives the k - 1 rows ``(head, picked, other)``; a skip, an
    undo or an undone answer gives none.
    """
    rows: list[tuple[int, int, int]] = []
    screens: list[int] = []
    for h in history:
        if h["kind"] != "answer" or h["undone"] or h["choice"] is None:
            continue
        q = h["query"]
        if q.get("kind") not in kinds:
            continue
        cands, picked = q["candidates"], q["candidates"][h["choice"]]
        got = [(q["head"], picked, c) for c in cands if c != picked]
        rows.extend(got)
        screens.extend([int(h["number"])] * len(got))
    return rows, screens


def _triplets(rows: list[tuple[int, int, int]]) -> np.ndarray:
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def sampler_answers(counted: Counted, sampler: str) -> tuple[np.ndarray, dict[str, int]]:
    """``sampler``'s triplet rows, and the answers used: session id -> the last screen.

    Its participants' answers to burn-in, adaptive and random queries (not checks, repeats
    or tests), of the ``counted`` sessions (:func:`counted_sessions`).
    """
    rows: list[tuple[int, int, int]] = []
    used: dict[str, int] = {}
    for s, history in counted:
        if (s.params or {}).get("sampler") != sampler:
            continue
        got, screens = triplet_rows(history, ANSWER_KINDS)
        if got:
            rows.extend(got)
            used[s.id] = max(screens)
    return _triplets(rows), used


def sampler_rows(
    store: Store, fingerprint: str, sampler: str, answered: dict | None = None
) -> np.ndarray:
    """The triplet rows ``(head, picked, other)`` that ``sampler`` fits, read from ``store``.

    As :func:`sampler_answers`.
    """
    return sampler_answers(counted_sessions(store, fingerprint, answered), sampler)[0]


def held_out(counted: Counted) -> np.ndarray:
    """The held-out triplets: the ``counted`` sessions' answers to the test queries."""
    return _triplets([r for _, h in counted for r in triplet_rows(h, ("test",))[0]])


def held_out_rows(store: Store, fingerprint: str, answered: dict | None = None) -> np.ndarray:
    """The held-out triplets of the collect design ``fingerprint``, read from ``store``."""
    return held_out(counted_sessions(store, fingerprint, answered))


def triplet_accuracy(X: np.ndarray, rows: np.ndarray) -> float | None:
    """The share of ``rows`` (head, closer, farther) whose closer item is nearer in ``X``.

    A tie counts a half (:func:`~tripletsearch.outcomes.triplet_agreement`); None without
    rows.
    """
    if len(rows) == 0:
        return None
    return float(np.mean(triplet_agreement(X, rows)))
