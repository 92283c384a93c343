"""The owner's preview: the participant's pages of the running experiment, counted nowhere.

The page is ``/preview`` (:mod:`.pages`: the participants' page with a banner saying it is
a preview); the owner gives the admin token there (typed into its form, or in the link's
fragment, ``/preview#token=...``, which no browser sends to a server: the token is in no log
and no ``Referer``). The page then enrols a preview participant:

=========================================  ===============================================
``POST /api/preview/participants``         ``{}`` + admin token (``Authorization: Bearer``)
                                           -> 201 ``{"id", "token", "preview": true}``
=========================================  ===============================================

and walks through the consent, the instructions, the screens and the end (its code and
redirect included) with the participants' own routes (``/api/participants/{id}/...``) and
the preview participant's token, as any participant
(:meth:`~...participation.participants.Participants.enrol_preview`): their id begins
``PREVIEW-``, they are kept under the experiment's preview key (``preview:<key>``), which no
count, fit, export, report, dashboard, arm balance or plan numbering reads.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import schema
from . import ok, read_json, require_admin
from .participants import experiment_of

__all__ = ["ROUTES"]


async def enrol_preview(request: Request) -> Response:
    """``POST /api/preview/participants`` ``{}`` + admin token: 201 a preview participant.

    401 without the admin token or with another (404 when the server has none); 404 when
    it runs no experiment. No enrolment rate applies (the owner's).
    """
    require_admin(request)
    found = experiment_of(request)
    schema.empty(await read_json(request))
    return ok(await run_in_threadpool(found.enrol_preview), 201)


ROUTES = [Route("/api/preview/participants", enrol_preview, methods=["POST"])]
