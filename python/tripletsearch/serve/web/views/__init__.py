"""The HTTP side of the service: one module per resource, each with its ``ROUTES``.

``sessions`` (the JSON API of searches), ``participants`` (every experiment's
participants: ``/api/experiment``, ``/api/participants``), ``study`` and ``collect`` (their
deprecated routes, and the collect dashboard's data), ``catalogue`` (its metadata, pages of
items, images), ``admin`` (health, the export) and ``pages`` (the page and its assets). A
view parses its request with :mod:`..schema`, calls the service (in the thread pool:
database and native calls block) and replies with :func:`ok`; errors are the service's
domain errors, mapped to statuses by the app.
"""

from __future__ import annotations

import hmac
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from ...errors import NotFound, Unauthorized, UnsupportedMedia
from ...schema import parse_json
from ..limits import RateLimiter, client_address, rate_key

__all__ = [
    "HEADERS",
    "ok",
    "error",
    "bearer",
    "read_json",
    "limit",
    "require_admin",
    "moved",
    "as_shown",
]

HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",  # framed by no site (the page's CSP: frame-ancestors 'none')
}


def ok(data: Any, status: int = 200, warnings: tuple[str, ...] = ()) -> JSONResponse:
    """A JSON reply; ``warnings`` (old field names used) go in it, with ``Deprecation: true``."""
    headers = dict(HEADERS)
    if warnings:
        data = {**data, "warnings": list(warnings)}
        headers["Deprecation"] = "true"
    return JSONResponse(data, status_code=status, headers=headers)


def moved(old: str, new: str) -> tuple[str, ...]:
    """The ``warnings`` of a deprecated route ``old`` (for :func:`ok`): use ``new``.

    A deprecated route answers as before for one more release, with these warnings and
    ``Deprecation: true``.
    """
    return (f"{old} is deprecated: use {new}; the old route is removed in the next release",)


def error(status: int, message: str, details: dict | None = None) -> JSONResponse:
    """``{"error": message}`` (and the keys of ``details``) with ``status``."""
    body = {**(details or {}), "error": message}
    return JSONResponse(body, status_code=status, headers=HEADERS)


def names_hidden(request: Request) -> bool:
    """Whether the server's experiment shows pictures only (``show_names = false``)."""
    for kind in ("study", "collect"):
        found = getattr(request.app.state, kind, None)
        if found is not None:
            return found.facts().get("show_names", True) is False
    return False


def without_names(value: Any) -> Any:
    """``value`` (a reply) with every item record's ``name`` left out.

    An item record: a dict with an ``id`` and a ``name`` beside its ``hex`` or ``image``
    (:meth:`~...catalogue.Catalogue.item`). For an experiment that shows pictures only: its
    names never reach the browser (a name would tell a picture's answer).
    """
    if isinstance(value, list):
        return [without_names(v) for v in value]
    if not isinstance(value, dict):
        return value
    item = "id" in value and "name" in value and ("hex" in value or "image" in value)
    return {k: without_names(v) for k, v in value.items() if not (item and k == "name")}


def as_shown(request: Request, reply: Any) -> Any:
    """``reply`` as the experiment shows items: without names when it shows pictures only."""
    return without_names(reply) if names_hidden(request) else reply


def bearer(request: Request) -> str | None:
    """The request's bearer token (``Authorization: Bearer <token>``), or None."""
    h = request.headers.get("authorization", "")
    scheme, _, value = h.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


async def read_json(request: Request) -> Any:
    """The request body's JSON (None when empty).

    The request must say ``Content-Type: application/json`` (with or without a charset),
    even with an empty body: what a form on another site cannot send without a CORS
    preflight (:class:`~..errors.UnsupportedMedia`, 415).
    """
    kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind != "application/json":
        raise UnsupportedMedia(f"content-type: expected application/json, got {kind or 'none'}")
    return parse_json(await request.body())


def limit(request: Request, rate: RateLimiter, what: str) -> None:
    """Count one ``what`` of the request's client address (429 past the rate)."""
    rate.hit(rate_key(client_address(request, request.app.state.limits.trusted_proxies)), what)


def require_admin(request: Request) -> None:
    """Let only the admin token's bearer through (404 when the server has none, else 401)."""
    admin_token = request.app.state.admin_token
    token = bearer(request)
    if not admin_token:
        raise NotFound("the admin export is off (start the server with a token)")
    if not token or not hmac.compare_digest(token.encode(), admin_token.encode()):
        raise Unauthorized("missing or wrong admin token")
