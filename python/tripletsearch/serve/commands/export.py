"""``tripletsearch export``: everything (or one experiment) into a new ``--out``.

The folder's files are written by :mod:`.export_folder`; a collect's fits by
:func:`~..collect.export.write_collect_export`; every CSV described (:mod:`..export`).
"""

from __future__ import annotations

import argparse
import csv
import shutil
from pathlib import Path
from typing import Any

from ..collect.export import write_collect_export
from ..collect.file import load_collect
from ..experiment import bind, describe, listing
from ..export import data_path, describe_folder
from ..export.outfolder import check_replaceable, publish
from .common import chosen, fast_of, with_store
from .export_folder import check_out, fresh_folder, write_export

__all__ = ["main"]


def main(args: argparse.Namespace) -> int:
    """``tripletsearch export``: everything (or one experiment) into a new ``--out``."""

    def work(store: Any, cat: Any) -> int:
        config = None
        if args.collect:
            if cat is not None:
                raise ValueError("--collect names the catalogue: no --catalogue or --demo too")
            config = bind(load_collect(args.collect), store, register=False)
            cat = config.catalogue
        elif getattr(args, "title", None) is not None:
            raise ValueError("--title: the title of the study an export --collect writes")
        out = Path(args.out)
        check_out(out, store, _read_files(args.collect, config))
        if args.name is None and config is None:  # no name: every session of the database
            print(describe(listing(store)))
            picked = None
        else:
            picked = chosen(store, "collect" if config else None, args.name, config)
        check_replaceable(out, force=args.force)  # before anything is written
        folder = fresh_folder(out)  # written whole, then put in the place of --out
        fast = fast_of(args)  # the collect checks' server clock, as the server ran with
        try:
            with store.snapshot():  # one read: what is written is what is fitted
                key = None if picked is None else picked["key"]
                counts = write_export(store, folder, cat, key, **fast)
                rows = _collected(folder) if config is not None else None
            fitted = None
            if config is not None:
                fitted = write_collect_export(
                    store, config, args.collect, folder, rows, title=args.title, **fast
                )
            describe_folder(folder, title=picked["name"] if picked else "tripletsearch export")
            where = publish(folder, out, force=args.force)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        what = "every session" if picked is None else f"{picked['kind']} {picked['name']!r}"
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

    return with_store(args, work)


def _read_files(collect_file: str | None, config: Any) -> list[Any]:
    """The files an export reads: the collect file and its catalogue's folder (or none)."""
    return [] if config is None else [collect_file, config.catalogue.root]


def _collected(folder: Path) -> list[list[int]]:
    """The collected triplets the export wrote (``collect_triplets.csv``), to fit."""
    with open(folder / data_path("collect_triplets.csv"), newline="") as fh:
        return [[int(v) for v in row] for row in list(csv.reader(fh))[1:]]
