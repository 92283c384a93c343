"""``/api/study``: a study's facts, its participants' enrolment and their next search."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import schema
from ...errors import NotFound
from ...study import StudyService
from . import bearer, limit, ok, read_json

__all__ = ["ROUTES"]


def _study(request: Request) -> StudyService:
    studies = request.app.state.study
    if studies is None:
        raise NotFound("this server runs no study")
    return studies


def info(request: Request) -> Response:
    """``GET /api/study``: title, consent text, ``n_choices``, ``n_slots``."""
    return ok(schema.with_old_keys(_study(request).info()))


async def enrol(request: Request) -> Response:
    """``POST /api/study/participants`` ``{"consent": true}`` -> 201 ``{"id", "token"}``."""
    studies = _study(request)
    schema.consent(await read_json(request))
    limit(request, request.app.state.enrolment_rate, "enrolments")
    return ok(await run_in_threadpool(studies.enrol), 201)


async def next_search(request: Request) -> Response:
    """``POST /api/study/participants/{pid}/next`` ``{}`` + token: the current search."""
    studies = _study(request)
    schema.empty(await read_json(request))
    reply = await run_in_threadpool(studies.next, request.path_params["pid"], bearer(request))
    return ok(schema.with_old_keys(reply))


async def withdraw(request: Request) -> Response:
    """``POST /api/study/participants/{pid}/withdraw`` ``{}`` + token: stop taking part.

    ``{"withdrawn": true}``; the participant's answers are left out of report and export
    and deleted by ``tripletsearch prune``. Repeats answer the same.
    """
    studies = _study(request)
    schema.empty(await read_json(request))
    reply = await run_in_threadpool(studies.withdraw, request.path_params["pid"], bearer(request))
    return ok(reply)


ROUTES = [
    Route("/api/study", info),
    Route("/api/study/participants", enrol, methods=["POST"]),
    Route("/api/study/participants/{pid}/next", next_search, methods=["POST"]),
    Route("/api/study/participants/{pid}/withdraw", withdraw, methods=["POST"]),
]
