"""The ASGI app (Starlette) of the search service: routes, state and middleware only.

The JSON API of :class:`~.service.SearchService` and :class:`~.study.StudyService`, a
page that drives it, the catalogue's images, and an admin export behind a token; the
views, one module per resource, are in :mod:`.views`. Every domain error
(:mod:`.errors`) becomes its HTTP status here (:data:`STATUS`), as ``{"error": message}``.

Starlette rather than FastAPI: the API is a few small JSON endpoints whose fields are
checked by one schema module (:mod:`.schema`, the same checks and messages for every
caller), so FastAPI's pydantic layer would be a second schema to keep in step, and
Starlette's plain ``def`` endpoints run in its thread pool, which is what the synchronous
database and native calls need.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

from ...utils import warn_renamed
from ..catalogue import Catalogue
from ..catalogue.shared import attach_shared
from ..clock import record_fast_server_ms
from ..collect import CollectConfig
from ..collect.service import CollectService
from ..config import ServeConfig, serving_catalogue
from ..errors import (
    Busy,
    Closed,
    Conflict,
    Invalid,
    NotFound,
    ServiceError,
    TooLarge,
    TooManyRequests,
    Unauthorized,
    UnsupportedMedia,
)
from ..experiment import bind
from ..modes import mode_registry
from ..service.memory import process_memory, return_freed_memory
from ..service.processes import die_with_parent, read_design
from ..service.search import SearchService
from ..store import Store
from ..study import Study, StudyService
from .limits import RateLimiter
from .middleware import MAX_BODY_BYTES, BodyLimit, StrictTransport
from .views import admin, error, pages, sessions
from .views import catalogue as catalogue_views
from .views import collect as collect_views
from .views import participants as participant_views
from .views import preview as preview_views
from .views import study as study_views

__all__ = ["create_app", "MAX_BODY_BYTES", "STATUS", "DEPRECATED_KEYWORDS"]

log = logging.getLogger("tripletsearch.serve")

# the HTTP status of each domain error
STATUS: dict[type[ServiceError], int] = {
    Invalid: 400,
    Unauthorized: 401,
    Closed: 403,
    NotFound: 404,
    Conflict: 409,
    TooLarge: 413,
    UnsupportedMedia: 415,
    TooManyRequests: 429,
    Busy: 503,
}
ROUTES = [
    *pages.ROUTES,
    *participant_views.ROUTES,
    *preview_views.ROUTES,
    *study_views.ROUTES,
    *collect_views.ROUTES,
    *admin.ROUTES,
    *catalogue_views.ROUTES,
    *sessions.ROUTES,
]


async def _service_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServiceError)
    status = next(STATUS[c] for c in type(exc).__mro__ if c in STATUS)
    reply = error(status, exc.message, exc.details)
    retry_after = getattr(exc, "retry_after", None)
    if retry_after is not None:
        reply.headers["Retry-After"] = str(int(retry_after))
    return reply


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error(exc.status_code, str(exc.detail).lower())


async def _value_error(request: Request, exc: Exception) -> Response:
    # the library's own checks (a bad stored value): the message, never a trace
    log.warning("refused %s %s: %s", request.method, request.url.path, exc)
    return error(400, str(exc))


# create_app's keywords before it took a ServeConfig: each warns and still works until
# tripletsearch 0.4.0 (give config=ServeConfig(name=...))
DEPRECATED_KEYWORDS = (
    "admin_token",
    "gamma",
    "max_queries",
    "random_state",
    "limits",
    "memory",
    "threads",
    "steps_at_once",
    "guesses",
    "fast_server_ms",
)


def _config(config: ServeConfig | None, database: str | None, old: dict[str, Any]) -> ServeConfig:
    """The app's configuration: ``config`` (or one built of the old keywords, warning)."""
    unknown = sorted(set(old) - set(DEPRECATED_KEYWORDS))
    if unknown:
        raise TypeError(f"create_app: unexpected keyword argument(s) {unknown}")
    for name in old:
        warn_renamed(
            "create_app",
            f"{name}=",
            f"config=ServeConfig({name}=...)",
            stacklevel=4,
            renamed_in="0.3.0",
            removed_in="0.4.0",
        )
    if config is None:  # (None: the config's default, as the keywords' defaults were)
        return ServeConfig(database=database, **{k: v for k, v in old.items() if v is not None})
    if not isinstance(config, ServeConfig):
        raise TypeError(f"config: expected a ServeConfig, got {type(config).__name__}")
    if old:
        raise TypeError(f"create_app: give {sorted(old)} in config, not beside it")
    if database is not None and database != config.database:
        if config.database is not None:
            raise TypeError("create_app: database and config.database differ; give one")
        config = config.replace(database=database)
    return config


def create_app(
    catalogue: Catalogue | None,
    database: str | None = None,
    *,
    config: ServeConfig | None = None,
    setup: bool = True,
    study: Study | None = None,
    collect: CollectConfig | None = None,
    **deprecated: Any,
) -> Starlette:
    """The search service's ASGI app for ``catalogue``.

    Its settings are one :class:`~..config.ServeConfig` (``config``); what it runs (a
    study, a collect) and whether it sets up the database are the arguments beside it.

    Parameters
    ----------
    catalogue : Catalogue
        From :func:`~..catalogue.load_catalogue` or :func:`~..catalogue.demo_catalogue`
        (None: the study's or collect's).
    database : str, optional
        SQLAlchemy URL; default ``sqlite:///tripletsearch-sessions.sqlite`` (the working
        directory). PostgreSQL: ``postgresql+psycopg://user:pw@host/db``. The same as
        ``config.database`` (give it in one of the two).
    config : ServeConfig, optional
        The server's settings, as ``tripletsearch serve`` builds them: gamma, screens per
        session, seeds, limits (none by default: a server in front sets its own), memory,
        threads, best guesses, the server's clock bound, the admin token (None: its
        defaults). Before 0.3.0 each was a keyword of its own (``gamma=``, ...): they
        still work, warning, until 0.4.0.
    setup : bool
        Create or upgrade the tables now (one process) and register the study or collect
        by its name (:func:`~..experiment.bind`: ``ExperimentChanged``, a ValueError, when
        the file changes one people took part in); False when both were done before
        several workers started (``tripletsearch serve`` does that).
    study : Study, optional
        Run this study (:func:`~..study.load_study`; its catalogue replaces
        ``catalogue`` unless that is the same, e.g. with its arrays shared): ``/`` and
        ``/study`` are the participants' page, ``/api/participants`` serves them, free
        sessions are refused.
    collect : CollectConfig, optional
        Collect triplets as this collect file says (:func:`~..collect.load_collect`; its
        catalogue replaces ``catalogue`` unless that is the same): ``/collect`` is the
        participants' page, ``/api/participants`` serves them, free sessions are refused.
        The refitter that fills the samplers' buffers runs apart
        (:func:`~..collect.refitter.refit_once`).
    **deprecated
        The settings' keywords of before 0.3.0 (:data:`DEPRECATED_KEYWORDS`): a
        DeprecationWarning naming ``config=ServeConfig(...)`` each.
    """
    config = _config(config, database, deprecated)
    if study is not None and collect is not None:
        raise ValueError("study and collect: a server runs one experiment; give one")
    store = Store(config.database)
    if setup:
        store.setup()
    else:
        store.check()
    # the experiment in the database: its name and key (setup: a server starting registers
    # it, or refuses a file that changes one people took part in; bound before: as it is)
    experiment = study if study is not None else collect
    if experiment is not None:
        experiment = bind(experiment, store, register=setup)
        if setup:  # the server's clock bound, recorded with it: what its checks read
            record_fast_server_ms(store, experiment.fingerprint, config.fast_server_ms)
    study, collect = (experiment, None) if study is not None else (None, experiment)
    catalogue = serving_catalogue(experiment, catalogue)
    # what the experiment sets of the server's settings and gives its modes: decided here
    settings = config if experiment is None else experiment.server_settings(config)
    service = SearchService(
        catalogue,
        store,
        mode_registry(catalogue, settings, store, experiment),
        settings=settings,
        closed="" if experiment is None else experiment.CLOSED,
    )
    memory, limits = config.memory, config.limits
    baseline = None if memory is None else _budget(service, memory)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        for mode in service.modes.values():
            mode.close()
        store.dispose()

    app = Starlette(
        routes=ROUTES,
        exception_handlers={
            ServiceError: _service_error,
            HTTPException: _http_error,
            ValueError: _value_error,
        },
        middleware=[
            Middleware(StrictTransport, max_age=config.hsts_max_age),  # (outermost: every reply)
            Middleware(BodyLimit, limit=MAX_BODY_BYTES),
        ],
        lifespan=lifespan,
    )
    app.state.config = config
    app.state.service, app.state.store, app.state.admin_token = service, store, config.admin_token
    app.state.study = None if study is None else StudyService(study, service)
    app.state.collect = None if collect is None else CollectService(collect, service)
    app.state.limits = limits
    app.state.memory, app.state.baseline = memory, baseline
    app.state.session_rate = RateLimiter(limits.sessions_per_minute)
    app.state.enrolment_rate = RateLimiter(limits.enrolments_per_minute)
    return app


def _budget(service: SearchService, memory: int) -> int:
    """Give the live searchers what ``memory`` leaves; the process's baseline (bytes).

    The baseline: the catalogue loaded and the modes' templates and priors built; a tenth
    of what is left (at most 64 MiB) is kept for requests in flight.
    """
    return_freed_memory()
    for name in service.offered:  # the modes' templates (and priors) in the baseline
        mode = service.modes[name]
        n_choices, params = mode.new_params(None)
        mode.session_bytes(n_choices, params)
        mode.searcher(n_choices, params, 0)  # a first spawn builds the shared prior
    baseline = process_memory()
    free = int(memory) - baseline
    service.live.budget = max(free - min(free // 10, 64 << 20), 0)  # room for requests
    return baseline


def app_from_env() -> ASGIApp:
    """The app of a uvicorn worker started by ``tripletsearch serve --workers N``.

    The configuration in ``TRIPLETSEARCH_SERVE`` (:meth:`~..config.ServeConfig.to_dict`),
    the tables set up by the parent, the study or collect as the parent read, checked and
    registered it (its design file, :func:`~..service.processes.read_design`): never its
    file again, which may have been edited since the server started.
    """
    die_with_parent()  # a worker never outlives its server (it would keep the port)
    config = ServeConfig.from_dict(json.loads(os.environ["TRIPLETSEARCH_SERVE"]))
    design = read_design(config.design) if config.design else {}
    study, collect = design.get("study"), design.get("collect")
    experiment = study if study is not None else collect
    cat = serving_catalogue(experiment, None if experiment else config.load_catalogue())
    if config.shared:
        cat = attach_shared(cat, config.shared)
    return create_app(cat, config=config, setup=False, study=study, collect=collect)
