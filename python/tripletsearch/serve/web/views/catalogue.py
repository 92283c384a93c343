"""``/api/catalogue`` (metadata and a page of items) and the items' images."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from ... import schema
from ...catalogue import raster_type
from ...catalogue.stimuli import MANIFEST_KEY, StimulusGuard
from ...errors import Conflict, Invalid, NotFound
from ...service.search import SearchService
from . import names_hidden, ok, without_names

__all__ = ["ROUTES"]


def catalogue(request: Request) -> Response:
    """``GET /api/catalogue?offset=0&limit=100&q=text``.

    ``{"title", "n_items", "modes", "n_choices": {mode: {"min", "max", "default"}},
    "offset", "limit", "q", "n_matches", "items": [...]}``: the catalogue's metadata, the
    modes new sessions may take with their screen sizes, and ``limit`` items (at most 1000;
    0: none) from ``offset`` on, of the ``n_matches`` whose names contain ``q``
    (case-insensitive).
    """
    page = schema.catalogue_page(
        {k: request.query_params.getlist(k) for k in request.query_params.keys()}
    )
    service: SearchService = request.app.state.service
    cat = service.catalogue
    hidden = names_hidden(request)  # pictures only: no name, and none searched by
    if hidden and page.q:
        raise Invalid("q: this experiment shows pictures only (no names to search)")
    n_matches, ids = cat.page(page.offset, page.limit, page.q)
    return ok(
        {
            "title": cat.title,
            "n_items": cat.n_items,
            "modes": service.offered,
            "n_choices": {m: service.modes[m].screen_sizes.to_json() for m in service.offered},
            "offset": page.offset,
            "limit": page.limit,
            "q": page.q,
            "n_matches": n_matches,
            "items": [without_names(cat.item(i)) if hidden else cat.item(i) for i in ids],
        }
    )


# An image is data, never a document: no script, no plugin, no fetch, even if opened as a
# page (a sandbox without allow-scripts: an opaque origin, the session tokens out of reach).
IMAGE_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "X-Frame-Options": "DENY",
}


def _guard(request: Request) -> StimulusGuard | None:
    """The study's or collect's :class:`StimulusGuard` (made once per process), or None.

    None for a server without an experiment, or one whose manifest is not stored.
    """
    state = request.app.state
    if not hasattr(state, "stimuli"):
        study, collect = getattr(state, "study", None), getattr(state, "collect", None)
        experiment = study.study if study is not None else getattr(collect, "config", None)
        row = None
        if experiment is not None and experiment.name:
            row = state.store.experiment(experiment.name)
        recorded = None if row is None else row.settings.get(MANIFEST_KEY, {}).get("files")
        cat = state.service.catalogue
        state.stimuli = None if recorded is None else StimulusGuard(cat, recorded)
    return state.stimuli


def image(request: Request) -> Response:
    """``GET /images/{item}``: an item's image, from the catalogue's folder only.

    A study's or collect's picture is served only as the bytes recorded at its first start
    (:mod:`~tripletsearch.serve.catalogue.stimuli`): a picture changed on disk since is a 409 (and
    one log line), never another stimulus.
    """
    try:
        i = int(request.path_params["item"])
    except ValueError:
        raise NotFound("no such image") from None
    path = request.app.state.service.catalogue.image_path(i)
    kind = None if path is None else raster_type(path)  # checked at load; again if replaced
    if path is None or kind is None:
        raise NotFound("no such image")
    guard = _guard(request)
    if guard is None:
        return FileResponse(path, media_type=kind, headers=IMAGE_HEADERS)
    data = guard.read(i, path)
    if data is None:
        raise Conflict("this picture changed since the experiment started; it is not served")
    return Response(data, media_type=kind, headers=IMAGE_HEADERS)


ROUTES = [
    Route("/api/catalogue", catalogue),
    Route("/images/{item}", image),
]
