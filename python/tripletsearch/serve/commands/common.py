"""What several commands share: the database, catalogue and experiment the arguments name."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..catalogue import DEMOS, demo_catalogue, load_catalogue
from ..config import Limits
from ..experiment import describe, listing, pick
from ..store import Store, StoreError, default_url

__all__ = ["catalogue_of", "limits_of", "fast_of", "with_store", "chosen", "named_experiment"]


def catalogue_of(args: argparse.Namespace) -> Any:
    """The catalogue ``--demo`` or ``--catalogue`` names (None: neither; refuses both)."""
    given = [g for g in (args.demo, args.catalogue, getattr(args, "study", None)) if g]
    if len(given) > 1:
        raise ValueError(f"give one of --catalogue PATH, --demo {'/'.join(DEMOS)}, --study FILE")
    if args.demo:
        return demo_catalogue(args.demo)
    if args.catalogue:
        return load_catalogue(args.catalogue)
    return None


def limits_of(args: argparse.Namespace) -> Any:
    """The :class:`~..config.Limits` of the command line (ValueError naming a bad one)."""
    return Limits(
        sessions_per_minute=args.sessions_per_minute,
        enrolments_per_minute=args.enrolments_per_minute,
        max_open_sessions=args.max_open_sessions,
        trusted_proxies=frozenset(args.trusted_proxy or ()),
    )


def fast_of(args: argparse.Namespace) -> dict[str, Any]:
    """``--fast-server-ms`` as a setting (none given: the default's)."""
    ms = getattr(args, "fast_server_ms", None)
    if ms is None:
        return {}
    if not 0 <= ms < float("inf"):
        raise ValueError(f"--fast-server-ms: expected a number >= 0, got {ms}")
    return {"fast_server_ms": ms}


def with_store(args: argparse.Namespace, work: Any) -> int:
    """``work(store, catalogue)`` on the database of ``--database`` and the arguments' catalogue.

    The database is checked; a bad file or database prints the error, exit code 2.
    """
    try:
        cat = catalogue_of(args)
        store = Store.existing(args.database or default_url())
        return int(work(store, cat))
    except (ValueError, FileNotFoundError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def chosen(store: Any, kind: str | None, name: str | None, bound: Any = None) -> Any:
    """The experiment to report or export; the database's listing printed first.

    The file's (``bound``), ``--name``'s, or the database's only one of ``kind`` (None:
    none).
    """
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
    try:
        found = pick(listing(store), None, name)
    except ValueError as exc:
        raise ValueError(str(exc).replace("--name:", "--experiment:", 1)) from None
    if found is None:
        raise ValueError("--experiment: this database holds no study or collect")
    return found
