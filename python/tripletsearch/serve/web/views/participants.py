"""``/api/experiment`` and ``/api/participants``: every experiment's participants, one surface.

The server's experiment (a study, a collect file: an
:class:`~...participation.participants.Experiment`) gives its public facts at ``GET
/api/experiment``; a participant enrols after consent and then, with their token
(``Authorization: Bearer``), asks for their current screen, answers it, takes an answer
back (when the kind allows it), stops taking part, and reads the end of their part:

=========================================  ===============================================
``POST /api/participants``                 ``{"consent": true, "platform"?}`` -> 201
                                           ``{"id", "token"}``
``POST /api/participants/resume``          ``{"platform"}`` -> ``{"id", "token",
                                           "resumed": true, "end"}`` (an ended part's)
``POST /api/participants/{id}/next``       ``{}``: the current screen (started when new)
``POST /api/participants/{id}/answer``     ``{"screen", "choice", "found"?, "slot"?,
                                           "response_ms"?}``: recorded; what follows
``POST /api/participants/{id}/undo``       ``{"screen"}``: the last answer taken back
``POST /api/participants/{id}/withdraw``   ``{}``: ``{"withdrawn": true}``
``GET /api/participants/{id}/debrief``     the end of their part (also ``POST {}``)
=========================================  ===============================================

``next``, ``answer`` and ``undo`` reply in one shape for every kind
(:meth:`~...participation.participants.Participants.current`): the screen as stored (its
``number`` and what it shows), the ``mode`` that draws it, the part (``slot`` of
``n_slots``, its ``target``) and ``n_queries``; or ``{"done": true, "debrief", ...}``.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import schema
from ...errors import NotFound
from ...participation.participants import Experiment
from . import bearer, limit, names_hidden, ok, read_json, without_names

__all__ = ["ROUTES", "KINDS", "experiment_of"]

#: The app's state attributes that may hold the server's experiment, one per kind (a new
#: kind of experiment: its attribute here, its service an ``Experiment``).
KINDS = ("study", "collect")


def experiment_of(request: Request) -> Experiment:
    """The experiment the server runs (NotFound when it runs none)."""
    for kind in KINDS:
        found = getattr(request.app.state, kind, None)
        if found is not None:
            return found
    raise NotFound("this server runs no experiment")


def info(request: Request) -> Response:
    """``GET /api/experiment``: ``kind``, title, consent, the kind's facts, the page's limits."""
    return ok(experiment_of(request).experiment())


async def enrol(request: Request) -> Response:
    """``POST /api/participants`` ``{"consent": true, "platform"?, "platform_id"?}``: 201.

    ``{"id", "token"}``; ``"resumed": true`` when the link's platform id was enrolled
    already (that participant, a new token: see ``Participants.join``).
    """
    found = experiment_of(request)
    platform_id, link = schema.enrolment_link(await read_json(request))
    limit(request, request.app.state.enrolment_rate, "enrolments")
    return ok(await run_in_threadpool(found.join, link, platform_id), 201)


async def resume(request: Request) -> Response:
    """``POST /api/participants/resume`` ``{"platform"}``: an ended part's participant.

    One who finished (or withdrew) from this link's platform id and visit sees their end
    on a new device without consenting again (``Participants.rejoin``); 404 for anyone
    else, nothing recorded (the page then asks consent).
    """
    found = experiment_of(request)
    link = schema.resume_link(await read_json(request))
    limit(request, request.app.state.enrolment_rate, "enrolments")
    return ok(await run_in_threadpool(found.rejoin, link))


async def next_screen(request: Request) -> Response:
    """``POST /api/participants/{pid}/next`` ``{}`` + token: the current screen, or the end."""
    found = experiment_of(request)
    schema.empty(await read_json(request))
    reply = await run_in_threadpool(found.current, request.path_params["pid"], bearer(request))
    return ok(without_names(reply) if names_hidden(request) else reply)


async def answer(request: Request) -> Response:
    """``POST /api/participants/{pid}/answer`` + token: record the answer; what follows."""
    found = experiment_of(request)
    body = schema.part_answer(await read_json(request))
    pid, token = request.path_params["pid"], bearer(request)
    reply = await run_in_threadpool(found.respond, pid, token, body.answer, body.slot)
    return ok(without_names(reply) if names_hidden(request) else reply)


async def undo(request: Request) -> Response:
    """``POST /api/participants/{pid}/undo`` ``{"screen"}`` + token: the last answer taken back."""
    found = experiment_of(request)
    body = schema.undo(await read_json(request))
    pid, token = request.path_params["pid"], bearer(request)
    reply = await run_in_threadpool(found.undo, pid, token, body)
    return ok(without_names(reply) if names_hidden(request) else reply)


async def withdraw(request: Request) -> Response:
    """``POST /api/participants/{pid}/withdraw`` ``{}`` + token: ``{"withdrawn": true}``.

    The participant's answers are left out of what is computed from the database (fits,
    report, export); repeats answer the same.
    """
    found = experiment_of(request)
    schema.empty(await read_json(request))
    pid, token = request.path_params["pid"], bearer(request)
    return ok(await run_in_threadpool(found.withdraw, pid, token))


async def debrief(request: Request) -> Response:
    """``GET|POST /api/participants/{pid}/debrief`` + token: the end of the participant's part.

    ``{"done": true, "debrief", "n_slots", "completion_code"?, "redirect"?}``; 409 before it.
    """
    found = experiment_of(request)
    if request.method == "POST":
        schema.empty(await read_json(request))
    pid, token = request.path_params["pid"], bearer(request)
    return ok(await run_in_threadpool(found.debrief, pid, token))


ROUTES = [
    Route("/api/experiment", info),
    Route("/api/participants", enrol, methods=["POST"]),
    Route("/api/participants/resume", resume, methods=["POST"]),
    Route("/api/participants/{pid}/next", next_screen, methods=["POST"]),
    Route("/api/participants/{pid}/answer", answer, methods=["POST"]),
    Route("/api/participants/{pid}/undo", undo, methods=["POST"]),
    Route("/api/participants/{pid}/withdraw", withdraw, methods=["POST"]),
    Route("/api/participants/{pid}/debrief", debrief, methods=["GET", "POST"]),
]
