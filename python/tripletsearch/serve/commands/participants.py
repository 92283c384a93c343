"""``tripletsearch participants release``: the command (:mod:`~..participation.release`)."""

from __future__ import annotations

from typing import Any

from ..participation.release import release

__all__ = ["run", "add_parser"]


def run(args: Any) -> int:
    """``tripletsearch participants release``: exit 0 when released, 2 on bad input."""
    from . import _with_store, named_experiment

    def work(store: Any, cat: Any) -> int:

        found = named_experiment(store, args.experiment)
        print(release(store, found["key"], args.platform_id, args.participant))
        return 0

    return _with_store(args, work)


def add_parser(sub: Any) -> None:
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
    r.set_defaults(func=run, demo=None, catalogue=None)
