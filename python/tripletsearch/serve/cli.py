"""``tripletsearch serve``, ``export``, ``report`` and ``prune`` (imported only when run)."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from typing import Any

from .service.memory import (
    DEFAULT_SHARE,
    default_memory,
    format_size,
    machine_memory,
    parse_size,
    session_estimate,
)

__all__ = ["add_commands"]

_MISSING = (
    "tripletsearch serve needs the optional 'serve' dependencies: "
    "pip install 'tripletsearch[serve]'"
)


DEFAULT_TOKEN_FILE = "tripletsearch-admin-token"


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


def _gamma_arg(text: str) -> float | str:
    """--gamma: a number > 0 or "auto"."""
    if text == "auto":
        return "auto"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0 or 'auto', got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0 or 'auto', got {text!r}")
    return value


def _catalogue(args: argparse.Namespace) -> Any:
    from .catalogue import demo_catalogue, load_catalogue

    given = [g for g in (args.demo, args.catalogue, getattr(args, "study", None)) if g]
    if len(given) > 1:
        raise ValueError("give one of --catalogue PATH, --demo colours, --study FILE")
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
        print(f"{_MISSING} (missing: {', '.join(missing)})", file=sys.stderr)
    return bool(missing)


def _limits(args: argparse.Namespace) -> Any:
    """The :class:`~.limits.Limits` of the command line (ValueError naming a bad one)."""
    from .web.limits import Limits

    return Limits(
        sessions_per_minute=args.sessions_per_minute,
        enrolments_per_minute=args.enrolments_per_minute,
        max_open_sessions=args.max_open_sessions,
        trusted_proxies=frozenset(args.trusted_proxy or ()),
    )


def _add_limit_arguments(p: argparse.ArgumentParser) -> None:
    """``serve``'s options of :class:`~.limits.Limits`."""
    p.add_argument(
        "--sessions-per-minute",
        type=int,
        default=30,
        metavar="N",
        help="free sessions one client address may start per minute, per worker (0: no "
        "limit; default: %(default)s)",
    )
    p.add_argument(
        "--enrolments-per-minute",
        type=int,
        default=10,
        metavar="N",
        help="study participants one client address may enrol per minute, per worker (0: "
        "no limit; default: %(default)s)",
    )
    p.add_argument(
        "--max-open-sessions",
        type=int,
        default=10_000,
        metavar="N",
        help="free sessions open at once (unfinished, active within the hour; 0: no limit; "
        "default: %(default)s)",
    )
    p.add_argument(
        "--trusted-proxy",
        action="append",
        metavar="ADDRESS",
        help="a reverse proxy whose X-Forwarded-For gives the client's address (repeat for "
        "several; default: none, the connection's peer is the client)",
    )


def _serve_inputs(args: argparse.Namespace) -> tuple[Any, Any, Any, str, str, int] | None:
    """(catalogue, study, limits, admin token, what the log says of it, memory per worker).

    None after printing what is wrong (checked before any file or database is touched).
    """
    from .collect import load_collect
    from .study import load_study

    try:
        cat = _catalogue(args)  # (refuses two sources)
        if args.study and args.collect:
            raise ValueError("give --study FILE or --collect FILE, not both")
        study = load_study(args.study) if args.study else None
        collect = load_collect(args.collect) if args.collect else None
        cat = study.catalogue if study is not None else cat
        cat = collect.catalogue if collect is not None else cat
        if cat is None:
            raise ValueError(
                "give --catalogue PATH, --demo colours, --study FILE or --collect FILE"
            )
        if args.workers < 1:
            raise ValueError("--workers must be >= 1")
        limits = _limits(args)
        memory = parse_size(args.memory) if args.memory else default_memory(args.workers)
        if args.threads is not None and args.threads < 1:
            raise ValueError(f"--threads: expected a number >= 1, got {args.threads}")
        args.threads = args.threads or max(1, (os.cpu_count() or 1) // args.workers)
        token, said = admin_token(
            args.admin_token or os.environ.get("TRIPLETSEARCH_ADMIN_TOKEN"),
            args.admin_token_file,
        )
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    return cat, (study, collect), limits, token, said, memory


def _announce(args: argparse.Namespace, cat: Any, where: str, created: bool, memory: int) -> None:
    """What ``serve`` starts: the catalogue, address, workers, database, memory, threads."""
    print(
        f"serving {cat.title!r} ({cat.n_items} items) on http://{args.host}:{args.port}/ "
        f"with {args.workers} worker(s); sessions in {where}" + (" (created)" if created else ""),
        flush=True,
    )
    default = f" (default: {DEFAULT_SHARE:.0%} of {format_size(machine_memory())})"
    print(
        f"memory: {format_size(memory)} per worker{'' if args.memory else default}; a find "
        f"search over this catalogue holds about "
        f"{format_size(session_estimate(cat.n_items, args.gamma))}; "
        f"{args.threads} thread(s) per search step",
        flush=True,
    )


def _serve(args: argparse.Namespace) -> int:
    if _missing_dependencies():
        return 2
    import uvicorn

    from .catalogue.shared import attach_shared, share_catalogue
    from .store import Store, default_url
    from .web.app import create_app
    from .web.protocol import uvicorn_options

    inputs = _serve_inputs(args)
    if inputs is None:
        return 2
    cat, (study, collect), limits, token, said, memory = inputs
    # once, mapped by every worker (a catalogue still without an embedding: nothing to map)
    shared = share_catalogue(cat) if cat.has_embedding else None
    # each search step gets its threads to itself: the others wait instead of sharing cores
    steps_at_once = max(1, (os.cpu_count() or 1) // (args.threads * args.workers))
    url = args.database or default_url()
    store = Store(url)
    found = store.setup()  # once, before any worker starts
    store.dispose()
    print(said, flush=True)
    _announce(args, cat, store.url.render_as_string(hide_password=True), found == 0, memory)
    if collect is not None:
        from .collect.refitter import start_refitter

        start_refitter(url, args.collect)  # fills the samplers' buffers, never a request
    if args.workers == 1:
        app = create_app(
            cat if shared is None else attach_shared(cat, shared),
            url,
            admin_token=token,
            gamma=args.gamma,
            max_queries=args.max_queries,
            setup=False,
            study=study,
            collect=collect,
            limits=limits,
            memory=memory,
            threads=args.threads,
            steps_at_once=steps_at_once,
        )
        uvicorn.run(
            app, host=args.host, port=args.port, log_level=args.log_level, **uvicorn_options()
        )
        return 0
    os.environ["TRIPLETSEARCH_SERVE"] = json.dumps(
        {
            "demo": args.demo,
            "catalogue": os.path.abspath(args.catalogue) if args.catalogue else None,
            "study": os.path.abspath(args.study) if args.study else None,
            "collect": os.path.abspath(args.collect) if args.collect else None,
            "database": url,
            "gamma": args.gamma,
            "max_queries": args.max_queries,
            "limits": limits.to_dict(),
            "memory": memory,
            "threads": args.threads,
            "steps_at_once": steps_at_once,
            "shared": shared,
        }
    )
    os.environ["TRIPLETSEARCH_ADMIN_TOKEN"] = token
    uvicorn.run(
        "tripletsearch.serve.web.app:app_from_env",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        **uvicorn_options(),
    )
    return 0


def _with_store(args: argparse.Namespace, work: Any) -> int:
    """``work(store, catalogue)`` on the database of ``--database`` and the arguments' catalogue.

    The database is checked; a bad file or database prints the error, exit code 2.
    """
    if _missing_dependencies():
        return 2
    from .store import Store, StoreError, default_url

    try:
        cat = _catalogue(args)
        store = Store.existing(args.database or default_url())
        return int(work(store, cat))
    except (ValueError, FileNotFoundError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _export(args: argparse.Namespace) -> int:
    def work(store: Any, cat: Any) -> int:
        from .export import write_export

        config = None
        if args.collect:
            from .collect import load_collect

            if cat is not None:
                raise ValueError("--collect names the catalogue: no --catalogue or --demo too")
            config = load_collect(args.collect)
            cat = config.catalogue
        counts = write_export(store, args.out, cat)
        print(
            f"exported {counts['sessions']} sessions, {counts['answers']} answers, "
            f"{counts['triplets']} triplets, {counts['choices']} choices to {args.out}"
        )
        if config is not None:
            from .collect.export import write_collect_export

            fitted = write_collect_export(store, config, args.collect, args.out)
            print(
                f"fitted {', '.join(fitted['models'])} to {fitted['triplets']} collected "
                f"triplets: {args.out}/embeddings/, a catalogue folder {args.out}/catalogue/ "
                f"and a study on it: tripletsearch serve --study {args.out}/study.toml"
            )
        return 0

    return _with_store(args, work)


def _report(args: argparse.Namespace) -> int:
    def work(store: Any, cat: Any) -> int:
        from .study import load_study
        from .study.report import format_report, write_report

        if args.study:
            cat = load_study(args.study).catalogue
        rep = write_report(store, args.out, cat)
        if not rep["searches"]:
            print("no study searches in this database", file=sys.stderr)
            return 1
        print(format_report(rep))
        print(f"written to {args.out}" + (f" (plot: {rep['plot']})" if rep["plot"] else ""))
        return 0

    return _with_store(args, work)


def _prune(args: argparse.Namespace) -> int:
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


def _add_serve_command(sub: Any) -> None:
    """``serve``'s parser."""
    p = sub.add_parser("serve", help="the search service: a JSON API and a page")
    src = p.add_argument_group("catalogue (one of)")
    src.add_argument("--catalogue", metavar="PATH", help="a catalogue folder or CSV file")
    src.add_argument("--demo", choices=["colours"], help="a bundled demo catalogue")
    src.add_argument("--study", metavar="FILE", help="run the study of this TOML file")
    src.add_argument("--collect", metavar="FILE", help="collect triplets as this TOML file says")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=int, default=8000, help="port to listen on")
    p.add_argument("--workers", type=int, default=1, help="worker processes")
    p.add_argument(
        "--database",
        metavar="URL",
        help="SQLAlchemy URL (default sqlite:///tripletsearch-sessions.sqlite)",
    )
    p.add_argument(
        "--admin-token",
        help="token of the admin export (visible in ps: prefer --admin-token-file or "
        "TRIPLETSEARCH_ADMIN_TOKEN)",
    )
    p.add_argument(
        "--admin-token-file",
        metavar="FILE",
        help=f"read the admin token from this owner-only file, or write a generated one to "
        f"it (default: {DEFAULT_TOKEN_FILE} in the working directory)",
    )
    _add_limit_arguments(p)
    p.add_argument(
        "--gamma",
        type=_gamma_arg,
        default=3.0,
        help="gamma assumed of people (find), or 'auto': inferred per person while searching",
    )
    p.add_argument("--max-queries", type=int, default=300, help="screens per session at most")
    p.add_argument(
        "--memory",
        metavar="SIZE",
        help="memory of each worker process, e.g. 2GB (binary units; a bare number is GiB): "
        "live searches are evicted, least recently used first, to stay within it "
        f"(default: {DEFAULT_SHARE * 100:.0f}%% of the machine's memory, or of the container's "
        "limit, shared among the workers)",
    )
    p.add_argument(
        "--threads",
        type=int,
        metavar="N",
        help="native threads of each search step (default: the machine's cores shared among "
        "the workers; one worker with every core serves a large catalogue best: each answer "
        "is computed once, where several workers would each catch up the sessions they meet)",
    )
    p.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="uvicorn's log level",
    )
    p.set_defaults(func=_serve)


def add_commands(sub: Any) -> None:
    """The ``serve``, ``export``, ``report`` and ``prune`` subcommands of ``tripletsearch``."""
    _add_serve_command(sub)
    e = sub.add_parser("export", help="recorded answers as triplets for Embedding.fit")
    e.add_argument("--database", metavar="URL", help="SQLAlchemy URL (default: the SQLite file)")
    e.add_argument("--out", required=True, metavar="DIR", help="output folder")
    e.add_argument("--catalogue", metavar="PATH", help="the catalogue, for item names")
    e.add_argument("--demo", choices=["colours"], help="the demo catalogue, for item names")
    e.add_argument(
        "--collect",
        metavar="FILE",
        help="a collect file: also fit its models to its triplets and write a catalogue "
        "folder and a study on it",
    )
    e.set_defaults(func=_export)

    r = sub.add_parser("report", help="a study's methods compared (tables and a plot)")
    r.add_argument("--database", metavar="URL", help="SQLAlchemy URL (default: the SQLite file)")
    r.add_argument("--out", required=True, metavar="DIR", help="output folder")
    r.add_argument("--study", metavar="FILE", help="the study file (its catalogue)")
    r.add_argument("--catalogue", metavar="PATH", help="the catalogue, for the fit of gamma")
    r.add_argument("--demo", choices=["colours"], help="the demo catalogue, for the fit")
    r.set_defaults(func=_report)

    q = sub.add_parser("prune", help="delete old finished and abandoned free sessions")
    q.add_argument("--database", metavar="URL", help="SQLAlchemy URL (default: the SQLite file)")
    q.add_argument(
        "--older-than",
        type=float,
        required=True,
        metavar="DAYS",
        help="delete free sessions last active more than DAYS days ago",
    )
    q.add_argument(
        "--abandoned-after",
        type=float,
        default=24.0,
        metavar="HOURS",
        help="an unfinished session without an answer for HOURS is abandoned (default: "
        "%(default)s); unfinished sessions more recent than that are kept",
    )
    q.add_argument("--dry-run", action="store_true", help="count, delete nothing")
    q.set_defaults(func=_prune, demo=None, catalogue=None)
