"""Close the loop: every recorded answer as training data for :class:`~tripletsearch.Embedding`.

A find-mode screen answered with ``choice`` c (a position) by a person whose target t is
known (a study's, or the item the session ended on with ``found``) says "the item at c is
closer to t than every other item shown": one triplet ``(t, item, other)`` per other item,
in the library's row order (head, closer, farther), and one k-item choice ``(t, item,
shown)``. Skips, screens that show the target (not comparisons:
:func:`tripletsearch.outcomes.is_comparison`) and sessions whose target stayed unknown give
no triplets (their answers are still exported, with the mix-mode answers, in
``answers.csv``). A session "found" its target by :func:`tripletsearch.outcomes.found_target`.

The collect mode's answers give triplets too: a pick among k candidates says "the item
picked is closer to the head than every other candidate" (k - 1 triplets), for the answers
to the samplers' and the held-out test queries of participants not flagged by their checks
(:func:`~.collect.export.collect_triplets`; the checks' answers are in ``answers.csv``).

Files written by :func:`write_export` (format version :data:`EXPORT_VERSION`; version 3
renamed ``k``, ``queries`` and ``chosen`` to the library's ``n_choices``, ``n_queries`` and
``item``; version 4 added the collected triplets and ``triplets_info.csv``; version 5 put
the collected triplets in files of their own and wrote records in cells as JSON; version 6
put the data files in ``data/``, each named as Psych-DS asks, :data:`~.datapackage.DATA_FILES`:
``triplets.csv`` is ``data/task-search_description-triplets_data.csv``, ...):

``triplets.csv``
    The searches' triplets: ``head,closer,farther`` item ids, ready for ``Embedding.fit``
    (read with ``np.loadtxt(path, delimiter=",", skiprows=1, dtype=int)``): integers only.
``triplets_info.csv``
    Row for row with ``triplets.csv``: ``source`` (``search``), session, participant,
    screen, and the three items' names (given the catalogue).
``collect_triplets.csv`` and ``collect_triplets_info.csv``
    The same for the triplets collected from people (``source`` ``collect``, with the
    collect's key, the sampler and kind of query and the response time the page measured,
    in ms): the two sources are never mixed in one file.
``choices.csv``
    ``session,screen,target,item,shown`` (item: the id picked; shown: space-separated ids).
``sessions.csv``
    One row per session: mode, n_choices, study participant/slot/method, found, n_queries,
    queries_to_find, target, undos, time per answer.
``answers.csv``
    Every answer and undo: session, screen, mode, kind, choice, found, undone, seconds,
    what was shown (a list of item ids space-separated; a record, JSON: a find screen
    with a strip of guesses ``{"shown", "offered"}``, its ``choice`` counting along both).
``participants.csv``
    When the export holds participants: one row per participant of a study or collect,
    withdrawn ones too: experiment, id, number, enrolled, platform id and parameters,
    duplicate, outcome, the completion code they were shown, flags (:mod:`.participation.roster`).
``export.json``
    Format and library versions, schema version, counts, the files and their sources, the
    experiments the database holds (and the one exported, when one was chosen).
``datapackage.json`` and ``dataset_description.json``
    Written by ``tripletsearch export`` once every CSV of the folder is
    (:func:`~.datapackage.describe_folder`): each CSV's columns, types and descriptions.
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import os
import statistics
from pathlib import Path
from typing import Any, Callable

from .. import __version__
from .catalogue import Catalogue
from .collect.agreement import collect_flags
from .collect.export import collect_triplets
from .datapackage import DATA_DIR, data_path
from .experiment import listing
from .participation.roster import roster, write_participants
from .service.recorded import RecordedSession, found_flags
from .store import SCHEMA_VERSION, Store
from .study.checks import study_flags

__all__ = [
    "export_data",
    "write_export",
    "check_out",
    "experiment_roster",
    "FLAGS",
    "EXPORT_VERSION",
]

# 2: undos (kind, undone), study columns; 3: the vocabulary of 0.2.0 (sessions.csv: k ->
# n_choices, queries -> n_queries; choices.csv: chosen -> item); 5: collected triplets in
# collect_triplets.csv, records in cells as JSON; 4: collected triplets,
# triplets_info.csv; 6: the data files in data/, named as Psych-DS asks (DATA_FILES)
EXPORT_VERSION = 6
INFO_COLUMNS = [
    "source",
    "session",
    "participant",
    "screen",
    "sampler",
    "kind",
    "response_ms",
    "head_name",
    "closer_name",
    "farther_name",
]


def _iso(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, tz=_dt.timezone.utc).isoformat(timespec="seconds")


def _answer_rows(rec: RecordedSession) -> list[dict[str, Any]]:
    """Every answer and undo of a session, as ``answers.csv`` has them."""
    return [
        {
            "session": rec.row.id,
            "screen": h["number"],
            "mode": rec.row.mode,
            "kind": h["kind"],
            "choice": h["choice"],
            "found": h["found"],
            "undone": h["undone"],
            "seconds": round(h["answered_at"] - h["shown_at"], 3),
            "shown": rec.mode.shown_record(h["payload"], h["query"]),
        }
        for h in rec.history
    ]


def _session_row(rec: RecordedSession, found: bool, catalogue: Catalogue | None) -> dict:
    """A session's line of ``sessions.csv``."""
    row, target = rec.row, rec.target
    name = None
    if target is not None and catalogue is not None and 0 <= target < catalogue.n_items:
        name = catalogue.names[target]
    secs = [h["answered_at"] - h["shown_at"] for h in rec.history]
    return {
        "session": row.id,
        "mode": row.mode,
        "n_choices": row.n_choices,
        "library": row.library,
        "created": _iso(row.created),
        "done": row.done,
        "participant": row.participant,
        "slot": row.slot,
        "method": row.params.get("method"),
        "found": found,
        "n_queries": row.n_queries,
        "queries_to_find": row.n_queries if found else None,
        "undos": row.undos,
        "target": target,
        "target_name": name,
        "seconds_total": round(sum(secs), 3),
        "seconds_per_answer_median": round(statistics.median(secs), 3) if secs else None,
    }


FILES = {  # (the data files' paths in the export folder: datapackage.DATA_FILES)
    data_path("triplets.csv"): "searches: the triplets of answers to screens without the "
    "target, of sessions whose target is known (a study's, or the item found)",
    data_path("collect_triplets.csv"): "collects: the triplets people gave to the samplers' "
    "and the held-out test queries (participants flagged by their checks or withdrawn left "
    "out)",
}


def _named(rows: list[list[int]], info: list[dict], catalogue: Catalogue | None) -> list[dict]:
    """The info records with the three items' names."""
    names = () if catalogue is None else catalogue.names
    for row, where in zip(rows, info):
        for key, item in zip(INFO_COLUMNS[7:], row):
            where[key] = names[item] if 0 <= item < len(names) else None
    return [{k: r.get(k) for k in INFO_COLUMNS} for r in info]


def export_data(
    store: Store,
    catalogue: Catalogue | None = None,
    experiment: str | None = None,
    *,
    fast_server_ms: float | None = None,
) -> dict[str, Any]:
    """Everything recorded in ``store``, as JSON-ready lists (see the module docstring).

    ``catalogue`` adds item names to the sessions. ``experiment``: the key of one study or
    collect (None: every session of the database), the sessions that belong to it
    (``SessionRow.experiment``). ``fast_server_ms``: the server's clock check of the
    collected triplets (:func:`~.collect.quality.checks`).
    """
    answered = store.all_answers()
    recorded = [
        RecordedSession(row, answered.get(row.id, []))
        for row in store.iter_sessions(experiment=experiment)
    ]
    triplets: list[list[int]] = []
    info: list[dict[str, Any]] = []
    choices: list[dict[str, Any]] = []
    sessions: list[dict[str, Any]] = []
    answers: list[dict[str, Any]] = []
    for rec, found in zip(recorded, found_flags(recorded)):
        answers.extend(_answer_rows(rec))
        target = rec.target
        for c in rec.choices:
            assert target is not None  # choices need a known target
            for o in c.shown:
                if o != c.item:
                    triplets.append([target, c.item, o])
                    info.append(
                        {
                            "source": "search",
                            "session": rec.row.id,
                            "participant": rec.row.participant,
                            "screen": c.screen,
                        }
                    )
            choices.append(
                {
                    "session": rec.row.id,
                    "screen": c.screen,
                    "target": target,
                    "item": c.item,
                    "shown": c.shown,
                }
            )
        sessions.append(_session_row(rec, bool(found), catalogue))
    collected, collected_info = [], []
    for t in collect_triplets(store, answered, experiment, fast_server_ms=fast_server_ms):
        collected.append(list(t["row"]))
        collected_info.append({"source": "collect", **{k: t[k] for k in INFO_COLUMNS[1:7]}})
    return {
        "format": "tripletsearch.export",
        "version": EXPORT_VERSION,
        "library": __version__,
        "schema_version": SCHEMA_VERSION,
        "exported_at": _iso(_dt.datetime.now(tz=_dt.timezone.utc).timestamp()),
        "counts": {
            "sessions": len(sessions),
            "answers": len(answers),
            "triplets": len(triplets),
            "collect_triplets": len(collected),
            "choices": len(choices),
        },
        "files": FILES,
        "experiments": listing(store),
        "experiment": experiment,
        "triplets": triplets,
        "triplet_info": _named(triplets, info, catalogue),
        "collect_triplets": collected,
        "collect_triplet_info": _named(collected, collected_info, catalogue),
        "choices": choices,
        "sessions": sessions,
        "answers": answers,
    }


def _write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def _cell(v: Any) -> Any:
    """A CSV cell: lists space-separated, a record (a dict) as JSON, None empty."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return " ".join(str(x) for x in v)
    if isinstance(v, dict):
        return json.dumps(v, sort_keys=True)
    return v


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
    new folder that replaces ``--out`` whole (:func:`~.outfolder.publish`).
    """
    data = export_data(store, catalogue, experiment, fast_server_ms=fast_server_ms)
    top = Path(os.fspath(out))
    (top / DATA_DIR).mkdir(parents=True, exist_ok=True)

    def at(name: str) -> Path:  # a data file's path, as Psych-DS names it (DATA_FILES)
        return top / data_path(name)

    for prefix, rows, info in (
        ("", data["triplets"], data["triplet_info"]),
        ("collect_", data["collect_triplets"], data["collect_triplet_info"]),
    ):
        _write_csv(at(f"{prefix}triplets.csv"), ["head", "closer", "farther"], rows)
        _write_csv(
            at(f"{prefix}triplets_info.csv"),
            INFO_COLUMNS,
            [[_cell(r[k]) for k in INFO_COLUMNS] for r in info],
        )
    _write_csv(
        at("choices.csv"),
        ["session", "screen", "target", "item", "shown"],
        [
            [_cell(c[k]) for k in ("session", "screen", "target", "item", "shown")]
            for c in data["choices"]
        ],
    )
    scols = list(data["sessions"][0]) if data["sessions"] else ["session"]
    _write_csv(at("sessions.csv"), scols, [[_cell(s[k]) for k in scols] for s in data["sessions"]])
    acols = ["session", "screen", "mode", "kind", "choice", "found", "undone", "seconds", "shown"]
    _write_csv(at("answers.csv"), acols, [[_cell(a[k]) for k in acols] for a in data["answers"]])
    keys = ("format", "version", "library", "schema_version", "exported_at", "counts", "files")
    meta = {k: data[k] for k in (*keys, "experiments", "experiment")}
    (top / "export.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    rows = experiment_roster(store, experiment, fast_server_ms=fast_server_ms)
    if write_participants(rows, top):
        (top / "participants.csv").replace(at("participants.csv"))  # Psych-DS's place
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
    of the database was started from (:func:`~.experiment.experiment_files`), or one of
    ``files`` (the files the command reads: a collect file, its catalogue): ``--force``
    would delete it, and even a new folder there would be wrong. Paths are compared
    resolved (relative to the working directory, symlinks followed).
    """
    from .experiment import experiment_files

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
    import tempfile

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


#: What a spreadsheet reads as the start of a formula (or hides one behind): a text cell
#: beginning with one of these is written with a ``'`` before it (:func:`_cell`).
