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
import inspect
import json
import logging
import os
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

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
from .limits import Limits, RateLimiter
from .middleware import MAX_BODY_BYTES, BodyLimit, StrictTransport
from .views import admin, error, pages, sessions
from .views import catalogue as catalogue_views
from .views import collect as collect_views
from .views import participants as participant_views
from .views import preview as preview_views
from .views import study as study_views

__all__ = ["create_app", "MAX_BODY_BYTES", "STATUS"]

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


# create_app's keywords that are settings: their defaults are its signature's (a test checks
# they are ServeConfig's; limits and fast_server_ms: None, the config's own)
_SETTINGS = (
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


def _config(config: ServeConfig | None, database: str | None, given: dict) -> ServeConfig:
    """The app's configuration: ``config``, or one of ``create_app``'s keywords."""
    defaults = inspect.signature(create_app).parameters
    changed = sorted(k for k, v in given.items() if v is not None and v != defaults[k].default)
    if config is None:
        values = {k: given[k] for k in changed if k != "limits"}
        if given.get("limits") is not None:
            values["limits"] = given["limits"]
        return ServeConfig(database=database, **values)
    if not isinstance(config, ServeConfig):
        raise TypeError(f"config: expected a ServeConfig, got {type(config).__name__}")
    if changed:
        raise TypeError(f"create_app: give {changed} in config, not beside it")
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
    admin_token: str | None = None,
    gamma: float | str = 3.0,
    max_queries: int = 300,
    setup: bool = True,
    study: Study | None = None,
    collect: CollectConfig | None = None,
    random_state: int | None = None,
    limits: Limits | None = None,
    memory: int | None = None,
    threads: int = 1,
    steps_at_once: int | None = None,
    guesses: int = 0,
    fast_server_ms: float | None = None,
) -> Starlette:
    """The search service's ASGI app for ``catalogue``.

    Its settings are one :class:`~..config.ServeConfig`: ``config``, or built from the
    keywords below (``admin_token`` to ``guesses``; not both).

    Parameters
    ----------
    catalogue : Catalogue
        From :func:`~..catalogue.load_catalogue` or :func:`~..catalogue.demo_catalogue`
        (None: the study's or collect's).
    database : str, optional
        SQLAlchemy URL; default ``sqlite:///tripletsearch-sessions.sqlite`` (the working
        directory). PostgreSQL: ``postgresql+psycopg://user:pw@host/db``.
    config : ServeConfig, optional
        The server's settings, as ``tripletsearch serve`` builds them (then give none of
        the keywords below but ``setup``, ``study`` and ``collect``).
    admin_token : str, optional
        Bearer token of ``GET /api/admin/export`` (None: the endpoint is off).
    gamma : float or "auto"
        The gamma-CKL power assumed of people in find mode, or "auto": inferred per person
        while they search.
    max_queries : int
        Screens per session before it ends by itself (a study: its own).
    setup : bool
        Create or upgrade the tables now (one process) and register the study or collect
        by its name (:func:`~..experiment.bind`: ``ExperimentChanged``, a ValueError, when
        the file changes one people took part in); False when both were done before
        several workers started (``tripletsearch serve`` does that).
    collect : CollectConfig, optional
        Collect triplets as this collect file says (:func:`~..collect.load_collect`; its
        catalogue replaces ``catalogue`` unless that is the same): ``/collect`` is the
        participants' page, ``/api/participants`` serves them, free sessions are refused.
        The refitter that fills the samplers' buffers runs apart
        (:func:`~..collect.refitter.refit_once`).
    study : Study, optional
        Run this study (:func:`~..study.load_study`; its catalogue replaces
        ``catalogue`` unless that is the same, e.g. with its arrays shared): ``/`` and
        ``/study`` are the participants' page, ``/api/participants`` serves them, free
        sessions are refused.
    random_state : int, optional
        Seeds free sessions' searchers in the order they start, so a run replays (tests,
        demos; every process given the same value draws the same seeds). None: a secret
        random seed per session. A study's sessions take their seeds from the study.
    limits : Limits, optional
        Sessions and enrolments per client address per minute, open sessions at once,
        trusted proxies (:class:`~.limits.Limits`). None: no limits (a server in front
        sets its own); ``tripletsearch serve`` gives ``Limits()``'s defaults unless told.
    memory : int, optional
        Bytes this process may hold (measured as PSS, :mod:`.memory`): its live searchers
        get what is left once the catalogue is loaded and the default mode's first searcher
        built, less a tenth of it (at most 64 MiB) for requests in flight and the database's
        caches (least recently used evicted first, rebuilt from the database on their next
        request; a request that cannot fit gets 503). None: live searchers bounded by
        count only.
    threads : int
        Native threads of each search step: with one worker process, the machine's cores
        serve each answer (the same results for any number).
    steps_at_once : int, optional
        Search steps computed at once in this process, the others queued (None: no bound;
        ``tripletsearch serve``: the cores over all workers' threads, at least 1).
    guesses : int
        Best guesses offered with each screen of a free find session that asks for none
        (``POST /api/sessions``'s ``guesses``; 0: the paper's protocol). A study's come from
        its file.
    fast_server_ms : float, optional
        A collect's check on people: a participant whose median time per screen by the
        server's clock is under this is flagged (None: the default,
        :data:`~..collect.quality.FAST_SERVER_MS`; 0: never).
    """
    given = locals()  # (the arguments, nothing else bound yet)
    keywords = {k: given[k] for k in _SETTINGS}
    config = _config(config, database, keywords)
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
