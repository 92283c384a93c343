"""``tripletsearch report``: one study's methods compared (:mod:`~..study.report`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..experiment import bind
from ..study import load_study
from ..study.report import format_report, write_report
from .common import chosen, fast_of, with_store

__all__ = ["main"]


def main(args: argparse.Namespace) -> int:
    """``tripletsearch report``: one study's methods compared, into ``--out``."""

    def work(store: Any, cat: Any) -> int:
        study = None
        if args.study:  # (a study under way: what it began with)
            study = bind(load_study(args.study), store, register=False)
            cat = study.catalogue
        found = chosen(store, "study", args.name, study)
        if found is None:
            print("no study searches in this database", file=sys.stderr)
            return 1
        rep = write_report(store, args.out, cat, found["key"], **fast_of(args))
        if not rep["searches"]:
            print(f"no searches in study {found['name']!r}", file=sys.stderr)
            return 1
        out = Path(args.out).resolve()
        print(f"study {found['name']!r}")
        print(format_report(rep))
        print(rep["plot_note"] or f"plot: {out / 'cdf.png'}")
        print(f"written to {out}")
        return 0

    return with_store(args, work)
