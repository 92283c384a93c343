"""``/api/study``: a study's facts, its participants' enrolment and their next search.

Deprecated: every experiment's participants are served by :mod:`.participants`
(``/api/experiment``, ``/api/participants/...``). These routes answer as before for one more
release, with ``Deprecation: true`` and a ``warnings`` entry naming their replacement.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import schema
from ...errors import NotFound
from ...participation.roster import roster
from ...study import StudyService
from ...study.checks import study_flags
from . import as_shown, bearer, limit, moved, ok, read_json, require_admin
from .admin import notices

__all__ = ["ROUTES"]


def _study(request: Request) -> StudyService:
    studies = request.app.state.study
    if studies is None:
        raise NotFound("this server runs no study")
    return studies


def info(request: Request) -> Response:
    """``GET /api/study``: title, consent text, ``n_choices``, ``n_slots``."""
    reply = schema.with_old_keys(_study(request).info())
    return ok(reply, warnings=moved("GET /api/study", "GET /api/experiment"))


async def enrol(request: Request) -> Response:
    """``POST /api/study/participants`` ``{"consent": true}`` -> 201 ``{"id", "token"}``.

    Enrols as ``POST /api/participants`` without a link does (``Participants.join``): a
    study whose file requires a platform id refuses it (400 naming the parameter).
    """
    studies = _study(request)
    schema.consent(await read_json(request))
    limit(request, request.app.state.enrolment_rate, "enrolments")
    reply = await run_in_threadpool(studies.join)
    return ok(reply, 201, moved("POST /api/study/participants", "POST /api/participants"))


async def next_search(request: Request) -> Response:
    """``POST /api/study/participants/{pid}/next`` ``{}`` + token: the current search."""
    studies = _study(request)
    schema.empty(await read_json(request))
    reply = await run_in_threadpool(studies.next, request.path_params["pid"], bearer(request))
    new = "POST /api/participants/{id}/next (its reply: the screen, its mode and history)"
    reply = as_shown(request, schema.with_old_keys(reply))  # (pictures only: no names)
    return ok(reply, warnings=moved("POST /api/study/.../next", new))


async def withdraw(request: Request) -> Response:
    """``POST /api/study/participants/{pid}/withdraw`` ``{}`` + token: stop taking part.

    ``{"withdrawn": true}``; the participant's answers are left out of report and export
    and deleted by ``tripletsearch prune``. Repeats answer the same.
    """
    studies = _study(request)
    schema.empty(await read_json(request))
    reply = await run_in_threadpool(studies.withdraw, request.path_params["pid"], bearer(request))
    new = "POST /api/participants/{id}/withdraw"
    return ok(
        {"withdrawn": reply["withdrawn"]}, warnings=moved("POST /api/study/.../withdraw", new)
    )


def dashboard(request: Request) -> Response:
    """``GET /api/admin/study`` + admin token: the study's participants' table.

    ``{"kind": "study", "title", "name", "participants", "refused", "notices"}``: one record
    per participant (:func:`~...roster.roster`: outcome, recorded code, platform id and
    parameters, duplicate, the study's checks' flags), withdrawn ones too; the second
    sessions of a platform id refused; the server's notices (:func:`~.admin.notices`); what
    ``/study/dashboard`` shows.
    """
    require_admin(request)
    studies = _study(request)

    s = studies.study
    ident = s.identity()

    # (the server's clock check: as the server recorded it with the study)
    flags = study_flags(studies.store, s.fingerprint)
    rows = roster(studies.store, s.fingerprint, flags=flags)
    refused = studies.store.refused_count(s.fingerprint)  # second sessions of an id
    board = {"kind": "study", "title": s.title, "name": ident.name, "participants": rows}
    return ok({**board, "refused": refused, "notices": notices(request)})  # (admin.notices)


ROUTES = [
    Route("/api/admin/study", dashboard),
    Route("/api/study", info),
    Route("/api/study/participants", enrol, methods=["POST"]),
    Route("/api/study/participants/{pid}/next", next_search, methods=["POST"]),
    Route("/api/study/participants/{pid}/withdraw", withdraw, methods=["POST"]),
]
