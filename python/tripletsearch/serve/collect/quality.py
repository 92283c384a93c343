"""Which collected answers count: a participant's checks, and the triplets of their answers.

:func:`checks` flags a participant by the rules of version :data:`CHECK_RULES`, each flag
naming its rule with its numbers: attention checks, gold queries and repeats of clear
queries passed fewer than half, response times under a quarter second, and answers that
do not agree with everyone else's (:func:`score_agreement`, which the refitter runs at
each round: :func:`refresh_agreement`). :func:`counted_sessions` is the one filter of the
sessions that count (a collect design's sessions, participants withdrawn or flagged left
out), which the refitter, the export and the dashboard all read through;
:func:`triplet_rows` turns answers into triplet rows. The rules they share (the answers
that count, a collect's sessions, the response-time rule) are :mod:`.rules`'; the server's
clock check is a parameter, ``fast_server_ms`` (a server setting, default
:data:`FAST_SERVER_MS`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...outcomes import triplet_agreement
from .. import clock
from ..store import SessionRow, Store
from .rules import (
    AGREEMENT_AFTER,
    FAST_AFTER,
    FAST_MS,
    FAST_SERVER_MS,
    collect_sessions,
    counted_answers,
    is_counted,
    median_ms,
)
from .screens import ANSWER_KINDS, CHECK_RULES
from .trial import answer_picks, implied, trial_row

__all__ = [
    "checks", "counted_sessions", "triplet_rows", "sampler_answers", "sampler_rows",
    "held_out", "held_out_rows", "triplet_accuracy", "agreement_flag", "read_agreement",
    "agreement_key", "AGREEMENT_LEVEL", "AGREEMENT_FOLDS", "AGREEMENT_ROWS_PER_ITEM",
    "EXPORT_KINDS", "CHECK_RULES",
    "PASS_SHARE", "FAST_MS", "FAST_SERVER_MS", "FAST_AFTER", "AGREEMENT_AFTER",
]  # fmt: skip

# the version of the rules below, CHECK_RULES, is written once with its history in
# .screens (flags are recomputed under it for collects under way, for analysis; the
# gold pool and the choice of repeats apply to participants who enrolled under it,
# ``params["checks"]``)
# the kinds of query whose answers are exported as triplets (the checks are not)
EXPORT_KINDS = (*ANSWER_KINDS, "test")
PASS_SHARE = 0.5  # a participant passing fewer of their checks than this is flagged
# the repeats rule judges from this many clear repeats (rules 3): an honest person's second
# answer differs about 1 time in 5, so from two it flagged 1 honest person in 25; from four
# under 1 in 30, a script at random 5 in 16 (fewer repeats: the agreement rule judges)
REPEATS_AFTER = 4
# the response-time rule (FAST_MS, FAST_AFTER, FAST_SERVER_MS): .rules
# the agreement rule: a participant with at least AGREEMENT_AFTER counted answers whose
# picks agree with an embedding fitted without them (K-fold over the participants,
# AGREEMENT_FOLDS folds) no more often than chance allows at level AGREEMENT_LEVEL
# (a one-sided test against 1/k, each pick weighed by how sure the embedding is) is
# flagged; judged once the others' answers give AGREEMENT_ROWS_PER_ITEM triplets per item.
# Since the check rules 3 a skip on any screen is a pick that does not agree.
# (AGREEMENT_AFTER: .rules, which the collect file's check of max_queries reads too)
AGREEMENT_LEVEL = 0.05  # a script at chance escapes 1 time in 20 (honest z: 2.4 to 5.1)
AGREEMENT_FOLDS = 10
AGREEMENT_ROWS_PER_ITEM = 10
AGREEMENT_SEED = 0xA9EE  # purpose of the seeds of the folds and their fits
MAX_WEIGHT = 5.0  # the largest weight of a pick in the agreement test (log-odds)

Counted = list[tuple[SessionRow, list[dict]]]


def _share_flag(rule: str, passed: int, of: int, what: str) -> dict | None:
    """A flag when fewer than :data:`PASS_SHARE` of ``of`` checks passed, else None."""
    if not of or passed >= PASS_SHARE * of:
        return None
    why = f"{what}: {passed} of {of} (fewer than {PASS_SHARE:.0%})"
    return {"rule": rule, "passed": int(passed), "of": int(of), "why": why}


def _time_flag(rule: str, median: float | None, bound: float, what: str) -> dict | None:
    if median is None or median >= bound:
        return None
    why = f"{what}: median {median:.0f} ms (under {bound:.0f} ms)"
    return {"rule": rule, "median_ms": float(median), "bound_ms": float(bound), "why": why}


def agreement_flag(agreement: dict | None) -> dict | None:
    """A flag when the participant's agreement is judged and not above chance."""
    if not agreement or agreement.get("p_value") is None:
        return None
    if agreement["answers"] < AGREEMENT_AFTER or agreement["p_value"] <= AGREEMENT_LEVEL:
        return None
    a, n, chance = agreement["agreed"], agreement["answers"], agreement["chance"]
    why = (
        f"agreement with everyone else's answers: {a} of {n} picks as they predict (skips "
        "count as picks that do not agree; chance "
        f"{chance:.2f}); weighted by how sure they are, p = {agreement['p_value']:.3g}, "
        f"not below {AGREEMENT_LEVEL}"
    )
    return {
        "rule": "agreement", "agreed": int(a), "of": int(n), "chance": float(chance),
        "p_value": float(agreement["p_value"]), "level": AGREEMENT_LEVEL, "why": why,
    }  # fmt: skip


def checks(
    answered: list[dict], agreement: dict | None = None, *, fast_server_ms: float = FAST_SERVER_MS
) -> dict[str, Any]:
    """A participant's checks from their answered screens (records of ``all_answers``).

    ``attention``: (passed, answered) of the self-match checks (the head among its own
    candidates: a check for inattention, which a script recognises); ``gold``: (passed,
    answered) of the known-answer queries (shown as any pair); ``repeats``: (agreed,
    answered) of the repeated queries (the same candidate picked as the first time), and
    ``clear_repeats`` the same of the repeats of queries an embedding predicted clearly
    (chosen so since rules 2: the ones judged; a repeat of a near-tie is a coin flip for
    anyone); ``server_ms``: the median of the server's own time per screen (shown to
    answered), ``response_ms``: the median the page measured (None: fewer than
    :data:`FAST_AFTER`, :func:`~.rules.median_ms`); ``agreement``: the participant's record of
    :func:`score_agreement` (as the refitter last stored it; None: not scored).

    ``flags``: one record per rule that flags the participant (``rule``, its numbers and
    ``why``, a sentence): ``attention``, ``gold`` or ``repeats`` passed by fewer than
    :data:`PASS_SHARE` (repeats: of at least :data:`REPEATS_AFTER` clear ones),
    ``server_time`` a median under ``fast_server_ms`` (the server's clock, default
    :data:`FAST_SERVER_MS`; 0: never) or ``page_time`` under
    :data:`FAST_MS` (clicking without looking, whatever the page claims), ``agreement`` (at least
    :data:`AGREEMENT_AFTER` answers agreeing with everyone else's no more than chance at
    level :data:`AGREEMENT_LEVEL`); ``flagged``: any flag; ``rules``: :data:`CHECK_RULES`.
    A skip fails a check. A flagged participant's answers stay in the database and are
    left out of the fits.
    """
    counted = counted_answers(answered)
    picked = {h["number"]: h for h in counted}
    known = {
        kind: [h for h in counted if h["query"].get("kind") == kind]
        for kind in ("attention", "gold")
    }
    passed = {k: sum(h["choice"] == h["query"]["expected"] for h in v) for k, v in known.items()}
    agreed = total = clear_agreed = clear_total = 0
    for h in counted:
        q = h["query"]
        first = picked.get(q.get("of", -1)) if q.get("kind") == "repeat" else None
        if first is None or first["choice"] is None:
            continue
        was = first["query"]["candidates"][first["choice"]]
        same = h["choice"] is not None and q["candidates"][h["choice"]] == was
        total += 1
        agreed += same
        if q.get("clear") is not None:
            clear_total += 1
            clear_agreed += same
    page = median_ms([h["response_ms"] for h in counted if h.get("response_ms") is not None])
    server = median_ms(
        [1e3 * (h["answered_at"] - h["shown_at"]) for h in counted if "answered_at" in h]
    )
    judged = clear_total if clear_total >= REPEATS_AFTER else 0
    found = [
        _share_flag("attention", passed["attention"], len(known["attention"]), "attention checks"),
        _share_flag("gold", passed["gold"], len(known["gold"]), "gold queries right"),
        _share_flag("repeats", clear_agreed, judged, "repeats of clear queries agreed"),
        _time_flag("server_time", server, fast_server_ms, "time per screen by the server's clock"),
        _time_flag("page_time", page, FAST_MS, "response time the page measured"),
        agreement_flag(agreement),
    ]
    flags = [f for f in found if f is not None]
    return {
        "attention": (passed["attention"], len(known["attention"])),
        "gold": (passed["gold"], len(known["gold"])),
        "repeats": (agreed, total),
        "clear_repeats": (clear_agreed, clear_total),
        "response_ms": page,
        "server_ms": server,
        "agreement": agreement,
        "flags": flags,
        "flagged": bool(flags),
        "rules": CHECK_RULES,
    }


def counted_sessions(
    store: Store,
    fingerprint: str | None,
    answered: dict | None = None,
    *,
    fast_server_ms: float | None = None,
) -> Counted:
    """The sessions of collect design ``fingerprint`` whose answers count, with them.

    ``fingerprint`` None: of every collect design in the database
    (:func:`~.rules.collect_sessions`). Participants withdrawn (not listed by
    ``iter_sessions``) or flagged by their :func:`checks` (with their agreement as the
    refitter last stored it, :func:`read_agreement`, and ``fast_server_ms``) are left out.
    ``answered``: the store's ``all_answers()`` when the caller read them already (one
    read for everything it computes). ``fast_server_ms`` None: each collect's own, as its
    server recorded it (:func:`~..clock.fast_server_ms`).
    """
    by_session = store.all_answers() if answered is None else answered
    scored: dict[str, dict] = {}
    bounds: dict[str, float] = {}
    out = []
    for s in collect_sessions(store, fingerprint):
        design = str(s.experiment)
        if design not in scored:
            scored[design] = read_agreement(store, design)
            bounds[design] = clock.bound(store, design, fast_server_ms)
        history = by_session.get(s.id, [])
        got = checks(history, scored[design].get(s.id), fast_server_ms=bounds[design])
        if not got["flagged"]:
            out.append((s, history))
    return out


def triplet_rows(
    history: list[dict], kinds: tuple[str, ...]
) -> tuple[list[tuple[int, int, int]], list[int]]:
    """The triplet rows of a session's answers to queries of ``kinds``, and the screen of each.

    What each answer implies (:func:`~.trial.implied`): a pick among k candidates the k - 1
    rows ``(head, picked, other)``, ranked picks each pick's rows against the candidates
    not picked before it, an odd-one-out two; a skip, an undo or an undone answer none.
    """
    rows: list[tuple[int, int, int]] = []
    screens: list[int] = []
    for h, picks in answered_trials(history, kinds):
        got = implied(h["query"], picks)
        rows.extend(got)
        screens.extend([int(h["number"])] * len(got))
    return rows, screens


def answered_trials(history: list[dict], kinds: tuple[str, ...]) -> list[tuple[dict, list[int]]]:
    """A session's counted answers (not skips) to queries of ``kinds``: (record, picks).

    ``picks``: the positions picked in order (:func:`~.trial.answer_picks`).
    """
    out = []
    for h in history:
        picks = answer_picks(h) if is_counted(h) else None
        if picks is not None and h["query"].get("kind") in kinds:
            out.append((h, picks))
    return out


def _triplets(rows: list[tuple[int, int, int]]) -> np.ndarray:
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def sampler_answers(
    counted: Counted, sampler: str, width: int | None = None
) -> tuple[np.ndarray, dict[str, int]]:
    """``sampler``'s triplet rows, and the answers used: session id -> the last screen.

    Its participants' answers to burn-in, adaptive and random queries (not checks, repeats
    or tests), of the ``counted`` sessions (:func:`counted_sessions`). ``width``: the
    answers as a trial sampler's rows of ``width`` columns instead
    (:func:`~.trial.trial_row`: ranked picks or odd-one-out, one row an answer).
    """
    rows: list[Any] = []  # (triplets, or a trial sampler's rows)
    used: dict[str, int] = {}
    for s, history in counted:
        if (s.params or {}).get("sampler") != sampler:
            continue
        if width is not None:
            answered = answered_trials(history, ANSWER_KINDS)
            got: list[Any] = [trial_row(h["query"], picks) for h, picks in answered]
            screens = [int(h["number"]) for h, _ in answered]
        else:
            got, screens = triplet_rows(history, ANSWER_KINDS)
        if got:
            rows.extend(got)
            used[s.id] = max(screens)
    if width is not None:
        return np.array(rows, dtype=np.int64).reshape(-1, width), used
    return _triplets(rows), used


def sampler_rows(
    store: Store,
    fingerprint: str,
    sampler: str,
    answered: dict | None = None,
    *,
    fast_server_ms: float | None = None,
) -> np.ndarray:
    """The triplet rows ``(head, picked, other)`` that ``sampler`` fits, read from ``store``.

    As :func:`sampler_answers` of :func:`counted_sessions`.
    """
    counted = counted_sessions(store, fingerprint, answered, fast_server_ms=fast_server_ms)
    return sampler_answers(counted, sampler)[0]


def held_out(counted: Counted) -> np.ndarray:
    """The held-out triplets: the ``counted`` sessions' answers to the test queries."""
    return _triplets([r for _, h in counted for r in triplet_rows(h, ("test",))[0]])


def held_out_rows(
    store: Store,
    fingerprint: str,
    answered: dict | None = None,
    *,
    fast_server_ms: float | None = None,
) -> np.ndarray:
    """The held-out triplets of the collect design ``fingerprint``, read from ``store``."""
    return held_out(counted_sessions(store, fingerprint, answered, fast_server_ms=fast_server_ms))


def triplet_accuracy(X: np.ndarray, rows: np.ndarray) -> float | None:
    """The share of ``rows`` (head, closer, farther) whose closer item is nearer in ``X``.

    A tie counts a half (:func:`~tripletsearch.outcomes.triplet_agreement`); None without
    rows.
    """
    if len(rows) == 0:
        return None
    return float(np.mean(triplet_agreement(X, rows)))


# ---------------------------------------------------------------------- agreement


def agreement_key(fingerprint: str) -> str:
    """Where the refitter keeps collect ``fingerprint``'s agreement scores in ``ts_meta``."""
    return f"agreement:{fingerprint}"


def read_agreement(store: Store, fingerprint: str) -> dict[str, dict]:
    """The agreement records by session id as the refitter last stored them ({} before)."""
    got = store.get_meta(agreement_key(fingerprint)) or {}
    return dict(got.get("sessions", {}))
