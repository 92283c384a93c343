"""``tripletsearch serve``: check the inputs, set up the database, run the workers."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import signal
import socket
import sys
from typing import Any

import uvicorn

from ..catalogue.shared import attach_shared, share_catalogue
from ..clock import record_fast_server_ms
from ..collect.file import load_collect
from ..collect.supervisor import start_refitter
from ..config import NO_CATALOGUE, ServeConfig, serving_catalogue
from ..experiment import bind
from ..service.memory import (
    DEFAULT_SHARE,
    default_memory,
    format_size,
    machine_memory,
    parse_size,
    session_estimate,
)
from ..service.processes import mark_server, write_design
from ..store import Store, StoreError, default_url
from ..study import load_study
from ..web.app import create_app
from ..web.protocol import uvicorn_options
from ..web.tls import checked_tls
from . import admin_token
from .common import catalogue_of, fast_of, limits_of

__all__ = ["main", "one_worker", "workers"]


def _serve_inputs(args: argparse.Namespace) -> tuple[Any, Any, Any, str] | None:
    """The configuration, the catalogue given, the study or collect, the admin token's line.

    None after printing what is wrong (checked before any file or database is touched).
    """
    try:
        cat = catalogue_of(args)  # (refuses two sources)
        if args.study and args.collect:
            raise ValueError("give --study FILE or --collect FILE, not both")
        experiment: Any = load_study(args.study) if args.study else None
        experiment = load_collect(args.collect) if args.collect else experiment
        if cat is None and experiment is None:
            raise ValueError(NO_CATALOGUE)
        if args.workers < 1:
            raise ValueError("--workers must be >= 1")
        limits = limits_of(args)
        memory = parse_size(args.memory) if args.memory else default_memory(args.workers)
        if args.threads is not None and args.threads < 1:
            raise ValueError(f"--threads: expected a number >= 1, got {args.threads}")
        threads = args.threads or max(1, (os.cpu_count() or 1) // args.workers)
        fast = fast_of(args)
        token, said = admin_token(
            args.admin_token or os.environ.get("TRIPLETSEARCH_ADMIN_TOKEN"),
            args.admin_token_file,
        )
        config = ServeConfig(
            database=args.database or default_url(),
            gamma=args.gamma,
            max_queries=args.max_queries,
            limits=limits,
            memory=memory,
            threads=threads,
            # each search step gets its threads to itself: the others wait, not share cores
            steps_at_once=max(1, (os.cpu_count() or 1) // (threads * args.workers)),
            guesses=args.guesses,
            **fast,
            admin_token=token,
            demo=args.demo,
            catalogue=os.path.abspath(args.catalogue) if args.catalogue else None,
        )
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    return config, cat, experiment, said


def _announce(args: argparse.Namespace, config: Any, cat: Any, where: str, created: bool) -> None:
    """What ``serve`` starts: the catalogue, address, workers, database, memory, threads."""
    print(
        f"serving {cat.title!r} ({cat.n_items} items) on {_scheme(args)}://{args.host}:"
        f"{args.port}/ "
        f"with {args.workers} worker(s); sessions in {where}" + (" (created)" if created else ""),
        flush=True,
    )
    default = f" (default: {DEFAULT_SHARE:.0%} of {format_size(machine_memory())})"
    print(
        f"memory: {format_size(config.memory)} per worker{'' if args.memory else default}; a "
        f"find search over this catalogue holds about "
        f"{format_size(session_estimate(cat.n_items, config.gamma))}; "
        f"{config.threads} thread(s) per search step",
        flush=True,
    )


def _scheme(args: argparse.Namespace) -> str:
    return "https" if getattr(args, "ssl_certfile", None) else "http"


def _register(store: Any, experiment: Any, fast_server_ms: float) -> tuple[str, Any]:
    """Register the study or collect by its name in ``store``: what the log says of it.

    And the experiment as registered (its name and key; None without one): the design every
    process of the server runs.

    ``ExperimentChanged`` (a ValueError) when the file changes one people took part in.
    The server's clock bound ``fast_server_ms`` is recorded with it (what its checks read).
    """
    if experiment is None:
        return "", None
    experiment = bind(experiment, store)  # (a study under way: what it began with)
    record_fast_server_ms(store, experiment.fingerprint, fast_server_ms)
    people = store.participant_count(experiment.fingerprint)
    return f"{experiment.kind} {experiment.name!r}: {people} participants so far", experiment


def main(args: argparse.Namespace) -> int:
    """``tripletsearch serve``: check the inputs, set up the database, run the workers.

    The server's configuration (:class:`~.config.ServeConfig`) is built once here and
    handed to its workers and its app.
    """
    inputs = _serve_inputs(args)
    if inputs is None:
        return 2
    config, cat, experiment, said = inputs
    try:  # HTTPS: the certificate (valid now) and key loaded once here, before anything listens
        tls, certificate = checked_tls(args)  # (its dates: for the dashboards too)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    hsts = getattr(args, "hsts_max_age", 0) if tls else 0
    config = config.replace(hsts_max_age=hsts, certificate=certificate)
    try:  # once, before any worker starts: the tables, and the experiment by its name
        store = Store(config.database)
        found = store.setup()
        registered, experiment = _register(store, experiment, config.fast_server_ms)
    except (StoreError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    store.dispose()
    cat = serving_catalogue(experiment, cat)  # (a study under way: its own)
    kinds = {} if experiment is None else {experiment.kind: experiment}  # study=, collect=
    try:  # once, mapped by every worker (a catalogue still without an embedding: nothing)
        config = config.replace(shared=share_catalogue(cat) if cat.has_embedding else None)
        # the design this server checked and registered, for its children: never the file
        config = config.replace(design=write_design(kinds) if kinds else None)
    except ValueError as exc:  # their folder another user could write to
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(said, flush=True)
    _announce(args, config, cat, store.url.render_as_string(hide_password=True), found == 0)
    if registered:  # and where its owner walks through it, counted nowhere (the token: theirs)
        print(registered, flush=True)
        print(f"preview: {_scheme(args)}://{args.host}:{args.port}/preview#token=<admin token>")
    # every child (workers, refitter) dies with this process, and knows it by its address
    mark_server(f"{socket.gethostname()}:{args.port}")
    if config.design is not None:
        atexit.register(_remove, config.design)
    refitter, collect = None, kinds.get("collect")
    if collect is not None:  # fills the buffers, supervised
        # (its checks read the server's clock bound recorded with the collect)
        refitter = start_refitter(config.database, config.design, collect.fingerprint)
        atexit.register(refitter.stop)
    try:
        if args.workers > 1:
            workers(args, config, tls)
        else:
            one_worker(args, config, cat, kinds, tls)
        return 0
    finally:
        if refitter is not None:  # the server ends: its refitter with it, quietly
            refitter.stop()


def one_worker(args: argparse.Namespace, config: Any, cat: Any, kinds: dict, tls: dict) -> None:
    """Serve in this process (``--workers 1``): the app over the shared arrays, uvicorn."""
    if config.shared is not None:
        cat = attach_shared(cat, config.shared)
    app = create_app(cat, config=config, setup=False, **kinds)
    # uvicorn stops on SIGTERM, then raises it again: an exit, the design file removed
    signal.signal(signal.SIGTERM, _terminated)
    uvicorn.run(
        app, host=args.host, port=args.port, log_level=args.log_level, **uvicorn_options(), **tls
    )


def _terminated(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # (the shell's code of a process a signal ended)


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def workers(args: argparse.Namespace, config: Any, tls: dict | None = None) -> None:
    """Run ``--workers`` uvicorn worker processes.

    Each builds its app from the environment (:func:`~.web.app.app_from_env`): the
    configuration (``TRIPLETSEARCH_SERVE``: :meth:`~.config.ServeConfig.to_dict`), and the
    study or collect from its design file (:func:`~.service.processes.write_design`), as
    this process checked it. ``tls``: :func:`~.web.tls.tls_options`' (uvicorn gives it to
    every worker; the key's password never goes in the environment).
    """
    os.environ["TRIPLETSEARCH_SERVE"] = json.dumps(config.to_dict())
    uvicorn.run(
        "tripletsearch.serve.web.app:app_from_env",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        **uvicorn_options(),
        **(tls or {}),
    )
