"""What ``tripletsearch serve``, ``export``, ``report`` and ``prune`` do (parsers: cli).

Every start-up error (a bad file, a database that cannot be reached or is not a URL, an
experiment file that would change what people took part in) is one line on stderr and exit
code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import sys
from pathlib import Path
from typing import Any

from ..service.memory import (
    DEFAULT_SHARE,
    default_memory,
    format_size,
    machine_memory,
    parse_size,
    session_estimate,
)

__all__ = ["serve", "export", "report", "prune", "admin_token", "DEFAULT_TOKEN_FILE"]

DEFAULT_TOKEN_FILE = "tripletsearch-admin-token"

_MISSING = (
    "tripletsearch serve needs the optional 'serve' dependencies: "
    "pip install 'tripletsearch[serve]'"
)


def admin_token(token: str | None, path: str | None) -> tuple[str, str]:
    """The admin token, and what the log says of it (never the token itself).

    ``token`` (``--admin-token``, visible in ``ps``, or ``TRIPLETSEARCH_ADMIN_TOKEN``) wins;
    else the file ``path`` (default ``tripletsearch-admin-token`` in the working
    directory) is read when it exists, and must be owner-only; else a token is generated
    and written to it, created owner-only (0600).
    """
    if token:
        return token, "admin token (GET /api/admin/export): as given"
    file = os.path.abspath(path or DEFAULT_TOKEN_FILE)
    if os.path.exists(file):
        if os.name == "posix" and os.stat(file).st_mode & 0o077:
            raise ValueError(
                f"--admin-token-file: {file} can be read or written by others (chmod 600 it)"
            )
        with open(file, encoding="utf-8") as f:
            found = f.read().strip()
        if not found:
            raise ValueError(f"--admin-token-file: {file} is empty")
        return found, f"admin token (GET /api/admin/export): read from {file}"
    made = secrets.token_urlsafe(24)
    fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(made + "\n")
    return made, f"admin token (GET /api/admin/export): generated, in {file} (owner-only)"


def _catalogue(args: argparse.Namespace) -> Any:
    from ..catalogue import DEMOS, demo_catalogue, load_catalogue

    given = [g for g in (args.demo, args.catalogue, getattr(args, "study", None)) if g]
    if len(given) > 1:
        raise ValueError(f"give one of --catalogue PATH, --demo {'/'.join(DEMOS)}, --study FILE")
    if args.demo:
        return demo_catalogue(args.demo)
    if args.catalogue:
        return load_catalogue(args.catalogue)
    return None


def _missing_dependencies() -> bool:
    """Whether the 'serve' extra is missing (said on stderr)."""
    import importlib.util

    missing = [m for m in ("starlette", "uvicorn", "sqlalchemy") if not importlib.util.find_spec(m)]
    if missing:
        print(f"error: {_MISSING} (missing: {', '.join(missing)})", file=sys.stderr)
    return bool(missing)


def _limits(args: argparse.Namespace) -> Any:
    """The :class:`~..config.Limits` of the command line (ValueError naming a bad one)."""
    from ..config import Limits

    return Limits(
        sessions_per_minute=args.sessions_per_minute,
        enrolments_per_minute=args.enrolments_per_minute,
        max_open_sessions=args.max_open_sessions,
        trusted_proxies=frozenset(args.trusted_proxy or ()),
    )


def _serve_inputs(args: argparse.Namespace) -> tuple[Any, Any, Any, str] | None:
    """The configuration, the catalogue given, the study or collect, the admin token's line.

    None after printing what is wrong (checked before any file or database is touched).
    """
    from ..collect import load_collect
    from ..config import NO_CATALOGUE, ServeConfig
    from ..store import default_url
    from ..study import load_study

    try:
        cat = _catalogue(args)  # (refuses two sources)
        if args.study and args.collect:
            raise ValueError("give --study FILE or --collect FILE, not both")
        experiment: Any = load_study(args.study) if args.study else None
        experiment = load_collect(args.collect) if args.collect else experiment
        if cat is None and experiment is None:
            raise ValueError(NO_CATALOGUE)
        if args.workers < 1:
            raise ValueError("--workers must be >= 1")
        limits = _limits(args)
        memory = parse_size(args.memory) if args.memory else default_memory(args.workers)
        if args.threads is not None and args.threads < 1:
            raise ValueError(f"--threads: expected a number >= 1, got {args.threads}")
        threads = args.threads or max(1, (os.cpu_count() or 1) // args.workers)
        fast = _fast(args)
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


def _fast(args: argparse.Namespace) -> dict[str, Any]:
    """``--fast-server-ms`` as a setting (none given: the default's)."""
    ms = getattr(args, "fast_server_ms", None)
    if ms is None:
        return {}
    if not 0 <= ms < float("inf"):
        raise ValueError(f"--fast-server-ms: expected a number >= 0, got {ms}")
    return {"fast_server_ms": ms}


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
    from ..clock import record_fast_server_ms
    from ..experiment import bind

    if experiment is None:
        return "", None
    experiment = bind(experiment, store)  # (a study under way: what it began with)
    record_fast_server_ms(store, experiment.fingerprint, fast_server_ms)
    people = store.participant_count(experiment.fingerprint)
    return f"{experiment.kind} {experiment.name!r}: {people} participants so far", experiment


def serve(args: argparse.Namespace) -> int:
    """``tripletsearch serve``: check the inputs, set up the database, run the workers.

    The server's configuration (:class:`~.config.ServeConfig`) is built once here and
    handed to its workers and its app.
    """
    if _missing_dependencies():
        return 2
    from ..catalogue.shared import share_catalogue
    from ..config import serving_catalogue
    from ..service.processes import mark_server, write_design
    from ..store import Store, StoreError
    from ..web.tls import checked_tls

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
    import atexit
    import socket

    # every child (workers, refitter) dies with this process, and knows it by its address
    mark_server(f"{socket.gethostname()}:{args.port}")
    if config.design is not None:
        atexit.register(_remove, config.design)
    refitter, collect = None, kinds.get("collect")
    if collect is not None:  # fills the buffers, supervised
        from ..collect.supervisor import start_refitter

        # (its checks read the server's clock bound recorded with the collect)
        refitter = start_refitter(config.database, config.design, collect.fingerprint)
        atexit.register(refitter.stop)
    try:
        if args.workers > 1:
            _workers(args, config, tls)
        else:
            _one_worker(args, config, cat, kinds, tls)
        return 0
    finally:
        if refitter is not None:  # the server ends: its refitter with it, quietly
            refitter.stop()


def _one_worker(args: argparse.Namespace, config: Any, cat: Any, kinds: dict, tls: dict) -> None:
    """Serve in this process (``--workers 1``): the app over the shared arrays, uvicorn."""
    import uvicorn

    from ..catalogue.shared import attach_shared
    from ..web.app import create_app
    from ..web.protocol import uvicorn_options

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


def _workers(args: argparse.Namespace, config: Any, tls: dict | None = None) -> None:
    """Run ``--workers`` uvicorn worker processes.

    Each builds its app from the environment (:func:`~.web.app.app_from_env`): the
    configuration (``TRIPLETSEARCH_SERVE``: :meth:`~.config.ServeConfig.to_dict`), and the
    study or collect from its design file (:func:`~.service.processes.write_design`), as
    this process checked it. ``tls``: :func:`~.web.tls.tls_options`' (uvicorn gives it to
    every worker; the key's password never goes in the environment).
    """
    import uvicorn

    from ..web.protocol import uvicorn_options

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


def _with_store(args: argparse.Namespace, work: Any) -> int:
    """``work(store, catalogue)`` on the database of ``--database`` and the arguments' catalogue.

    The database is checked; a bad file or database prints the error, exit code 2.
    """
    if _missing_dependencies():
        return 2
    from ..store import Store, StoreError, default_url

    try:
        cat = _catalogue(args)
        store = Store.existing(args.database or default_url())
        return int(work(store, cat))
    except (ValueError, FileNotFoundError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _chosen(store: Any, kind: str | None, name: str | None, bound: Any = None) -> Any:
    """The experiment to report or export; the database's listing printed first.

    The file's (``bound``), ``--name``'s, or the database's only one of ``kind`` (None:
    none).
    """
    from ..experiment import describe, listing, pick

    found = listing(store)
    print(describe(found))
    if bound is not None:
        mine = next((e for e in found if e["key"] == bound.fingerprint), None)
        if name is not None and (mine is None or mine["name"] != name):
            raise ValueError(f"--name: {name!r} is not the experiment of the file given")
        return mine or {"name": bound.name, "key": bound.fingerprint, "kind": kind}
    return pick(found, kind, name)


def named_experiment(store: Any, name: str | None) -> dict:
    """The study or collect ``--experiment NAME`` names (the only one when None)."""
    from ..experiment import listing, pick

    try:
        found = pick(listing(store), None, name)
    except ValueError as exc:
        raise ValueError(str(exc).replace("--name:", "--experiment:", 1)) from None
    if found is None:
        raise ValueError("--experiment: this database holds no study or collect")
    return found


def export(args: argparse.Namespace) -> int:
    """``tripletsearch export``: everything (or one experiment) into a new ``--out``."""

    def work(store: Any, cat: Any) -> int:
        import shutil

        from ..export.outfolder import check_replaceable, publish
        from .export_folder import check_out, fresh_folder, write_export

        config = None
        if args.collect:
            from ..collect import load_collect
            from ..experiment import bind

            if cat is not None:
                raise ValueError("--collect names the catalogue: no --catalogue or --demo too")
            config = bind(load_collect(args.collect), store, register=False)
            cat = config.catalogue
        elif getattr(args, "title", None) is not None:
            raise ValueError("--title: the title of the study an export --collect writes")
        out = Path(args.out)
        check_out(out, store, _read_files(args.collect, config))
        if args.name is None and config is None:  # no name: every session of the database
            from ..experiment import describe, listing

            print(describe(listing(store)))
            chosen = None
        else:
            chosen = _chosen(store, "collect" if config else None, args.name, config)
        check_replaceable(out, force=args.force)  # before anything is written
        folder = fresh_folder(out)  # written whole, then put in the place of --out
        fast = _fast(args)  # the collect checks' server clock, as the server ran with
        try:
            with store.snapshot():  # one read: what is written is what is fitted
                key = None if chosen is None else chosen["key"]
                counts = write_export(store, folder, cat, key, **fast)
                rows = _collected(folder) if config is not None else None
            fitted = None
            if config is not None:
                from ..collect.export import write_collect_export

                fitted = write_collect_export(
                    store, config, args.collect, folder, rows, title=args.title, **fast
                )
            from ..export import data_path, describe_folder  # every CSV written: described

            describe_folder(folder, title=chosen["name"] if chosen else "tripletsearch export")
            where = publish(folder, out, force=args.force)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        what = "every session" if chosen is None else f"{chosen['kind']} {chosen['name']!r}"
        print(
            f"exported {what}: {counts['sessions']} sessions, {counts['answers']} answers, "
            f"{counts['triplets']} search triplets ({data_path('triplets.csv')}), "
            f"{counts['collect_triplets']} collected triplets "
            f"({data_path('collect_triplets.csv')}), {counts['choices']} choices to {where}"
        )
        if fitted is not None:
            print(
                f"fitted {', '.join(fitted['models'])} to {fitted['triplets']} collected "
                f"triplets: {where / 'embeddings'}, a catalogue folder {where / 'catalogue'} "
                f"and a study on it: tripletsearch serve --study {where / 'study.toml'}"
            )
        return 0

    return _with_store(args, work)


def _read_files(collect_file: str | None, config: Any) -> list[Any]:
    """The files an export reads: the collect file and its catalogue's folder (or none)."""
    return [] if config is None else [collect_file, config.catalogue.root]


def _collected(folder: Path) -> list[list[int]]:
    """The collected triplets the export wrote (``collect_triplets.csv``), to fit."""
    import csv

    from ..export import data_path

    with open(folder / data_path("collect_triplets.csv"), newline="") as fh:
        return [[int(v) for v in row] for row in list(csv.reader(fh))[1:]]


def prune(args: argparse.Namespace) -> int:
    """``tripletsearch prune``: delete old finished and abandoned free sessions."""
    import time

    if not args.older_than >= 0 or not args.abandoned_after >= 0:
        print("error: --older-than and --abandoned-after must be >= 0", file=sys.stderr)
        return 2

    def work(store: Any, cat: Any) -> int:
        now = time.time()
        counts = store.prune(
            now - 86400.0 * args.older_than,
            now - 3600.0 * args.abandoned_after,
            dry_run=args.dry_run,
        )
        verb = "would delete" if args.dry_run else "deleted"
        print(
            f"{verb} {counts['sessions']} sessions with {counts['screens']} screens and "
            f"{counts['answers']} answers (free sessions finished or abandoned, last active "
            f"over {args.older_than:g} days ago; study sessions kept)"
        )
        return 0

    return _with_store(args, work)
