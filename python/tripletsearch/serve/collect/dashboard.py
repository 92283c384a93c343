"""The collect owner's dashboard: what ``GET /api/admin/collect`` reports (admin token).

:func:`collect_dashboard` reads the database once and summarises a collect design:

``answers``
    the answers over time (``t``: seconds since the first, ``count``: answers so far),
    at most :data:`MAX_POINTS` points;
``participants``
    one record per participant: enrolment number, pseudonymous id, sampler
    (:func:`~.rules.participant_sampler`), answers, skips, fallback queries, attention
    checks, gold queries and repeats (``[passed, answered]``; ``clear_repeats`` those of
    queries an embedding predicted clearly, the ones judged), ``agreement`` (their picks
    agreeing with an embedding fitted without them, as the refitter last scored it:
    ``agreed``, ``answers``, ``chance``, ``p_value``), ``flagged`` (left out of the fits) and
    ``flags`` (the rules that flag them, each with its numbers and a sentence,
    :func:`~.quality.checks`), the median response time the page measured and the
    server's (None under :data:`~.rules.FAST_AFTER` answers: the checks' rule), the
    platform id, withdrawn or done, and ``status`` ("flagged: agreement"); and the
    participants' table's columns (:mod:`..participation.roster`): ``platform_params``,
    ``duplicate``,
    ``outcome``, ``code`` (as recorded: never depends on the flags) and ``flagged_by``;
``refused``
    second sessions refused: a platform id that came from another visit (another
    Prolific ``SESSION_ID``, MTurk ``assignmentId``) than the one it enrolled with;
``rules``
    the check rules' version (:data:`~.quality.CHECK_RULES`), the agreement rule's level,
    the answers it needs, when it last scored and ``text``, the rules in a sentence;
``samplers``
    per sampler, its embedding versions: answers (triplets) used, held-out triplets
    (``n_test``), held-out accuracy and its 95 % interval (Wilson's, over the ``n_test``
    triplets: a curve that says how sure each point is);
``trial``
    what the collect's screens ask (``kind``, ``k``, ``picks``, ``form``: "8-rank-2") and,
    per form of screen shown (the collect's own, the held-out test triplets), the counted
    answers, skips, the triplets they imply and the median time per screen; per sampler,
    its newest held-out accuracy;
``arms``
    per sampler: participants, flagged, withdrawn, fallback queries served (its buffer was
    empty), the queries left in its buffer, its burn-in (``burn_in``: the answers it asks
    random queries for, ``TripletSampler.burn_in_``; None: all random), the triplets it
    has (``answers``), its newest embedding's version and ``state``, a sentence ("random
    until 173 answers, 52 so far");
``refitter``
    this server's refitter (one state per server on the database,
    :func:`~.supervisor.refitter_state`): alive (its process runs: a death shows at once),
    its pid, when it beat, its restarts and, while it keeps failing, its last error line;
    when the collect was last refitted, the answers that came in since;
``map``
    the newest embedding of the sampler with the most answers, as 2-D points (its first
    two principal axes) with the items' public records, or None before any fit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...collect import SAMPLER_MODELS, TripletSampler
from ...outcomes import proportion_interval
from .. import clock
from ..participation.roster import participant_record
from ..store import Store
from .file import CollectConfig
from .quality import (
    AGREEMENT_AFTER,
    AGREEMENT_LEVEL,
    AGREEMENT_ROWS_PER_ITEM,
    CHECK_RULES,
    EXPORT_KINDS,
    agreement_key,
    checks,
    counted_sessions,
    read_agreement,
    sampler_answers,
)
from .rules import (
    FAST_MS,
    collect_sessions,
    counted_answers,
    is_counted,
    median_ms,
    participant_sampler,
)
from .supervisor import refitter_state
from .trial import ODD, answer_picks, implied

__all__ = ["collect_dashboard", "MAX_POINTS", "plane", "sampler_state"]

MAX_POINTS = 200  # of the answers-over-time curve
ALIVE_S = 15.0  # a refitter of another host that beat within this is alive (beats: 2 s)


def plane(X: np.ndarray) -> np.ndarray:
    """``X``'s rows on their first two principal axes (centred; zeros for a missing axis).

    The signs are fixed (each axis's largest coordinate positive) so that a refit that
    barely moves the points does not mirror the map.
    """
    X = np.asarray(X, dtype=np.float64)
    centred = X - X.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    out = np.zeros((len(X), 2))
    axes = centred @ vt[:2].T
    for j in range(axes.shape[1]):
        col = axes[:, j]
        out[:, j] = -col if col[np.argmax(np.abs(col))] < 0 else col
    return out


def _over_time(times: list[float]) -> dict[str, list]:
    """Cumulative answers at (at most) :data:`MAX_POINTS` times since the first."""
    if not times:
        return {"t": [], "count": []}
    t = np.sort(np.asarray(times)) - min(times)
    picks = np.unique(np.linspace(0, len(t) - 1, min(len(t), MAX_POINTS)).astype(int))
    return {"t": [round(float(t[i]), 3) for i in picks], "count": [int(i + 1) for i in picks]}


def _participant(
    config: CollectConfig,
    row: Any,
    session: Any,
    history: list[dict],
    agreement: dict | None,
    fast_server_ms: float,
) -> dict[str, Any]:
    """A participant's line: their sampler, answers, checks and response times."""
    counted = counted_answers(history)
    got = checks(history, agreement, fast_server_ms=fast_server_ms)
    table = participant_record(row, got["flags"])
    return {
        "number": int(row.number),
        "id": row.id,
        "sampler": participant_sampler(config, row, session),
        "answers": len(counted),
        "skips": sum(h["choice"] is None for h in counted),
        "fallbacks": sum(h["query"].get("kind") == "fallback" for h in counted),
        "attention": list(got["attention"]),
        "gold": list(got["gold"]),
        "repeats": list(got["repeats"]),
        "clear_repeats": list(got["clear_repeats"]),
        "agreement": got["agreement"],
        "flagged": got["flagged"],
        "flags": got["flags"],
        "status": _status(row, got["flags"]),
        "response_ms_median": got["response_ms"],  # (the rule's: .rules.median_ms)
        "server_ms_median": got["server_ms"],
        "platform_id": row.platform_id,
        "withdrawn": row.withdrawn is not None,
        "released": row.released is not None,  # by the owner, for a fresh start
        "done": bool(session is not None and session.done),
        **{k: table[k] for k in ("platform_params", "duplicate", "outcome", "code", "flagged_by")},
    }


def _status(row: Any, flags: list[dict]) -> str:
    """Withdrawn, flagged (by which rules), done or answering."""
    if row.withdrawn is not None:
        return "withdrawn"
    if flags:
        return "flagged: " + ", ".join(f["rule"] for f in flags)
    return "done" if row.finished is not None else "answering"  # the stored outcome


def sampler_state(name: str, burn_in: int | None, answers: int, version: int | None) -> str:
    """What sampler ``name`` waits for, in a sentence ("random until 173 answers, 52 so far")."""
    if burn_in is None:
        state = f"{name}: every query random, {answers} answers"
    elif answers < burn_in:
        state = f"{name}: random until {burn_in} answers, {answers} so far"
    elif version is None:
        state = f"{name}: random until its first fit ({answers} answers, burn-in {burn_in} done)"
    else:
        state = f"{name}: adaptive, {answers} answers (burn-in of {burn_in} done)"
    fitted = "not fitted yet" if version is None else f"embedding version {version}"
    return f"{state}; {fitted}"


def _arms(
    store: Store, config: CollectConfig, people: list[dict], counted: Any, versions: list[dict]
) -> dict[str, dict]:
    """Per sampler: participants, flagged, withdrawn, fallbacks, buffer, burn-in, state."""
    out = {}
    model = next((m for m in config.models if m in SAMPLER_MODELS), "gamma-ckl")
    for name in config.samplers:
        mine = [p for p in people if p["sampler"] == name]
        burn_in = TripletSampler(
            config.catalogue.n_items, config.dim, method=name, model=model, refit=None,
            random_state=0, n_jobs=1, **config.screen.sampler_options(),
        ).burn_in_  # fmt: skip
        # what the sampler is told: triplets, or a trial sampler's answers (screens)
        screen = config.screen
        answers = len(sampler_answers(counted, name, None if screen.is_choice else screen.width)[0])
        version = max((int(v["version"]) for v in versions if v["sampler"] == name), default=None)
        out[name] = {
            "participants": len(mine),
            "flagged": sum(p["flagged"] for p in mine),
            "withdrawn": sum(p["withdrawn"] for p in mine),
            "fallbacks": sum(p["fallbacks"] for p in mine),
            "buffer": store.free_queries(config.fingerprint, name),
            "burn_in": burn_in,
            "answers": answers,
            "version": version,
            "state": sampler_state(name, burn_in, answers, version),
        }
    return out


def _rules(store: Store, config: CollectConfig, fast_server_ms: float) -> dict[str, Any]:
    """The check rules' version and the agreement rule's numbers.

    The time bound said: the server's clock's (``fast_server_ms``), or, when that check is
    off (0), the page's (:data:`~.rules.FAST_MS`).
    """
    bound = fast_server_ms or FAST_MS
    scored = store.get_meta(agreement_key(config.fingerprint)) or {}
    rows = AGREEMENT_ROWS_PER_ITEM * config.catalogue.n_items
    last = (
        f"last scored on {scored['triplets']} triplets"
        if scored.get("created") is not None
        else "not scored yet"
    )
    left = config.judged_picks  # (max_queries less the check screens)
    agreement = (
        "or picks agreeing with everyone else's answers no more than chance (a one-sided "
        "test, each pick weighed by how sure the embedding of the others' answers is, a skip "
        f"a pick that does not agree, at {AGREEMENT_LEVEL}, judged from {AGREEMENT_AFTER} "
        f"picks once the others gave {rows} triplets; {last})"
        if left >= AGREEMENT_AFTER
        else f"not judged by agreement with everyone else's answers: max_queries = "
        f"{config.max_queries} less its check screens leaves {left} picks, and that rule "
        f"judges from {AGREEMENT_AFTER}"
    )
    text = (
        f"Check rules version {CHECK_RULES}: attention checks, gold queries and repeats of "
        f"clear queries passed by fewer than half, a median time per screen under {bound:g} "
        f"ms, {agreement}. Hover a status for why."
    )
    return {
        "version": CHECK_RULES,
        "agreement_level": AGREEMENT_LEVEL,
        "agreement_after": AGREEMENT_AFTER,
        "agreement_judges": left >= AGREEMENT_AFTER,
        "agreement_rows": rows,
        "scored": scored.get("created"),
        "scored_triplets": scored.get("triplets"),
        "text": text,
    }


def form_name(query: dict) -> str:
    """A screen's form in words: "8-rank-2", "choice of 4", "triplet" or "odd-one-out"."""
    if query.get("trial") == ODD:
        return ODD
    k, r = len(query["candidates"]), int(query.get("picks", 1))
    return f"{k}-rank-{r}" if r > 1 else "triplet" if k == 2 else f"choice of {k}"


def _trials(config: CollectConfig, counted: Any, samplers: dict[str, list[dict]]) -> dict:
    """The collect's trial and, per form of screen, what its counted answers gave.

    ``forms``: per form (:func:`form_name`) and role (``"samplers"``: the answers the
    samplers fit; ``"held-out"``: the test screens), answers, skips, the triplets they
    imply and the median time per screen the page measured (``median_ms``, None under
    :data:`~.rules.FAST_AFTER` times) with its count; ``accuracy``: per sampler, its newest
    embedding's held-out accuracy (with its interval and test triplets).
    """
    forms: dict[tuple[str, str], dict[str, Any]] = {}
    for _, history in counted:
        for h in counted_answers(history):
            q = h["query"]
            role = "held-out" if q.get("kind") == "test" else "samplers"
            if q.get("kind") not in EXPORT_KINDS:
                continue
            rec = forms.setdefault(
                (form_name(q), role),
                {"form": form_name(q), "role": role, "answers": 0, "skips": 0, "triplets": 0,
                 "times": []},
            )  # fmt: skip
            picks = answer_picks(h)
            rec["answers"] += 1
            rec["skips"] += picks is None
            rec["triplets"] += 0 if picks is None else len(implied(q, picks))
            if h.get("response_ms") is not None:
                rec["times"].append(float(h["response_ms"]))
    out = []
    for rec in forms.values():
        times = rec.pop("times")
        out.append({**rec, "median_ms": median_ms(times), "timed": len(times)})
    newest = {name: v[-1] for name, v in samplers.items() if v}
    return {
        "kind": config.trial,
        "k": config.k,
        "picks": config.picks,
        "form": form_name(config.screen.query(0, range(1, config.k + 1))),
        "forms": sorted(out, key=lambda r: (r["role"] != "samplers", r["form"])),
        "accuracy": {
            name: {k: v[k] for k in ("accuracy", "interval", "n_test", "n_triplets")}
            for name, v in newest.items()
        },
    }


def _refitter(store: Store, config: CollectConfig) -> dict[str, Any]:
    """The state of the refitter of this server (:func:`~.supervisor.refitter_state`)."""
    return refitter_state(store, config.fingerprint, alive_s=ALIVE_S)


def _version(v: dict, per_row: int) -> dict:
    """An embedding version's point: its accuracy with its count and 95 % interval.

    ``n_triplets``: the triplets its answers imply (``n_rows`` times ``per_row``: a trial
    sampler's rows are answers).
    """
    out = {k: v[k] for k in ("version", "n_rows", "n_test", "accuracy", "created")}
    out["n_triplets"] = int(v["n_rows"]) * per_row
    n, acc = int(v["n_test"]), v["accuracy"]
    lo, hi = proportion_interval(acc * n, n) if acc is not None and n > 0 else (None, None)
    out["interval"] = [lo, hi]
    return out


def _map(store: Store, config: CollectConfig, fp: str, versions: list[dict]) -> dict | None:
    """The newest embedding of the sampler with the most answers, on a plane."""
    if not versions:
        return None
    best = max(versions, key=lambda v: (v["n_rows"], v["created"]))
    latest = store.latest_embedding(fp, best["sampler"])
    assert latest is not None
    XY = plane(np.asarray(latest["embedding"]["embedding"]))
    cat = config.catalogue
    return {
        "sampler": best["sampler"],
        "version": int(latest["version"]),
        "n_rows": int(latest["n_rows"]),
        "n_triplets": int(latest["n_rows"]) * config.screen.triplets_per_row,
        "points": [[round(float(x), 5), round(float(y), 5)] for x, y in XY],
        "items": [cat.item(i) for i in range(cat.n_items)],
    }


def collect_dashboard(
    store: Store, config: CollectConfig, *, fast_server_ms: float | None = None
) -> dict[str, Any]:
    """The dashboard's numbers for the collect design ``config`` (see the module docstring).

    ``fast_server_ms``: the server's clock check (:func:`~.quality.checks`; None: as the
    server recorded it with the collect, :func:`~..clock.fast_server_ms`).
    """
    fp = config.fingerprint
    fast_server_ms = clock.bound(store, fp, fast_server_ms)
    by_session = store.all_answers()
    sessions = {s.participant: s for s in collect_sessions(store, fp, withdrawn=True)}
    scores = read_agreement(store, fp)
    people, times = [], []
    for row in store.iter_participants():
        if row.study != fp:
            continue
        session = sessions.get(row.id)
        history = [] if session is None else by_session.get(session.id, [])
        times += [h["answered_at"] for h in history if is_counted(h)]
        agreement = None if session is None else scores.get(session.id)
        people.append(_participant(config, row, session, history, agreement, fast_server_ms))
    versions = store.embedding_versions(fp)
    counted = counted_sessions(store, fp, by_session, fast_server_ms=fast_server_ms)
    samplers: dict[str, list[dict]] = {name: [] for name in config.samplers}
    for v in versions:
        samplers.setdefault(v["sampler"], []).append(_version(v, config.screen.triplets_per_row))
    return {
        "title": config.title,
        "name": config.name,
        "k": config.k,
        "max_queries": config.max_queries,
        "trial": _trials(config, counted, samplers),
        "answers": _over_time(times),
        "participants": people,
        "flagged": sum(p["flagged"] for p in people),
        "refused": store.refused_count(fp),  # second sessions of a platform id refused
        "samplers": samplers,
        "arms": _arms(store, config, people, counted, versions),
        "rules": _rules(store, config, fast_server_ms),
        "refitter": _refitter(store, config),
        "map": _map(store, config, fp, versions),
    }
