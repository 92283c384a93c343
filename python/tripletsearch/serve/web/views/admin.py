"""``/api/health`` and the admin export (``/api/admin/export``, behind its own token)."""

from __future__ import annotations

import os
import time

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...export import export_data
from ...service.memory import process_memory
from . import ok, require_admin

__all__ = ["ROUTES"]


def health(request: Request) -> Response:
    """``{"status": "ok", "database_ms", "worker"}``: a database ping, the worker's memory.

    ``database_ms``: the time the ping took (raises on error); ``worker``: ``{"pid",
    "process", "budget", "baseline", "searchers", "searcher_bytes", "pinned", "evictions",
    "rebuilds"}`` (bytes; ``process`` as PSS, :mod:`..memory`; ``budget`` None without
    ``--memory``).
    """
    t0 = time.perf_counter()
    state = request.app.state
    state.store.ping()
    live = state.service.live.stats()
    worker = {
        "pid": os.getpid(),
        "process": process_memory(),
        "budget": state.memory,
        "baseline": state.baseline,
        "searchers": live["searchers"],
        "searcher_bytes": live["bytes"],
        "pinned": live["pinned"],
        "evictions": live["evictions"],
        "rebuilds": live["rebuilds"],
    }
    ms = round(1e3 * (time.perf_counter() - t0), 2)
    return ok({"status": "ok", "database_ms": ms, "worker": worker})


def export(request: Request) -> Response:
    """Every recorded answer (:func:`~..export.export_data`), for the admin token only."""
    require_admin(request)
    state = request.app.state
    with state.store.snapshot():  # one read of the database, whatever is written meanwhile
        # (the server's clock check: as the server recorded it with the experiment)
        data = export_data(state.store, state.service.catalogue)
    return ok(data)


ROUTES = [
    Route("/api/health", health),
    Route("/api/admin/export", export),
]
