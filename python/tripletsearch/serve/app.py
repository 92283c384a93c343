"""The ASGI app (Starlette) of the search service.

The JSON API of :class:`~.service.SearchService`, a page that drives it, the catalogue's
images, and an admin export behind a token.

Starlette rather than FastAPI: the API is six small JSON endpoints whose validation the
service does itself (the same checks serve every caller), so FastAPI's pydantic layer
would be a second schema to keep in step, and Starlette's plain ``def`` endpoints run in
its thread pool, which is what the synchronous database and native calls need.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .catalogue import Catalogue
from .export import export_data
from .service import SearchService, ServiceError
from .store import Store
from .study import Study, StudyService, load_study

__all__ = ["create_app", "MAX_BODY_BYTES"]

# the page: its own scripts, styles and images only (no CDN, no inline script)
_CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)

log = logging.getLogger("tripletsearch.serve")
MAX_BODY_BYTES = 16 * 1024
_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=_HEADERS)


def _ok(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=_HEADERS)


class BodyLimit:
    """413 for request bodies over ``limit`` bytes; 500 for an unexpected exception.

    The 413 by Content-Length or while streaming (a pure ASGI middleware: the body is never
    buffered beyond the limit). The 500 is ``{"error": "internal server error"}``, the
    exception logged with its trace on the server, the connection kept.
    """

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES):
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
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
                    await _error(413, f"request body over {self.limit} bytes")(scope, receive, send)
                    return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.limit:  # the endpoint's error handler answers 413
                    raise ServiceError(413, f"request body over {self.limit} bytes")
            return msg

        started = False

        async def tracking(msg: Message) -> None:
            nonlocal started
            started = started or msg["type"] == "http.response.start"
            await send(msg)

        try:
            await self.app(scope, limited, tracking)
        except Exception:  # a bug: logged here, never shown to the client
            log.exception("internal error on %s %s", scope.get("method"), scope.get("path"))
            if not started:
                await _error(500, "internal server error")(scope, receive, send)


def _bearer(request: Request) -> str | None:
    h = request.headers.get("authorization", "")
    scheme, _, value = h.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


async def _json(request: Request) -> Any:
    raw = await request.body()
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ServiceError(400, "body: not valid JSON") from None


def create_app(
    catalogue: Catalogue,
    database: str | None = None,
    *,
    admin_token: str | None = None,
    gamma: float | str = 3.0,
    max_queries: int = 300,
    setup: bool = True,
    study: Study | None = None,
) -> Starlette:
    """The search service's ASGI app for ``catalogue``.

    Parameters
    ----------
    catalogue : Catalogue
        From :func:`~.catalogue.load_catalogue` or :func:`~.catalogue.demo_catalogue`.
    database : str, optional
        SQLAlchemy URL; default ``sqlite:///tripletsearch-sessions.sqlite`` (the working
        directory). PostgreSQL: ``postgresql+psycopg://user:pw@host/db``.
    admin_token : str, optional
        Bearer token of ``GET /api/admin/export`` (None: the endpoint is off).
    gamma : float or "auto"
        The gamma-CKL power assumed of people in find mode, or "auto": inferred per person
        while they search.
    max_queries : int
        Screens per session before it ends by itself.
    setup : bool
        Create or upgrade the tables now (one process); False when the tables were set
        up before several workers started (``tripletsearch serve`` does that).
    study : Study, optional
        Run this study (:func:`~.study.load_study`; its catalogue replaces
        ``catalogue``): ``/`` and ``/study`` are the participants' page, free sessions are
        refused.
    """
    if study is not None:
        catalogue = study.catalogue
    store = Store(database)
    if setup:
        store.setup()
    else:
        store.check()
    service = SearchService(catalogue, store, gamma=gamma, max_queries=max_queries)
    studies = None if study is None else StudyService(study, service)

    def health(request: Request) -> Response:
        return _ok(service.health())

    def catalogue_items(request: Request) -> Response:
        return _ok(service.catalogue_items())

    async def create_session(request: Request) -> Response:
        body = await _json(request)
        return _ok(await run_in_threadpool(service.create, body), 201)

    async def answer(request: Request) -> Response:
        body = await _json(request)
        reply = await run_in_threadpool(
            service.answer, request.path_params["sid"], _bearer(request), body
        )
        return _ok(reply)

    async def undo(request: Request) -> Response:
        body = await _json(request)
        reply = await run_in_threadpool(
            service.undo, request.path_params["sid"], _bearer(request), body
        )
        return _ok(reply)

    def get_session(request: Request) -> Response:
        return _ok(service.get(request.path_params["sid"], _bearer(request)))

    def admin_export(request: Request) -> Response:
        token = _bearer(request)
        if not admin_token:
            raise ServiceError(404, "the admin export is off (start the server with a token)")
        if not token or not hmac.compare_digest(token.encode(), admin_token.encode()):
            raise ServiceError(401, "missing or wrong admin token")
        return _ok(export_data(store, catalogue))

    def image(request: Request) -> Response:
        try:
            i = int(request.path_params["item"])
        except ValueError:
            raise ServiceError(404, "no such image") from None
        path = catalogue.image_path(i)
        if path is None:
            raise ServiceError(404, "no such image")
        return FileResponse(path, headers={"X-Content-Type-Options": "nosniff"})

    static = resources.files(__package__).joinpath("static")
    html = static.joinpath("index.html").read_text("utf-8")
    assets = {
        name: (static.joinpath(name).read_bytes(), kind)
        for name, kind in (("app.js", "text/javascript"), ("app.css", "text/css"))
    }

    def page(request: Request) -> Response:
        kind = "study" if studies is not None or request.url.path == "/study" else "search"
        if request.url.path == "/study" and studies is None:
            raise ServiceError(404, "this server runs no study")
        return HTMLResponse(
            html.replace('data-page="search"', f'data-page="{kind}"'),
            headers={**_HEADERS, "Content-Security-Policy": _CSP},
        )

    def asset(request: Request) -> Response:
        found = assets.get(request.path_params["name"])
        if found is None:
            raise ServiceError(404, "not found")
        return Response(
            found[0],
            media_type=found[1],
            headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
        )

    def require_study() -> StudyService:
        if studies is None:
            raise ServiceError(404, "this server runs no study")
        return studies

    def study_info(request: Request) -> Response:
        return _ok(require_study().info())

    async def enrol(request: Request) -> Response:
        body = await _json(request)
        return _ok(await run_in_threadpool(require_study().enrol, body), 201)

    async def study_next(request: Request) -> Response:
        body = await _json(request)
        reply = await run_in_threadpool(
            require_study().next, request.path_params["pid"], _bearer(request), body
        )
        return _ok(reply)

    async def service_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ServiceError)
        return _error(exc.status, exc.message)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return _error(exc.status_code, str(exc.detail).lower())

    async def value_error(request: Request, exc: Exception) -> Response:
        # the library's own checks (a bad stored value): the message, never a trace
        log.warning("refused %s %s: %s", request.method, request.url.path, exc)
        return _error(400, str(exc))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        store.dispose()

    routes = [
        Route("/", page),
        Route("/study", page),
        Route("/static/{name}", asset),
        Route("/api/study", study_info),
        Route("/api/study/participants", enrol, methods=["POST"]),
        Route("/api/study/participants/{pid}/next", study_next, methods=["POST"]),
        Route("/api/health", health),
        Route("/api/catalogue", catalogue_items),
        Route("/api/sessions", create_session, methods=["POST"]),
        Route("/api/sessions/{sid}/answer", answer, methods=["POST"]),
        Route("/api/sessions/{sid}/undo", undo, methods=["POST"]),
        Route("/api/sessions/{sid}", get_session),
        Route("/api/admin/export", admin_export),
        Route("/images/{item}", image),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={
            ServiceError: service_error,
            HTTPException: http_error,
            ValueError: value_error,
        },
        middleware=[Middleware(BodyLimit, limit=MAX_BODY_BYTES)],
        lifespan=lifespan,
    )
    app.state.service = service
    app.state.store = store
    return app


def app_from_env() -> ASGIApp:
    """The app of a uvicorn worker started by ``tripletsearch serve --workers N``.

    The configuration in ``TRIPLETSEARCH_SERVE``, the tables set up by the parent.
    """
    from .catalogue import demo_catalogue, load_catalogue

    cfg = json.loads(os.environ["TRIPLETSEARCH_SERVE"])
    study = load_study(cfg["study"]) if cfg.get("study") else None
    if study is not None:
        cat = study.catalogue
    elif cfg.get("demo"):
        cat = demo_catalogue(cfg["demo"])
    else:
        cat = load_catalogue(cfg["catalogue"])
    return create_app(
        cat,
        cfg["database"],
        admin_token=os.environ.get("TRIPLETSEARCH_ADMIN_TOKEN") or None,
        gamma=cfg["gamma"],
        max_queries=cfg["max_queries"],
        setup=False,
        study=study,
    )
