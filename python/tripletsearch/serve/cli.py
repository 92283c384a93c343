"""The parsers of ``tripletsearch serve``, ``export``, ``report`` and ``prune``.

What each command does is in :mod:`.commands`; both are imported only when the command
line runs, and neither imports the service's dependencies before a command needs them.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from importlib import import_module
from typing import Any

from .catalogue import DEMOS
from .clock import FAST_SERVER_MS
from .commands import DEFAULT_TOKEN_FILE, admin_token
from .config import GAMMA, HSTS_MAX_AGE, MAX_GUESSES, MAX_QUERIES, Limits, check_gamma
from .participation.platforms import PLATFORMS
from .service.memory import DEFAULT_SHARE

__all__ = ["add_commands", "admin_token", "DEFAULT_TOKEN_FILE"]

LIMITS = Limits()  # serve's limits unless told (a ServeConfig's own default: none)


_MISSING = (
    "tripletsearch serve needs the optional 'serve' dependencies: "
    "pip install 'tripletsearch[serve]'"
)


def _command(name: str) -> Any:
    """The function that runs command ``name``: its module's ``main``, imported then.

    The one place the command line imports what a command needs (start-up: the parsers
    import no store, app or embedding), after checking that the 'serve' extra is installed
    (missing: one line on stderr, exit code 2).
    """

    def run(args: argparse.Namespace) -> int:
        extra = ("starlette", "uvicorn", "sqlalchemy")
        missing = [m for m in extra if not importlib.util.find_spec(m)]
        if missing:
            print(f"error: {_MISSING} (missing: {', '.join(missing)})", file=sys.stderr)
            return 2
        return int(import_module(f"{__package__}.commands.{name}").main(args))

    return run


def _guesses_arg(text: str) -> int:
    """--guesses: an integer from 0 to MAX_GUESSES."""
    if not text.isdigit() or int(text) > MAX_GUESSES:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to {MAX_GUESSES}")
    return int(text)


def _gamma_arg(text: str) -> float | str:
    """--gamma: a number > 0 or "auto"."""
    try:
        return check_gamma(text if text == "auto" else float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0 or 'auto', got {text!r}") from None


def _add_limit_arguments(p: argparse.ArgumentParser) -> None:
    """``serve``'s options of :class:`~.config.Limits` (its defaults: :data:`LIMITS`)."""
    p.add_argument(
        "--sessions-per-minute",
        type=int,
        default=LIMITS.sessions_per_minute,
        metavar="N",
        help="free sessions one client address may start per minute, per worker (0: no "
        "limit; default: %(default)s)",
    )
    p.add_argument(
        "--enrolments-per-minute",
        type=int,
        default=LIMITS.enrolments_per_minute,
        metavar="N",
        help="study participants one client address may enrol per minute, per worker (0: "
        "no limit; default: %(default)s)",
    )
    p.add_argument(
        "--max-open-sessions",
        type=int,
        default=LIMITS.max_open_sessions,
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


def _add_tls_arguments(p: argparse.ArgumentParser) -> None:
    """``serve``'s HTTPS options (uvicorn's TLS; checked by :func:`~.web.tls.tls_options`)."""
    g = p.add_argument_group(
        "HTTPS (uvicorn's TLS, every worker; a renewed certificate takes a restart)"
    )
    g.add_argument(
        "--ssl-certfile",
        metavar="PEM",
        help="serve HTTPS with this certificate (its chain after it); with --ssl-keyfile",
    )
    g.add_argument("--ssl-keyfile", metavar="PEM", help="the certificate's private key")
    g.add_argument(
        "--ssl-keyfile-password",
        metavar="PASSWORD",
        help="the key's password (visible in ps: prefer --ssl-keyfile-password-file or "
        "the TRIPLETSEARCH_SSL_KEYFILE_PASSWORD environment variable)",
    )
    g.add_argument(
        "--ssl-keyfile-password-file",
        metavar="FILE",
        help="read the key's password from this owner-only file (its first line)",
    )
    g.add_argument(
        "--hsts-max-age",
        type=int,
        default=HSTS_MAX_AGE,
        metavar="SECONDS",
        help="over HTTPS, every reply says Strict-Transport-Security: max-age=SECONDS "
        "(default: %(default)s, a year; 0: not sent); plain HTTP never sends it",
    )


def _add_serve_command(sub: Any) -> None:
    """``serve``'s parser."""
    p = sub.add_parser("serve", help="the search service: a JSON API and a page")
    src = p.add_argument_group("catalogue (one of)")
    src.add_argument("--catalogue", metavar="PATH", help="a catalogue folder or CSV file")
    src.add_argument("--demo", choices=DEMOS, help="a bundled demo catalogue")
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
    _add_tls_arguments(p)
    p.add_argument(
        "--gamma",
        type=_gamma_arg,
        default=GAMMA,
        help="gamma assumed of people (find), or 'auto': inferred per person while searching",
    )
    p.add_argument(
        "--max-queries", type=int, default=MAX_QUERIES, help="screens per session at most"
    )
    p.add_argument(
        "--guesses",
        type=_guesses_arg,
        default=0,
        help=f"best guesses shown under each screen of a free search (0 to {MAX_GUESSES}; "
        "default 0: none, the paper's protocol); a study's come from its file",
    )
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
        "--fast-server-ms",
        type=float,
        metavar="MS",
        help="a collect's check on people: a participant whose median time per screen by the "
        "server's clock is under MS is flagged, their answers not counted (default: "
        f"{FAST_SERVER_MS:g}; 0: never)",
    )
    p.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="uvicorn's log level",
    )
    p.set_defaults(func=_command("serve"))


def add_commands(sub: Any) -> None:
    """The ``serve``, ``export``, ``report`` and ``prune`` subcommands of ``tripletsearch``."""
    _add_serve_command(sub)
    e = sub.add_parser("export", help="recorded answers as triplets for Embedding.fit")
    e.add_argument("--database", metavar="URL", help="SQLAlchemy URL (default: the SQLite file)")
    e.add_argument("--out", required=True, metavar="DIR", help="output folder")
    e.add_argument("--catalogue", metavar="PATH", help="the catalogue, for item names")
    e.add_argument("--demo", choices=DEMOS, help="the demo catalogue, for item names")
    e.add_argument(
        "--collect",
        metavar="FILE",
        help="a collect file: also fit its models to its triplets and write a catalogue "
        "folder and a study on it",
    )
    e.add_argument(
        "--name",
        metavar="NAME",
        help="export only this study or collect (the command lists those the database holds)",
    )
    e.add_argument(
        "--force",
        action="store_true",
        help="replace an earlier export in --out whole (default: refuse a non-empty --out; "
        "a folder holding anything but an export's own files, or a link, is refused even so)",
    )
    e.add_argument(
        "--title",
        metavar="TEXT",
        help="with --collect: the title of the study written (default: the collect's), "
        "which its participants see",
    )
    e.add_argument(
        "--fast-server-ms",
        type=float,
        metavar="MS",
        help="the collect checks' bound on the median time per screen by the server's clock, "
        f"as the server ran with (default: {FAST_SERVER_MS:g}; 0: never)",
    )
    e.set_defaults(func=_command("export"))

    r = sub.add_parser("report", help="a study's methods compared (tables and a plot)")
    r.add_argument("--database", metavar="URL", help="SQLAlchemy URL (default: the SQLite file)")
    r.add_argument("--out", required=True, metavar="DIR", help="output folder")
    r.add_argument("--study", metavar="FILE", help="the study file (its catalogue)")
    r.add_argument("--catalogue", metavar="PATH", help="the catalogue, for the fit of gamma")
    r.add_argument("--demo", choices=DEMOS, help="the demo catalogue, for the fit")
    r.add_argument(
        "--name",
        metavar="NAME",
        help="the study to report when the database holds several (the command lists them)",
    )
    r.add_argument(
        "--fast-server-ms",
        type=float,
        metavar="MS",
        help="the study checks' bound on the median time per screen by the server's clock, "
        f"as the server ran with (default: {FAST_SERVER_MS:g}; 0: never)",
    )
    r.set_defaults(func=_command("report"))

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
    q.set_defaults(func=_command("prune"), demo=None, catalogue=None)
    _add_codes_command(sub)
    _add_release_command(sub)


def _add_codes_command(sub: Any) -> None:
    """The ``codes`` subcommand's parser, added to ``tripletsearch``'s subparsers ``sub``."""
    k = sub.add_parser("codes", help="check a platform's submitted completion codes")
    k.add_argument("--database", metavar="URL", help="SQLAlchemy URL (default: the SQLite file)")
    k.add_argument("--check", required=True, metavar="FILE", help="the platform's CSV export")
    k.add_argument(
        "--platform",
        choices=list(PLATFORMS),
        default="prolific",
        help="the export's default columns (default: %(default)s)",
    )
    k.add_argument("--id-column", metavar="NAME", help="the column of platform ids")
    k.add_argument("--code-column", metavar="NAME", help="the column of submitted codes")
    k.add_argument(
        "--status-column",
        metavar="NAME",
        help="the column of submission statuses (default: Status on Prolific, "
        "AssignmentStatus on MTurk and CloudResearch)",
    )
    k.add_argument("--experiment", metavar="NAME", help="the study or collect, when several")
    k.add_argument(
        "--fast-server-ms",
        type=float,
        metavar="MS",
        help="the collect checks' server-clock bound, as the server ran with",
    )
    k.set_defaults(func=_command("codes"), demo=None, catalogue=None)


def _add_release_command(sub: Any) -> None:
    """The ``participants`` subcommand (``release``), added to ``tripletsearch``'s ``sub``."""
    p = sub.add_parser("participants", help="an experiment's participants: release one")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    r = actions.add_parser(
        "release",
        help="release a participation for a fresh start (a retake, a re-accepted HIT, "
        "squatting): kept, marked released; the next visit of its id enrols anew",
    )
    r.add_argument("--database", metavar="URL", help="SQLAlchemy URL (default: the SQLite file)")
    r.add_argument("--experiment", metavar="NAME", help="the study or collect, when several")
    who = r.add_mutually_exclusive_group(required=True)
    who.add_argument("--platform-id", metavar="ID", help="the participant's platform id")
    who.add_argument("--participant", metavar="P-...", help="the participant's id")
    r.set_defaults(func=_command("participants"), demo=None, catalogue=None)
