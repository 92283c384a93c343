"""``/api/health``, the owner's notices, the admin export, a participant's release.

The admin export is ``/api/admin/export``; the dashboards release a participant for a
fresh start at ``/api/admin/participants/{id}/release`` (the owner's token).

The health check is public but says only whether the server can work; what it runs on
(the worker's pid and memory) and why it cannot are for the owner (the admin token).
"""

from __future__ import annotations

import datetime as _dt
import hmac
import os
import time

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import schema
from ...collect.training import export_data
from ...errors import Conflict, NotFound
from ...service.memory import process_memory
from ..tls import expiry_notice
from . import bearer, ok, read_json, require_admin
from .participants import experiment_of

__all__ = ["ROUTES", "notices", "is_owner"]


def is_owner(request: Request) -> bool:
    """Whether the request carries the owner's admin token (never an error)."""
    admin, token = request.app.state.admin_token, bearer(request)
    return bool(admin and token and hmac.compare_digest(token.encode(), admin.encode()))


def notices(request: Request) -> list[str]:
    """What the owner must know of the server itself, one line each (the dashboards').

    The HTTPS certificate expiring soon (:func:`~..tls.expiry_notice`); writes failing
    (the database or its disk: participants' answers refused until it is fixed).
    """
    state = request.app.state
    config = getattr(state, "config", None)
    said = [expiry_notice(getattr(config, "certificate", None))]
    failure = state.store.failing_writes()
    if failure is not None:
        since = _dt.datetime.fromtimestamp(failure[0], tz=_dt.timezone.utc)
        said.append(
            f"writes have failed since {since:%Y-%m-%d %H:%M:%S} UTC ({failure[1]}): every "
            "answer is refused (503) until the database or its disk is fixed"
        )
    return [s for s in said if s]


def health(request: Request) -> Response:
    """``{"status": "ok" | "degraded", "database_ms"}``: can the server work; 503 if not.

    A database ping (raises on error: 503); ``"degraded"`` (503) while writes fail (this
    worker's last write failed for the database or its disk, lately:
    :meth:`~...store.engine.Database.failing_writes`). ``database_ms``: the time the checks
    took. For the owner only (the admin token): ``writes`` (``{"failing_since",
    "reason"}``, while they fail) and ``worker``: ``{"pid", "process", "budget",
    "baseline", "searchers", "searcher_bytes", "pinned", "evictions", "rebuilds"}``
    (bytes; ``process`` as PSS, :mod:`..memory`; ``budget`` None without ``--memory``).
    """
    t0 = time.perf_counter()
    state = request.app.state
    state.store.ping()
    failure = state.store.failing_writes()
    ms = round(1e3 * (time.perf_counter() - t0), 2)
    body: dict = {"status": "ok" if failure is None else "degraded", "database_ms": ms}
    if is_owner(request):
        if failure is not None:
            body["writes"] = {"failing_since": failure[0], "reason": failure[1]}
        live = state.service.live.stats()
        body["worker"] = {
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
    return ok(body, status=200 if failure is None else 503)


def export(request: Request) -> Response:
    """Every recorded answer (:func:`~...collect.training.export_data`), for the admin only."""
    require_admin(request)
    state = request.app.state
    with state.store.snapshot():  # one read of the database, whatever is written meanwhile
        # (the server's clock check: as the server recorded it with the experiment)
        data = export_data(state.store, state.service.catalogue)
    return ok(data)


async def release(request: Request) -> Response:
    """``POST /api/admin/participants/{pid}/release`` ``{}`` + admin token: a fresh start.

    As ``tripletsearch participants release --participant``: the participant of the
    server's experiment is kept as they were, marked released, and their platform id is
    free (its next visit enrols anew). ``{"released": true, "id"}``; 404 for no such
    participant of this experiment, 409 when released already.
    """
    require_admin(request)
    schema.empty(await read_json(request))
    group = getattr(experiment_of(request), "group", None)
    pid, store = request.path_params["pid"], request.app.state.store
    row = store.participant(pid) if len(pid) <= 64 else None
    if row is None or row.study != group:
        raise NotFound("no such participant in this experiment")
    if not store.release_participant(pid, time.time()):
        raise Conflict(f"{pid} was released already")
    return ok({"released": True, "id": pid})


ROUTES = [
    Route("/api/health", health),
    Route("/api/admin/participants/{pid}/release", release, methods=["POST"]),
    Route("/api/admin/export", export),
]
