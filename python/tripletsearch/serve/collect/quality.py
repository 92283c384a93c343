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

import math
import time
from typing import Any

import numpy as np

from ...collect import refit_due
from ...outcomes import triplet_agreement
from ...utils import derived_seed
from .. import clock
from ..modes.collect import ANSWER_KINDS, CHECK_RULES
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

__all__ = [
    "checks", "counted_sessions", "triplet_rows", "sampler_answers", "sampler_rows",
    "held_out", "held_out_rows", "triplet_accuracy", "score_agreement", "agreement_scores",
    "refresh_agreement", "read_agreement", "agreement_key", "EXPORT_KINDS", "CHECK_RULES",
    "PASS_SHARE", "FAST_MS", "FAST_SERVER_MS", "FAST_AFTER", "AGREEMENT_LEVEL",
    "AGREEMENT_AFTER", "AGREEMENT_FOLDS", "AGREEMENT_ROWS_PER_ITEM",
]  # fmt: skip

# the version of the rules below, CHECK_RULES, is written once with its history in
# ..modes.collect (flags are recomputed under it for collects under way, for analysis; the
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


def _agreement_flag(agreement: dict | None) -> dict | None:
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
        _agreement_flag(agreement),
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

    A pick among k candidates gives the k - 1 rows ``(head, picked, other)``; a skip, an
    undo or an undone answer gives none.
    """
    rows: list[tuple[int, int, int]] = []
    screens: list[int] = []
    for h in history:
        if not is_counted(h) or h["choice"] is None:
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
def _picks(history: list[dict]) -> list[tuple[int, list[int], int]]:
    """The picks the agreement rule scores: (head, candidates, position picked; -1: a skip).

    The counted answers (:data:`EXPORT_KINDS`) and the gold queries' (known answers, which
    look like any query: a pick at random agrees with chance there too); not the attention
    checks answered (which a script recognises) nor the repeats answered (a second pick of
    the same query). A skip on any screen is a pick that does not agree (check rules 3): a
    script cannot stay under :data:`AGREEMENT_AFTER` picks, nor skip what it cannot fake.
    """
    out = []
    for h in history:
        q = h["query"]
        if not is_counted(h):
            continue
        cands = [int(c) for c in q["candidates"]]
        if h["choice"] is None:
            out.append((int(q["head"]), cands, -1))
        elif q.get("kind") in (*EXPORT_KINDS, "gold"):
            out.append((int(q["head"]), cands, int(h["choice"])))
    return out


def _agree(emb: Any, picks: list[tuple[int, list[int], int]]) -> dict[str, Any]:
    """How ``picks`` agree with the fitted embedding ``emb``: counts and the weighted test.

    Each pick agrees when it is the candidate the embedding makes likeliest (ties: the
    first); its weight is how sure the embedding is, the log-odds of that candidate
    against the average other, ``w = log(p_max (k - 1) / (1 - p_max))`` capped at
    :data:`MAX_WEIGHT` (a near-tie weighs nearly nothing; the most powerful weights
    against a person who answers as the embedding predicts). A pick at random agrees with
    probability 1/k whatever the weights, so ``S = sum w (agreed - 1/k)`` has mean 0 and
    variance ``sum w^2 (1/k)(1 - 1/k)`` under chance; ``p_value`` is the one-sided normal
    tail of ``S`` over its standard deviation.
    """
    if not picks:
        return {"agreed": 0, "answers": 0, "chance": 0.5, "z": None, "p_value": None}
    k = len(picks[0][1])
    heads = [h for h, _, _ in picks]
    cands = [c for _, c, _ in picks]
    P = emb.oracle_.choice_prob(emb.embedding_, heads, cands, n_jobs=1)
    best = np.argmax(P, axis=1)
    agreed = np.array([int(b == c) for b, (_, _, c) in zip(best, picks)], dtype=np.float64)
    # (a skipped attention check: the head among its candidates, as sure as can be)
    top = np.clip(np.nan_to_num(P.max(axis=1), nan=1.0), 1.0 / k, 1.0 - 1e-12)
    w = np.minimum(np.log(top * (k - 1) / (1.0 - top)), MAX_WEIGHT)
    var = float(np.sum(w**2) * (1.0 / k) * (1.0 - 1.0 / k))
    z = float(np.sum(w * (agreed - 1.0 / k)) / math.sqrt(var)) if var > 0 else None
    p = None if z is None else 0.5 * math.erfc(z / math.sqrt(2.0))
    return {
        "agreed": int(agreed.sum()), "answers": len(picks), "chance": 1.0 / k,
        "z": None if z is None else round(z, 4), "p_value": p,
    }  # fmt: skip


def score_agreement(
    train: list[tuple[str, list[dict]]],
    judged: list[tuple[str, list[dict]]],
    n_items: int,
    dim: int,
    seed: int = 0,
    model: str = "gamma-ckl",
) -> dict[str, dict]:
    """How each ``judged`` participant's picks agree with everyone else's answers.

    ``train`` and ``judged``: (participant or session id, answered screens). The
    participants of both are split into :data:`AGREEMENT_FOLDS` folds (one per
    participant when fewer), in a seeded order; per fold an embedding (``model``, ``dim``)
    is fitted to the counted answers (:data:`EXPORT_KINDS`) of the ``train`` participants
    of the other folds, and each ``judged`` participant of the fold is scored by it: their
    picks of the candidate it makes likeliest, and a one-sided test against chance (1/k)
    that weighs each pick by how sure the embedding is (:func:`_agree`: a script cannot
    gain by the near-ties, an honest person is judged mostly by the clear queries). A fold
    whose others give fewer than :data:`AGREEMENT_ROWS_PER_ITEM` triplets per item scores
    no one (``p_value`` None).

    Returns ``{id: {"agreed", "answers", "chance", "z", "p_value", "rows"}}`` (``rows``:
    the triplets the participant's embedding was fitted to).
    """
    from ...embedding import Embedding

    ids = sorted({i for i, _ in train} | {i for i, _ in judged})
    if not ids:
        return {}
    order = np.random.default_rng(derived_seed(seed, AGREEMENT_SEED)).permutation(len(ids))
    folds = min(AGREEMENT_FOLDS, len(ids))
    fold_of = {ids[int(j)]: r % folds for r, j in enumerate(order)}
    rows_of = {i: triplet_rows(h, EXPORT_KINDS)[0] for i, h in train}
    out: dict[str, dict] = {}
    for f in range(folds):
        mine = [(i, h) for i, h in judged if fold_of[i] == f]
        if not mine:
            continue
        rows = [r for i, got in rows_of.items() if fold_of[i] != f for r in got]
        emb = None
        if len(rows) >= AGREEMENT_ROWS_PER_ITEM * n_items:
            T = np.array(rows, dtype=np.int64)
            fit_seed = derived_seed(seed, AGREEMENT_SEED, f, len(T))
            emb = Embedding(model, dim, n_items=n_items, random_state=fit_seed, n_jobs=1)
            emb.fit(T)
        for i, h in mine:
            picks = _picks(h)
            if emb is None:
                k = len(picks[0][1]) if picks else 2
                rec = {
                    "agreed": None, "answers": len(picks), "chance": 1.0 / k, "z": None,
                    "p_value": None,
                }  # fmt: skip
            else:
                rec = _agree(emb, picks)
            out[i] = {**rec, "rows": len(rows)}
    return out


def agreement_scores(
    pool: list[tuple[str, list[dict]]],
    n_items: int,
    dim: int,
    seed: int = 0,
    judged: list[tuple[str, list[dict]]] | None = None,
) -> dict[str, dict]:
    """:func:`score_agreement` in two passes: the second trained without those the first flags.

    ``pool``: the participants to score (``judged``: other histories of them to score,
    e.g. cut short), each scored first by embeddings fitted to the others of ``pool``,
    then by embeddings fitted to the others the first pass did not flag (a script's random
    answers blur the embedding that judges everyone else); where those are too few to fit
    (:data:`AGREEMENT_ROWS_PER_ITEM`), the first pass's score stands.
    """
    first = score_agreement(pool, pool, n_items, dim, seed)
    keep = [(i, h) for i, h in pool if _agreement_flag(first.get(i)) is None]
    if len(keep) == len(pool) and judged is None:
        return first
    second = score_agreement(keep, pool if judged is None else judged, n_items, dim, seed)
    if judged is not None:  # (cut short: the first pass's scores are of the whole)
        first = score_agreement(pool, judged, n_items, dim, seed)
    # where the second pass's others are too few to fit, the first pass's score stands
    return {
        i: rec if rec["p_value"] is not None else first.get(i, rec) for i, rec in second.items()
    }


def agreement_key(fingerprint: str) -> str:
    """Where the refitter keeps collect ``fingerprint``'s agreement scores in ``ts_meta``."""
    return f"agreement:{fingerprint}"


def read_agreement(store: Store, fingerprint: str) -> dict[str, dict]:
    """The agreement records by session id as the refitter last stored them ({} before)."""
    got = store.get_meta(agreement_key(fingerprint)) or {}
    return dict(got.get("sessions", {}))


def refresh_agreement(
    store: Store,
    config: Any,
    answered: dict | None = None,
    *,
    force: bool = False,
    fast_server_ms: float | None = None,
) -> bool:
    """Score every participant's agreement again when the answers grew; whether it did.

    Run by the refitter at each round (:func:`~.refitter.refit_once`): when the counted
    triplets grew by the samplers' refit rule since the last scores (10 % and 50), or the
    rules' version changed, every participant not flagged by another rule is scored by
    :func:`agreement_scores`, on embeddings fitted to those participants' answers (the
    folds but their own; in a second pass, without those the first pass flagged: scores
    computed afresh at each round from the same answers, never from an earlier round's
    flags), and the scores are kept in ``ts_meta`` (:func:`agreement_key`) with the
    rules' version, the triplets and when. ``fast_server_ms``: the server's clock check
    (:func:`checks`; None: as the server recorded it, :func:`~..clock.fast_server_ms`).
    """
    fp = config.fingerprint
    fast_server_ms = clock.bound(store, fp, fast_server_ms)
    by_session = store.all_answers() if answered is None else answered
    last = store.get_meta(agreement_key(fp)) or {}
    judged = [
        (s.id, h)
        for s in collect_sessions(store, fp)
        for h in [by_session.get(s.id, [])]
        if not checks(h, fast_server_ms=fast_server_ms)["flagged"]
    ]
    n_rows = sum(len(triplet_rows(h, EXPORT_KINDS)[0]) for _, h in judged)
    stale = last.get("rules") != CHECK_RULES
    if not (force or stale or refit_due(n_rows, int(last.get("triplets", 0)), 0)):
        return False
    scores = agreement_scores(judged, config.catalogue.n_items, config.dim, config.seed)
    store.put_meta(
        agreement_key(fp),
        {"rules": CHECK_RULES, "triplets": n_rows, "created": time.time(), "sessions": scores},
    )
    return True
