"""The page (``/``, ``/study``, ``/collect``, the owner's ``/preview``), the dashboard, assets.

The assets are the ES modules and the stylesheet in ``static/`` (``/static/main.js``,
``/static/modes/find.js``, ``/static/app.css``, ...).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from importlib import resources
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ...errors import NotFound
from . import HEADERS

if TYPE_CHECKING:
    from importlib.abc import Traversable

__all__ = ["ROUTES", "CSP"]

# the page: its own scripts, styles and images only (no CDN, no inline script)
CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
_TYPES = {".js": "text/javascript", ".css": "text/css"}
_SERVE = __name__.rsplit(".", 3)[0]  # tripletsearch.serve, whose static/ holds the page


def _files(folder: Traversable, prefix: str = "") -> Iterator[str]:
    for entry in folder.iterdir():
        if entry.is_dir():
            yield from _files(entry, f"{prefix}{entry.name}/")
        elif PurePosixPath(entry.name).suffix in _TYPES:
            yield prefix + entry.name


@cache
def _assets() -> dict[str, str]:
    """The allow-list: the scripts and stylesheets in static/ and their media types.

    Keyed by their paths relative to static/; nothing else is served from there, so no
    request names a file outside it.
    """
    static = resources.files(_SERVE).joinpath("static")
    return {name: _TYPES[PurePosixPath(name).suffix] for name in sorted(_files(static))}


@cache
def _static(name: str) -> bytes:
    path = resources.files(_SERVE).joinpath("static")
    for part in name.split("/"):
        path = path.joinpath(part)
    return path.read_bytes()


def page(request: Request) -> Response:
    """The search page, or a study's or collect file's participants' page.

    The participants' page is served at ``/`` when the server runs a study (collects
    triplets), and at ``/study`` (``/collect``); ``/preview`` is it as the owner's preview
    (``data-page="preview"``: :mod:`.preview`), on a server that runs either.
    """
    studies, collect = request.app.state.study, request.app.state.collect
    path = request.url.path
    if path == "/preview" and studies is None and collect is None:
        raise NotFound("this server runs no study or collect to preview")
    if path == "/study" and studies is None:
        raise NotFound("this server runs no study")
    if path == "/collect" and collect is None:
        raise NotFound("this server collects no triplets")
    kind = "search"
    if path == "/preview":
        kind = "preview"
    elif studies is not None or path == "/study":
        kind = "study"
    elif collect is not None:
        kind = "collect"
    html = _static("index.html").decode("utf-8")
    return HTMLResponse(
        html.replace('data-page="search"', f'data-page="{kind}"'),
        headers={**HEADERS, "Content-Security-Policy": CSP},
    )


def dashboard(request: Request) -> Response:
    """The owner's dashboard of a collect or a study (``/collect|study/dashboard``).

    Its data: ``/api/admin/collect``, ``/api/admin/study`` (admin token).
    """
    if request.url.path == "/study/dashboard":
        if request.app.state.study is None:
            raise NotFound("this server runs no study")
    elif request.app.state.collect is None:
        raise NotFound("this server collects no triplets")
    return HTMLResponse(
        _static("dashboard.html").decode("utf-8"),
        headers={**HEADERS, "Content-Security-Policy": CSP},
    )


def asset(request: Request) -> Response:
    """A script or stylesheet of the page (one of the allow-list's)."""
    name = request.path_params["name"]
    media_type = _assets().get(name)
    if media_type is None:
        raise NotFound("not found")
    return Response(
        _static(name),
        media_type=media_type,
        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
    )


ROUTES = [
    Route("/", page),
    Route("/study", page),
    Route("/collect", page),
    Route("/preview", page),
    Route("/collect/dashboard", dashboard),
    Route("/study/dashboard", dashboard),
    Route("/static/{name:path}", asset),
]
