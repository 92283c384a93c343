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
from .common import fast_of, named_experiment, with_store
from .export_folder import experiment_roster

__all__ = ["main"]


def main(args: Any) -> int:
    """``tripletsearch codes``: a platform's submitted codes checked against the records.

    Exit 0 when every submitted code matches its record, 1 when any does not or an id
    submitted twice, 2 on bad input (one line on stderr).
    """
    id_column, code_column = PLATFORM_COLUMNS[args.platform]

    def work(store: Any, cat: Any) -> int:
        found = named_experiment(store, args.experiment)
        status = args.status_column or STATUS_COLUMNS.get(args.platform)
        submitted, read = read_submissions(
            args.check,
            args.id_column or id_column,
            args.code_column or code_column,
            status,
            status_required=args.status_column is not None,
        )
        roster = experiment_roster(store, found["key"], **fast_of(args))
        result = check_codes(roster, submitted, args.platform)
        if status is not None and not read:
            result["no_status"] = repr(status)
        print("\n".join(describe_check(result)))
        return 1 if result["mismatched"] or result["unknown"] or result["twice"] else 0

    return with_store(args, work)
