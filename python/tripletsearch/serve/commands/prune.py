"""``tripletsearch prune``: delete old finished and abandoned free sessions."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from .common import with_store

__all__ = ["main"]


def main(args: argparse.Namespace) -> int:
    """``tripletsearch prune``: delete old finished and abandoned free sessions."""
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

    return with_store(args, work)
