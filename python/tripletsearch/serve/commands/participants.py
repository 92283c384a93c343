"""``tripletsearch participants release``: the command (:mod:`~..participation.release`)."""

from __future__ import annotations

from typing import Any

from ..participation.release import release
from .common import named_experiment, with_store

__all__ = ["main"]


def main(args: Any) -> int:
    """``tripletsearch participants release``: exit 0 when released, 2 on bad input."""

    def work(store: Any, cat: Any) -> int:
        found = named_experiment(store, args.experiment)
        print(release(store, found["key"], args.platform_id, args.participant))
        return 0

    return with_store(args, work)
