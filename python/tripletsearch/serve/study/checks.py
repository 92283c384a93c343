"""A study's checks on its participants: the server's clock, their picks, attention screens.

:func:`participant_checks` flags a participant by the rules of version :data:`CHECK_RULES`,
each flag naming its rule with its numbers (as a collect's checks do, ``collect/quality.py``):

* ``server_time``: the median of the server's own time per screen (from sending a screen to
  receiving its answer, over at least :data:`FAST_AFTER` answers) under the server's bound
  (``fast_server_ms``, recorded with the study: :func:`server_clock_bound`), whatever the page
  claims;
* ``agreement``: their picks agree with their searches' own targets less often than an
  honest person's would. An honest person picks the candidate nearest the target (in the
  catalogue's embedding) far more often than 1/k. Each screen of a study records, when it is
  made, its candidates' distances to the target (the query's ``distances``); a pick agrees
  when it is the nearest, a skip never does. Each pick weighs by how clear its screen is
  (``w``: the log-odds of the nearest against the average other under gamma-CKL at
  :data:`CLARITY_GAMMA`, 0 for a tie, at most :data:`MAX_WEIGHT`: a near-tie says little),
  and ``p0`` is the chance that the :data:`REFERENCE` person (gamma-CKL of gamma 1.5 with
  10 % lapses: an honest person at worst) picks the nearest there. Under that person,
  ``S = sum w (agreed - p0)`` has mean 0 and variance ``sum w^2 p0 (1 - p0)``; ``p_value``
  is the one-sided normal lower tail of ``S`` over its standard deviation, and a
  ``p_value`` below :data:`AGREEMENT_LEVEL` flags. The rule's false-flag rate is that
  level, 5 %, for a person as reliable as the reference, and less for a more reliable one
  (``bench/study_checks.py``: 6 of 80 at the reference, 0 of 80 at gamma 3 with 5 %
  lapses; each of five scripts 20 of 20); a script that does not know
  the target's neighbours agrees near 1/k, far below ``p0`` on clear screens, and is
  caught once it has made enough clear picks. The "this is it" answers and the attention
  screens are not picks;
* ``attention``: fewer than :data:`PASS_SHARE` of the attention screens answered with
  "this is it" on the target (a study file's ``attention``: screens that show the target
  among the candidates, served along the path and in the form of any other screen).

A study's checks never change the code a participant was shown; a flagged participant's
searches are reported apart (:mod:`.report`) and their flags are in the participants'
table (``flagged``, ``flagged_by``, ``why``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..clock import bound
from ..store import Store, counted_answers

__all__ = [
    "participant_checks",
    "study_flags",
    "server_clock_bound",
    "flagged_summary",
    "flagged_text",
    "CHECK_RULES",
    "AGREEMENT_LEVEL",
    "REFERENCE",
    "PASS_SHARE",
    "FAST_AFTER",
]

CHECK_RULES = 1  # the version of a study's rules (none before it)
AGREEMENT_LEVEL = 0.05  # the one-sided test's alpha: its false-flag rate (see above)
REFERENCE = (1.5, 0.1)  # the honest person the test assumes at worst: gamma-CKL, lapses
CLARITY_GAMMA, MAX_WEIGHT = 3.0, 5.0  # a pick's weight: how clear its screen is
PASS_SHARE = 0.5  # attention screens passed fewer than this: flagged
FAST_AFTER = 5  # screens timed before the server's clock judges (as a collect's)


def server_clock_bound(store: Store, key: str | None, given: float | None = None) -> float:
    """The server-clock bound (ms) a study's checks use: the server's ``fast_server_ms``.

    The one place the study's checks read it: ``given`` (``report --fast-server-ms``) when
    the caller has one, else the bound the server recorded with the study when it started
    (:func:`~..clock.bound`, as a collect's checks read theirs).
    """
    return bound(store, key, given)


def _pick_terms(distances: list[float]) -> tuple[int, float, float]:
    """(the nearest candidate's position, the pick's weight, a reference person's chance).

    The weight: how clear the screen is, the log-odds of the nearest against the average
    other under gamma-CKL at :data:`CLARITY_GAMMA` (``P(c) ~ d_c^-gamma``), 0 for a tie,
    at most :data:`MAX_WEIGHT` (the target itself shown: the cap). The chance: that a
    :data:`REFERENCE` person (gamma-CKL with lapses) picks the nearest.
    """
    d = np.asarray(distances, dtype=np.float64)
    k, best = len(d), int(np.argmin(d))
    gamma, lapse = REFERENCE
    if d[best] <= 0:  # the target shown
        return best, MAX_WEIGHT, (1 - lapse) + lapse / k
    logd = np.log(d)

    def p_nearest(g: float) -> float:
        a = -g * logd
        e = np.exp(a - a.max())
        return float(e[best] / e.sum())

    p = p_nearest(CLARITY_GAMMA)
    w = math.log(max(p, 1e-300) * (k - 1) / max(1.0 - p, 1e-300))
    return best, float(min(max(w, 0.0), MAX_WEIGHT)), (1 - lapse) * p_nearest(gamma) + lapse / k


def _agreement(answers: list[dict]) -> dict[str, Any]:
    """The agreement record of ``answers`` (counted, in order): counts and the weighed test."""
    w, a, ref = [], [], []
    for h in answers:
        q = h["query"]
        if h["found"] or "distances" not in q:  # "this is it", or a screen made before
            continue
        best, weight, chance = _pick_terms(q["distances"])
        w.append(weight)
        a.append(float(h["choice"] is not None and h["choice"] == best))
        ref.append(chance)
    W, A, R = np.array(w), np.array(a), np.array(ref)
    var = float(np.sum(W**2 * R * (1 - R)))
    z = float(np.sum(W * (A - R)) / math.sqrt(var)) if var > 0 else None
    return {
        "agreed": int(A.sum()), "picks": len(w), "expected": float(R.sum()), "z": z,
        "p_value": None if z is None else 0.5 * math.erfc(-z / math.sqrt(2)),
    }  # fmt: skip


def _median(values: list[float]) -> float | None:
    return float(np.median(values)) if len(values) >= FAST_AFTER else None


def participant_checks(
    searches: list[tuple[int | None, list[dict]]], fast_server_ms: float
) -> dict[str, Any]:
    """A participant's checks from their searches: (target, answered screens) each.

    ``agreement``: ``{"agreed", "picks", "chance", "z", "p_value"}`` (None p: not judged);
    ``attention``: (passed, answered); ``server_ms``: the median time per screen by the
    server's clock (None: fewer than :data:`FAST_AFTER`); ``flags``: one record per rule
    that flags them (``rule``, its numbers, ``why``); ``flagged``; ``rules``.
    """
    answers = [h for _, hist in searches for h in counted_answers(hist)]
    checked = [(t, h) for t, hist in searches for h in hist if h["kind"] == "check"]
    timed = [h for _, hist in searches for h in hist if h["kind"] in ("answer", "check")]
    server = _median([1e3 * (h["answered_at"] - h["shown_at"]) for h in timed])
    agree = _agreement(answers)
    passed = sum(_on_target(t, h) for t, h in checked)
    flags = []
    if server is not None and server < fast_server_ms:
        why = f"time per screen by the server's clock: median {server:.0f} ms (under "
        rec = {"rule": "server_time", "median_ms": server, "bound_ms": fast_server_ms}
        flags.append({**rec, "why": why + f"{fast_server_ms:.0f} ms)"})
    if agree["p_value"] is not None and agree["p_value"] < AGREEMENT_LEVEL:
        why = (
            f"picks of the candidate nearest the target: {agree['agreed']} of {agree['picks']} "
            f"(an honest person: {agree['expected']:.0f}); weighed by how clear each was, "
            f"p = {agree['p_value']:.3g}, below {AGREEMENT_LEVEL}"
        )
        rec = {"rule": "agreement", "agreed": agree["agreed"], "of": agree["picks"]}
        flags.append({**rec, "p_value": agree["p_value"], "level": AGREEMENT_LEVEL, "why": why})
    if checked and passed < PASS_SHARE * len(checked):
        why = f"attention screens: {passed} of {len(checked)} (fewer than {PASS_SHARE:.0%})"
        flags.append({"rule": "attention", "passed": passed, "of": len(checked), "why": why})
    return {
        "agreement": agree,
        "attention": (passed, len(checked)),
        "server_ms": server,
        "flags": flags,
        "flagged": bool(flags),
        "rules": CHECK_RULES,
    }


def _on_target(target: int | None, h: dict) -> bool:
    """Whether an attention screen was answered "this is it" on the target."""
    q = h["query"]
    if target is None or not h["found"] or h["choice"] is None:
        return False
    return int((q["shown"] + q.get("offered", []))[h["choice"]]) == int(target)


def study_flags(
    store: Store, key: str | None, fast_server_ms: float | None = None
) -> dict[str, list[dict]]:
    """The flags of every participant of the study of key ``key``, by participant id.

    Withdrawn participants too; ``key`` None: every study's (a session with a target);
    ``fast_server_ms``: the server's setting (:func:`server_clock_bound`).
    """
    return {p: got["flags"] for p, got in study_checks(store, key, fast_server_ms).items()}


def study_checks(
    store: Store, key: str | None, fast_server_ms: float | None = None
) -> dict[str, dict]:
    """:func:`participant_checks` of every participant of the study of key ``key``, by id."""
    bound = server_clock_bound(store, key, fast_server_ms)
    answered = store.all_answers()
    mine: dict[str, list[tuple[int | None, list[dict]]]] = {}
    for s in store.iter_sessions(withdrawn=True, experiment=key):
        if s.participant is not None and s.target is not None:
            got = (int(s.target), answered.get(s.id, []))
            mine.setdefault(str(s.participant), []).append(got)
    return {p: participant_checks(searches, bound) for p, searches in mine.items()}


def flagged_summary(flags: dict[str, list[dict]], searches: list[dict]) -> dict[str, Any]:
    """The report's flagged part: how many of those who did ``searches`` are flagged, and why.

    ``{"participants", "searches", "by_rule": {rule: count}, "who": [{"participant",
    "rules", "why"}]}`` (``searches``: theirs, each with its ``flagged``).
    """
    searched = {str(s["participant"]) for s in searches}
    who = [
        {"participant": p, "rules": [f["rule"] for f in f_], "why": "; ".join(f["why"] for f in f_)}
        for p, f_ in sorted(flags.items())
        if f_ and p in searched
    ]
    by_rule: dict[str, int] = {}
    for w in who:
        for r in w["rules"]:
            by_rule[r] = by_rule.get(r, 0) + 1
    n = sum(bool(s["flagged"]) for s in searches)
    return {"participants": len(who), "searches": n, "by_rule": by_rule, "who": who,
            "rules": CHECK_RULES}  # fmt: skip


def flagged_text(flagged: dict | None) -> list[str]:
    """The report's lines on the flagged participants (none when no one is flagged)."""
    if not flagged or not flagged["participants"]:
        return []
    n, rules = flagged["participants"], flagged["by_rule"]
    why = ", ".join(f"{r} {c}" for r, c in sorted(rules.items()))
    lines = [
        f"flagged by the study's checks: {n} participant{'s' if n != 1 else ''} (their "
        f"{flagged['searches']} searches reported apart, not in the comparison below); by "
        f"rule: {why}"
    ]
    lines += [f"  {w['participant']}: {w['why']}" for w in flagged["who"][:20]]
    if len(flagged["who"]) > 20:
        lines.append(f"  and {len(flagged['who']) - 20} more (participants.csv of the export)")
    return lines
