"""``/api/collect``: a collect file's facts, its participants' enrolment, queries, answers.

Deprecated but the dashboard's data (``/api/admin/collect``): every experiment's
participants are served by :mod:`.participants` (``/api/experiment``,
``/api/participants/...``). These routes answer as before for one more release, with
``Deprecation: true`` and a ``warnings`` entry naming their replacement.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import schema
from ...collect.dashboard import collect_dashboard
from ...collect.service import CollectService
from ...errors import NotFound
from . import as_shown, bearer, limit, moved, ok, read_json, require_admin
from .admin import notices

__all__ = ["ROUTES"]


def _collect(request: Request) -> CollectService:
    found = request.app.state.collect
    if found is None:
        raise NotFound("this server collects no triplets")
    return found


def info(request: Request) -> Response:
    """``GET /api/collect``: title, instructions, consent text, ``k``, ``max_queries``."""
    return ok(_collect(request).info(), warnings=moved("GET /api/collect", "GET /api/experiment"))


async def enrol(request: Request) -> Response:
    """``POST /api/collect/participants`` ``{"consent": true}``: 201 ``{"id", "token"}``.

    An optional ``platform_id`` names the participant on a crowdsourcing platform. Enrols
    as ``POST /api/participants`` with that id alone does (``Participants.join``): checked
    as the file's platform id, refused (400 naming the parameter) when the file requires
    one and none is given.
    """
    collect = _collect(request)
    platform_id = schema.collect_consent(await read_json(request))
    limit(request, request.app.state.enrolment_rate, "enrolments")
    reply = await run_in_threadpool(collect.join, None, platform_id)
    return ok(reply, 201, moved("POST /api/collect/participants", "POST /api/participants"))


async def next_query(request: Request) -> Response:
    """``POST /api/collect/participants/{pid}/next`` ``{}`` + token: the current query."""
    collect = _collect(request)
    schema.empty(await read_json(request))
    reply = await run_in_threadpool(collect.next, request.path_params["pid"], bearer(request))
    new = "POST /api/participants/{id}/next (its reply: the screen as stored, its mode)"
    return ok(as_shown(request, reply), warnings=moved("POST /api/collect/.../next", new))


async def answer(request: Request) -> Response:
    """``POST /api/collect/participants/{pid}/answer`` + token: record, then what next.

    ``{"screen", "choice"}`` or ``{"screen", "skip": true}``, optional ``response_ms``;
    the reply: the next query, or ``{"done": true, "debrief", ...}``.
    """
    collect = _collect(request)
    body = schema.collect_answer(await read_json(request))
    reply = await run_in_threadpool(
        collect.answer, request.path_params["pid"], bearer(request), body
    )
    new = 'POST /api/participants/{id}/answer ({"screen", "choice": null} for a skip)'
    return ok(as_shown(request, reply), warnings=moved("POST /api/collect/.../answer", new))


async def withdraw(request: Request) -> Response:
    """``POST /api/collect/participants/{pid}/withdraw`` ``{}`` + token: stop taking part.

    ``{"withdrawn": true}``; the participant's answers are left out of fits and export.
    """
    collect = _collect(request)
    schema.empty(await read_json(request))
    reply = await run_in_threadpool(collect.withdraw, request.path_params["pid"], bearer(request))
    new = "POST /api/participants/{id}/withdraw"
    return ok(
        {"withdrawn": reply["withdrawn"]}, warnings=moved("POST /api/collect/.../withdraw", new)
    )


async def dashboard(request: Request) -> Response:
    """``GET /api/admin/collect`` + admin token: the dashboard (:mod:`...collect.dashboard`)."""
    require_admin(request)
    collect = _collect(request)

    # (the server's clock check: as the server recorded it with the collect)
    board = await run_in_threadpool(collect_dashboard, collect.store, collect.config)
    return ok({**board, "notices": notices(request)})  # (the server's own: admin.notices)


ROUTES = [
    Route("/api/admin/collect", dashboard),
    Route("/api/collect", info),
    Route("/api/collect/participants", enrol, methods=["POST"]),
    Route("/api/collect/participants/{pid}/next", next_query, methods=["POST"]),
    Route("/api/collect/participants/{pid}/answer", answer, methods=["POST"]),
    Route("/api/collect/participants/{pid}/withdraw", withdraw, methods=["POST"]),
]
