"""``/api/sessions``: start a search, answer its screens, undo, read it.

On a server that runs an experiment (a study, a collect file) every session is a
participant's: answering, undoing or reading one here is deprecated (replies carry
``Deprecation: true`` and a ``warnings`` entry): its participant's routes do it
(:mod:`.participants`).
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import schema
from ...service.search import SearchService
from . import as_shown, bearer, limit, moved, ok, read_json

__all__ = ["ROUTES"]


def _service(request: Request) -> SearchService:
    return request.app.state.service


def _participants(request: Request, old: str, new: str) -> tuple[str, ...]:
    """The warnings of ``old`` on a server of participants (its sessions are theirs)."""
    state = request.app.state
    if state.study is None and state.collect is None:
        return ()
    return moved(old, new)


async def create(request: Request) -> Response:
    """``POST /api/sessions`` ``{"mode", "n_choices"}`` -> 201 ``{"id", "token", "screen"}``."""
    new = schema.new_session(await read_json(request))
    limit(request, request.app.state.session_rate, "new sessions")
    reply = await run_in_threadpool(_service(request).create, new)
    return ok(reply, 201, new.warnings)


async def answer(request: Request) -> Response:
    """``POST /api/sessions/{sid}/answer`` ``{"screen", "choice", "found"}`` + token.

    On a server of participants, the last answer of a participant's last part ends their
    part finished, as on their own routes (``Participants.settle``).
    """
    body = schema.answer(await read_json(request))
    sid = request.path_params["sid"]
    reply = await run_in_threadpool(_service(request).answer, sid, bearer(request), body)
    found = request.app.state.study or request.app.state.collect
    if reply["done"] and found is not None:  # a participant's last: their part ends
        await run_in_threadpool(found.settle, sid)
    old, new = "POST /api/sessions/{id}/answer", "POST /api/participants/{id}/answer"
    reply = as_shown(request, schema.with_old_keys(reply))  # (pictures only: no names)
    return ok(reply, warnings=_participants(request, old, new))


async def undo(request: Request) -> Response:
    """``POST /api/sessions/{sid}/undo`` ``{"screen"}`` + token."""
    body = schema.undo(await read_json(request))
    reply = await run_in_threadpool(
        _service(request).undo, request.path_params["sid"], bearer(request), body
    )
    old, new = "POST /api/sessions/{id}/undo", "POST /api/participants/{id}/undo"
    reply = as_shown(request, schema.with_old_keys(reply))
    return ok(reply, warnings=_participants(request, old, new))


async def leave(request: Request) -> Response:
    """``POST /api/sessions/{sid}/leave`` ``{}`` + token: end it unfinished (abandoned).

    ``{"done": true, "left": true}``, or ``"left": false`` when it had ended before.
    """
    schema.empty(await read_json(request))
    reply = await run_in_threadpool(
        _service(request).leave, request.path_params["sid"], bearer(request)
    )
    return ok(reply)


def get(request: Request) -> Response:
    """``GET /api/sessions/{sid}`` + token: the session, its current screen, its history."""
    reply = _service(request).get(request.path_params["sid"], bearer(request))
    old, new = "GET /api/sessions/{id}", "POST /api/participants/{id}/next"
    reply = as_shown(request, schema.with_old_keys(reply))
    return ok(reply, warnings=_participants(request, old, new))


ROUTES = [
    Route("/api/sessions", create, methods=["POST"]),
    Route("/api/sessions/{sid}/answer", answer, methods=["POST"]),
    Route("/api/sessions/{sid}/undo", undo, methods=["POST"]),
    Route("/api/sessions/{sid}/leave", leave, methods=["POST"]),
    Route("/api/sessions/{sid}", get),
]
