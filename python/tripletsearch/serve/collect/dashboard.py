"""The collect owner's dashboard: what ``GET /api/admin/collect`` reports (admin token).

:func:`collect_dashboard` reads the database once and summarises a collect design:

``answers``
    the answers over time (``t``: seconds since the first, ``count``: answers so far),
    at most :data:`MAX_POINTS` points;
``participants``
    one record per participant: enrolment number, pseudonymous id, sampler, answers,
    skips, attention checks passed and repeats agreed (``[passed, answered]``),
    ``flagged`` (left out of the fits, :func:`~.quality.checks`), the median response
    time the page measured, the platform id, withdrawn or done;
``samplers``
    per sampler, its embedding versions: answers (triplets) used, held-out triplets,
    held-out accuracy (the curve of accuracy against answers);
``map``
    the newest embedding of the sampler with the most answers, as 2-D points (its first
    two principal axes) with the items' public records, or None before any fit.
"""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np

from ..store import Store
from .file import CollectConfig
from .quality import checks

__all__ = ["collect_dashboard", "MAX_POINTS", "plane"]

MAX_POINTS = 200  # of the answers-over-time curve


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
    """A participant's line: their sampler, answers, checks and response time."""
    counted = [h for h in history if h["kind"] == "answer" and not h["undone"]]
    ms = [h["response_ms"] for h in counted if h.get("response_ms") is not None]
    got = checks(history)
    return {
        "number": int(row.number),
        "id": row.id,
        "sampler": None if session is None else session.params.get("sampler"),
        "answers": len(counted),
        "skips": sum(h["choice"] is None for h in counted),
        "attention": list(got["attention"]),
        "repeats": list(got["repeats"]),
        "flagged": got["flagged"],
        "response_ms_median": None if not ms else float(statistics.median(ms)),
        "platform_id": row.platform_id,
        "withdrawn": row.withdrawn is not None,
        "done": bool(session is not None and session.done),
    }


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
        samplers.setdefault(v["sampler"], []).append(
            {k: v[k] for k in ("version", "n_rows", "n_test", "accuracy", "created")}
        )
    return {
        "title": config.title,
        "k": config.k,
        "max_queries": config.max_queries,
        "answers": _over_time(times),
        "participants": people,
        "flagged": sum(p["flagged"] for p in people),
        "samplers": samplers,
        "map": _map(store, config, fp, versions),
    }
