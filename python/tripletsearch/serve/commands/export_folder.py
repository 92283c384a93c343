"""``tripletsearch export``: an export folder written whole, then put in place of ``--out``.

:func:`write_export` writes every file of :mod:`~..collect.training` (what each holds; the
recorded answers gathered by :func:`~..collect.training.export_data`) and the participants'
table of every experiment (:func:`experiment_roster`), each CSV from its declaration
(:data:`~..export.TABLES`, one cell rule: :func:`~..export.cell`); :func:`check_out`
refuses an ``--out`` whose replacement would delete what must stay, and the export goes
into a :func:`fresh_folder` before it is published (:func:`~..export.outfolder.publish`).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

from ..catalogue import Catalogue
from ..collect.agreement import collect_flags
from ..collect.training import export_data
from ..experiment import experiment_files, listing
from ..export import TABLES, write_table
from ..participation.roster import roster, write_participants
from ..store import Store
from ..study.checks import study_flags

__all__ = [
    "export_data",
    "write_export",
    "check_out",
    "fresh_folder",
    "experiment_roster",
    "FLAGS",
]


def write_export(
    store: Store,
    out: Any,
    catalogue: Catalogue | None = None,
    experiment: str | None = None,
    *,
    fast_server_ms: float | None = None,
) -> dict[str, Any]:
    """Write the export files into the folder ``out`` (created); returns the counts.

    ``experiment``: the key of the one study or collect to export (None: every session).
    ``fast_server_ms``: as :func:`export_data`'s. ``tripletsearch export`` writes into a
    new folder that replaces ``--out`` whole (:func:`~..export.outfolder.publish`).
    """
    data = export_data(store, catalogue, experiment, fast_server_ms=fast_server_ms)
    top = Path(os.fspath(out))
    top.mkdir(parents=True, exist_ok=True)
    for prefix, rows, info in (
        ("", data["triplets"], data["triplet_info"]),
        ("collect_", data["collect_triplets"], data["collect_triplet_info"]),
    ):
        triplets = TABLES[f"{prefix}triplets.csv"]
        write_table(top, triplets, (dict(zip(triplets.names, r)) for r in rows))
        write_table(top, TABLES[f"{prefix}triplets_info.csv"], info)
    write_table(top, TABLES["collect_trials.csv"], data["collect_trials"])
    for name in ("choices", "sessions", "answers"):
        write_table(top, TABLES[f"{name}.csv"], data[name])
    keys = ("format", "version", "library", "schema_version", "exported_at", "counts", "files")
    meta = {k: data[k] for k in (*keys, "experiments", "experiment")}
    (top / "export.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    write_participants(experiment_roster(store, experiment, fast_server_ms=fast_server_ms), top)
    return data["counts"]


def _database_file(store: Store) -> Path | None:
    """The SQLite file of ``store`` (None: another database, or one in memory)."""
    url = store.url
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(str(url.database))


def check_out(out: Any, store: Store, files: Any = ()) -> None:
    """Refuse an ``--out`` whose replacement would delete what must stay (one-line ValueError).

    ``out`` is or holds the SQLite database (or its journal), or holds a file any experiment
    of the database was started from (:func:`~..experiment.experiment_files`), or one of
    ``files`` (the files the command reads: a collect file, its catalogue): ``--force``
    would delete it, and even a new folder there would be wrong. Paths are compared
    resolved (relative to the working directory, symlinks followed).
    """
    target = Path(os.fspath(out)).resolve()

    def within(path: Any) -> bool:
        p = Path(os.fspath(path)).resolve()
        return p == target or target in p.parents

    db = _database_file(store)
    if db is not None:
        for part in (db, *(db.with_name(db.name + x) for x in ("-wal", "-shm", "-journal"))):
            if within(part):
                how = "is" if Path(part).resolve() == target else "holds"
                raise ValueError(
                    f"--out: {target} {how} the database {db.resolve()}; --out is a new folder "
                    "(replaced whole with --force): give one elsewhere"
                )
    known = [(kind, name, f) for kind, name, f in experiment_files(store)]
    known += [("", "", os.fspath(f)) for f in files if f is not None]
    for kind, name, f in known:
        if os.path.exists(f) and within(f):
            whose = f", the file of {kind} {name!r} in this database" if kind else ""
            raise ValueError(
                f"--out: {target} holds {Path(f).resolve()}{whose}; --out is a new folder "
                "(replaced whole with --force): give one elsewhere"
            )


def fresh_folder(out: Any) -> Path:
    """A new, empty folder beside ``out`` for an export (then :func:`~.outfolder.publish`)."""
    target = Path(os.fspath(out)).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))


#: Per kind of experiment, what flags its participants (key, fast_server_ms) -> flags.
FLAGS: dict[str, Callable[[Store, str, float | None], dict[str, list[dict]]]] = {
    "collect": collect_flags,
    "study": study_flags,
}


def experiment_roster(
    store: Store, experiment: str | None = None, *, fast_server_ms: float | None = None
) -> list[dict[str, Any]]:
    """The participants of every experiment ``store`` holds (or of the one of key ``experiment``).

    Each experiment's kind from the database (its flags: :data:`FLAGS`); rows by
    experiment name, then enrolment number. ``fast_server_ms``: a collect's server-clock
    check.
    """
    out: list[dict[str, Any]] = []
    for found in listing(store):
        if experiment is not None and found["key"] != experiment:
            continue
        flagger = FLAGS.get(found["kind"])
        flags = None if flagger is None else flagger(store, found["key"], fast_server_ms)
        out += roster(store, found["key"], flags=flags, name=found["name"])
    return out
