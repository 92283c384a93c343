"""The collect owner's dashboard: what ``GET /api/admin/collect`` reports (admin token).

:func:`collect_dashboard` reads the database once and summarises a collect design:

``answers``
    the answers over time (``t``: seconds since the first, ``count``: answers so far),
    at most :data:`MAX_POINTS` points;
``participants``
    one record per participant: enrolment number, pseudonymous id, sampler (assigned at
    enrolment), answers, skips, fallback queries, attention checks, gold queries and
    repeats (``[passed, answered]``), ``flagged`` (left out of the fits,
    :func:`~.quality.checks`), the median response time the page measured and the
    server's, the platform id, withdrawn or done;
``samplers``
    per sampler, its embedding versions: answers (triplets) used, held-out triplets
    (``n_test``), held-out accuracy and its 95 % interval (Wilson's, over the ``n_test``
    triplets: a curve that says how sure each point is);
``arms``
    per sampler: participants, flagged, withdrawn, fallback queries served (its buffer was
    empty), and the queries left in its buffer;
``refitter``
    the refitter's state: alive (it beat within :data:`ALIVE_S` seconds), its pid, when it
    last refitted, the answers that came in since it last read them;
``map``
    the newest embedding of the sampler with the most answers, as 2-D points (its first
    two principal axes) with the items' public records, or None before any fit.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from ...outcomes import proportion_interval
from ..store import Store
from .file import CollectConfig
from .quality import checks
from .refitter import state_key

__all__ = ["collect_dashboard", "MAX_POINTS", "plane"]

MAX_POINTS = 200  # of the answers-over-time curve
ALIVE_S = 15.0  # a refitter that beat within this is alive (it beats every 2 s)


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


def _participant(row: Any, session: Any, history: list[dict]) -> dict[str, Any]:
    """A participant's line: their sampler, answers, checks and response times."""
    counted = [h for h in history if h["kind"] == "answer" and not h["undone"]]
    ms = [h["response_ms"] for h in counted if h.get("response_ms") is not None]
    got = checks(history)
    sampler = getattr(row, "arm", None) or (
        None if session is None else session.params.get("sampler")
    )
    return {
        "number": int(row.number),
        "id": row.id,
        "sampler": sampler,
        "answers": len(counted),
        "skips": sum(h["choice"] is None for h in counted),
        "fallbacks": sum(h["query"].get("kind") == "fallback" for h in counted),
        "attention": list(got["attention"]),
        "gold": list(got["gold"]),
        "repeats": list(got["repeats"]),
        "flagged": got["flagged"],
        "response_ms_median": None if not ms else float(statistics.median(ms)),
        "server_ms_median": got["server_ms"],
        "platform_id": row.platform_id,
        "withdrawn": row.withdrawn is not None,
        "done": bool(session is not None and session.done),
    }


def _arms(store: Store, config: CollectConfig, people: list[dict]) -> dict[str, dict]:
    """Per sampler: participants, flagged, withdrawn, fallbacks served, buffer depth."""
    out = {}
    for name in config.samplers:
        mine = [p for p in people if p["sampler"] == name]
        out[name] = {
            "participants": len(mine),
            "flagged": sum(p["flagged"] for p in mine),
            "withdrawn": sum(p["withdrawn"] for p in mine),
            "fallbacks": sum(p["fallbacks"] for p in mine),
            "buffer": store.free_queries(config.fingerprint, name),
        }
    return out


def _refitter(store: Store, config: CollectConfig) -> dict[str, Any]:
    """The refitter's state as it last kept it (:func:`~.refitter.refitter`)."""
    beat = store.get_meta(state_key(config.fingerprint)) or {}
    now = time.time()
    alive = beat.get("beat") is not None and now - float(beat["beat"]) <= ALIVE_S
    return {
        "alive": bool(alive),
        "pid": beat.get("pid"),
        "beat_s_ago": None if beat.get("beat") is None else round(now - beat["beat"], 1),
        "last_refit": beat.get("last_refit"),
        "answers_waiting": max(0, store.count_answers() - int(beat.get("read", 0))),
    }


def _version(v: dict) -> dict:
    """An embedding version's point: its accuracy with its count and 95 % interval."""
    out = {k: v[k] for k in ("version", "n_rows", "n_test", "accuracy", "created")}
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
        "points": [[round(float(x), 5), round(float(y), 5)] for x, y in XY],
        "items": [cat.item(i) for i in range(cat.n_items)],
    }


def collect_dashboard(store: Store, config: CollectConfig) -> dict[str, Any]:
    """The dashboard's numbers for the collect design ``config`` (see the module docstring)."""
    fp = config.fingerprint
    space = f"collect:{fp}"
    by_session = store.all_answers()
    sessions = {
        s.participant: s for s in store.iter_sessions(withdrawn=True) if s.catalogue == space
    }
    people, times = [], []
    for row in store.iter_participants():
        if row.study != fp:
            continue
        session = sessions.get(row.id)
        history = [] if session is None else by_session.get(session.id, [])
        times += [h["answered_at"] for h in history if h["kind"] == "answer"]
        people.append(_participant(row, session, history))
    versions = store.embedding_versions(fp)
    samplers: dict[str, list[dict]] = {name: [] for name in config.samplers}
    for v in versions:
        samplers.setdefault(v["sampler"], []).append(_version(v))
    return {
        "title": config.title,
        "name": config.name,
        "k": config.k,
        "max_queries": config.max_queries,
        "answers": _over_time(times),
        "participants": people,
        "flagged": sum(p["flagged"] for p in people),
        "samplers": samplers,
        "arms": _arms(store, config, people),
        "refitter": _refitter(store, config),
        "map": _map(store, config, fp, versions),
    }
