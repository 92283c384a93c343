"""The app's ASGI middleware: a body size limit, no stack trace ever reaching a client, HSTS.

A database or disk failing (:func:`~..store.unavailable.unavailable`) is a 503 with
``Retry-After`` and one line of the log per request; any other exception is a bug: a 500,
its trace in the log. Over HTTPS, every reply says ``Strict-Transport-Security``
(:class:`StrictTransport`).
"""

from __future__ import annotations

import logging

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import TooLarge
from ..store.unavailable import unavailable
from .views import error

__all__ = ["BodyLimit", "StrictTransport", "MAX_BODY_BYTES", "UNAVAILABLE"]

log = logging.getLogger("tripletsearch.serve")
MAX_BODY_BYTES = 16 * 1024
UNAVAILABLE = "the server cannot record this now (its database is unavailable); try again"


class BodyLimit:
    """413 for request bodies over ``limit`` bytes; 503 or 500 for an unexpected exception.

    A client that disconnects mid-body is one line of the log at info (no trace, no reply).
    The database or its disk failing (locked, full, a server gone) is a 503 with
    ``Retry-After`` and one line of the log at warning (no trace: a full disk would write
    a hundred lines per request).

    The 413 by Content-Length or while streaming (a pure ASGI middleware: the body is never
    buffered beyond the limit). The 500 is ``{"error": "internal server error"}``, the
    exception logged with its trace on the server, the connection kept (Starlette's
    ServerErrorMiddleware would re-raise, and uvicorn then drops the keep-alive connection).
    """

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES):
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request through the app, within the limit."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    too_big = int(value) > self.limit
                except ValueError:
                    too_big = True
                if too_big:
                    await error(413, f"request body over {self.limit} bytes")(scope, receive, send)
                    return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.limit:  # the endpoint's error handler answers 413
                    raise TooLarge(f"request body over {self.limit} bytes")
            return msg

        started = False

        async def tracking(msg: Message) -> None:
            nonlocal started
            started = started or msg["type"] == "http.response.start"
            await send(msg)

        try:
            await self.app(scope, limited, tracking)
        except ClientDisconnect:  # the client went mid-body: nothing to answer, no bug
            log.info("client left mid-request: %s %s", scope.get("method"), scope.get("path"))
        except Exception as exc:
            trouble = unavailable(exc)
            if trouble is None:  # a bug: logged here, never shown to the client
                log.exception("internal error on %s %s", scope.get("method"), scope.get("path"))
                if not started:
                    await error(500, "internal server error")(scope, receive, send)
                return
            reason, wait = trouble
            log.warning(
                "unavailable (503) %s %s: %s", scope.get("method"), scope.get("path"), reason
            )
            if not started:
                reply = error(503, UNAVAILABLE)
                reply.headers["Retry-After"] = str(wait)
                await reply(scope, receive, send)


class StrictTransport:
    """``Strict-Transport-Security: max-age=<max_age>`` on every reply served over HTTPS.

    HTTPS: the connection's own scheme (uvicorn's TLS, ``serve --ssl-certfile``); a
    request over plain HTTP gets none, nor one a TLS proxy forwards over plain HTTP
    (uvicorn believes no ``X-Forwarded-Proto``: :func:`~.protocol.uvicorn_options`): the
    proxy sets its own. ``max_age`` 0: never sent.
    """

    def __init__(self, app: ASGIApp, max_age: int = 0):
        self.app, self.max_age = app, int(max_age)
        self.header = (b"strict-transport-security", b"max-age=%d" % self.max_age)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request; the header added to its reply over HTTPS."""
        if scope["type"] != "http" or scope.get("scheme") != "https" or self.max_age <= 0:
            await self.app(scope, receive, send)
            return

        async def sending(msg: Message) -> None:
            if msg["type"] == "http.response.start":
                msg = {**msg, "headers": [*msg.get("headers", []), self.header]}
            await send(msg)

        await self.app(scope, receive, sending)
