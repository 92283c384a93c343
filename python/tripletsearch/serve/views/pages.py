"""The page (``/``, ``/study``) and its assets (``/static/app.js``, ``/static/app.css``)."""

from __future__ import annotations

from functools import cache
from importlib import resources

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ..errors import NotFound
from . import HEADERS

__all__ = ["ROUTES", "CSP"]

# the page: its own scripts, styles and images only (no CDN, no inline script)
CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
_ASSETS = {"app.js": "text/javascript", "app.css": "text/css"}
_SERVE = __name__.rsplit(".", 2)[0]  # tripletsearch.serve, whose static/ holds the page


@cache
def _static(name: str) -> bytes:
    return resources.files(_SERVE).joinpath("static").joinpath(name).read_bytes()


def page(request: Request) -> Response:
    """The search page, or the study's page when the server runs a study or at ``/study``."""
    studies = request.app.state.study
    if request.url.path == "/study" and studies is None:
        raise NotFound("this server runs no study")
    kind = "study" if studies is not None or request.url.path == "/study" else "search"
    html = _static("index.html").decode("utf-8")
    return HTMLResponse(
        html.replace('data-page="search"', f'data-page="{kind}"'),
        headers={**HEADERS, "Content-Security-Policy": CSP},
    )


def asset(request: Request) -> Response:
    """A script or stylesheet of the page."""
    name = request.path_params["name"]
    if name not in _ASSETS:
        raise NotFound("not found")
    return Response(
        _static(name),
        media_type=_ASSETS[name],
        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
    )


ROUTES = [
    Route("/", page),
    Route("/study", page),
    Route("/static/{name}", asset),
]
