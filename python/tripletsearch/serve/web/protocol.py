"""The HTTP/1.1 connections of the service under uvicorn: bounded request heads, no slow heads.

uvicorn's httptools parser takes a request's line and headers of any size (a 300 MB header
was parsed and answered; 100 MB kept a worker busy for seconds) and waits for them as long
as the client likes (a "slow loris" holds a connection open by sending a byte now and
then). :class:`BoundedHttpTools` counts the bytes of each request's head as they arrive
and answers ``431`` past :data:`MAX_HEAD_BYTES`, and ``408`` when a head is not complete
within :data:`HEAD_TIMEOUT` seconds of its first byte (of the connection's opening for the
first request) or its body within :data:`BODY_TIMEOUT` seconds of the head's end; each
closes the connection. Idle connections between requests close after
uvicorn's keep-alive timeout (:data:`KEEP_ALIVE`). Without httptools (uvicorn's pure-Python
h11 parser), the head's size is bounded by h11 and the head's time is not.

:func:`uvicorn_options` is what ``tripletsearch serve`` gives uvicorn (and the tests).
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["MAX_HEAD_BYTES", "HEAD_TIMEOUT", "BODY_TIMEOUT", "KEEP_ALIVE", "uvicorn_options"]
# (BoundedHttpTools is module-level: uvicorn pickles it into its worker processes)

#: A request's line and headers, at most (bytes): cookies and tokens fit many times over.
MAX_HEAD_BYTES = 64 * 1024
#: Seconds a request's head may take to arrive.
HEAD_TIMEOUT = 10.0
#: Seconds a request's body may take to arrive after its head (its size is bounded too).
BODY_TIMEOUT = 10.0
#: Seconds an idle connection stays open between requests (uvicorn's keep-alive timeout).
KEEP_ALIVE = 5

_REASONS = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}


try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - uvicorn without its "standard" extras
    HttpToolsProtocol = None  # type: ignore[assignment, misc]


if HttpToolsProtocol is not None:

    class BoundedHttpTools(HttpToolsProtocol):
        """uvicorn's httptools protocol with a size and a time limit on each request's head."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            self._head: int | None = 0  # the current head's bytes; None: its headers are in
            self._deadline: asyncio.TimerHandle | None = None
            super().connection_made(transport)
            self._arm()

        def _arm(self) -> None:
            if self._deadline is None:
                self._deadline = self.loop.call_later(HEAD_TIMEOUT, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            self._refuse(408)

        def _refuse(self, status: int) -> None:
            self._disarm()
            if self.transport.is_closing():
                return
            self.transport.write(
                b"HTTP/1.1 %d %s\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                % (status, _REASONS[status])
            )
            self.transport.close()

        def data_received(self, data: bytes) -> None:
            if self.transport.is_closing():
                return
            if self._head is not None:
                self._arm()  # a new request's first bytes (the first one's: armed at opening)
                self._head += len(data)
                if self._head > MAX_HEAD_BYTES:
                    self._refuse(431)
                    return
            super().data_received(data)

        def on_headers_complete(self) -> None:
            self._head = None
            self._disarm()
            # the body (if any) must arrive within BODY_TIMEOUT of the head's end
            self._deadline = self.loop.call_later(BODY_TIMEOUT, self._too_slow)
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._disarm()  # the whole request is in: its handling is not timed here
            super().on_message_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._head = 0  # the next request's head: timed from its first byte

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)


def uvicorn_options() -> dict[str, Any]:
    """Keyword arguments of ``uvicorn.run`` / ``uvicorn.Config`` for the service's limits.

    ``proxy_headers`` off: uvicorn would believe ``X-Forwarded-For`` from 127.0.0.1 (any
    forwarder on the machine, and a client's own header through it); the service believes
    it from ``--trusted-proxy`` addresses only (:mod:`.limits`).
    """
    common = {"timeout_keep_alive": KEEP_ALIVE, "proxy_headers": False}
    if HttpToolsProtocol is None:  # pragma: no cover - uvicorn without httptools
        return {"http": "h11", "h11_max_incomplete_event_size": MAX_HEAD_BYTES, **common}
    return {"http": BoundedHttpTools, **common}
