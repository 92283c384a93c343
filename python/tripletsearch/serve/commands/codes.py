"""``tripletsearch codes``: the command (its rules: :mod:`~..participation.codes`)."""

from __future__ import annotations

from typing import Any

from ..participation.codes import (
    PLATFORM_COLUMNS,
    STATUS_COLUMNS,
    check_codes,
    describe_check,
    read_submissions,
)
from ..participation.platforms import PLATFORMS

__all__ = ["run", "add_parser"]


def run(args: Any) -> int:
    """``tripletsearch codes``: a platform's submitted codes checked against the records.

    Exit 0 when every submitted code matches its record, 1 when any does not or an id
    submitted twice, 2 on bad input (one line on stderr).
    """
    from . import _fast, _with_store, named_experiment

    id_column, code_column = PLATFORM_COLUMNS[args.platform]

    def work(store: Any, cat: Any) -> int:
        from .export_folder import experiment_roster

        found = named_experiment(store, args.experiment)
        status = args.status_column or STATUS_COLUMNS.get(args.platform)
        submitted, read = read_submissions(
            args.check,
            args.id_column or id_column,
            args.code_column or code_column,
            status,
            status_required=args.status_column is not None,
        )
        roster = experiment_roster(store, found["key"], **_fast(args))
        result = check_codes(roster, submitted, args.platform)
        if status is not None and not read:
            result["no_status"] = repr(status)
        print("\n".join(describe_check(result)))
        return 1 if result["mismatched"] or result["unknown"] or result["twice"] else 0

    return _with_store(args, work)


def add_parser(sub: Any) -> None:
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
    k.set_defaults(func=run, demo=None, catalogue=None)
