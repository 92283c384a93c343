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
(:func:`~.export.collect_triplets`; the checks' answers are in ``answers.csv``).

:func:`export_data` gathers them (the admin export, ``GET /api/admin/export``, returns it);
``tripletsearch export`` writes them (:func:`~..commands.export_folder.write_export`), each file
from its declaration (:data:`~..export.TABLES`, every cell by :func:`~..export.cell`).
Files (format version :data:`EXPORT_VERSION`; version 3 renamed ``k``, ``queries`` and
``chosen`` to the library's ``n_choices``, ``n_queries`` and ``item``; version 4 added the
collected triplets and ``triplets_info.csv``; version 5 put the collected triplets in files
of their own and wrote records in cells as JSON; version 6 put the data files in ``data/``,
each named as Psych-DS asks, :data:`~..export.DATA_FILES`: ``triplets.csv`` is
``data/task-search_description-triplets_data.csv``, ...; version 7 wrote every cell by one
rule, :func:`~..export.cell`):

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
``collect_trials.csv``
    Each collected answer that counts as one trial: session, participant, screen, trial
    (``rank`` or ``odd-one-out``), head, candidates and picks in order (item ids
    space-separated), the triplets it implies, sampler, kind, response time.
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
    duplicate, outcome, the completion code they were shown, flags (:mod:`~..participation.roster`).
``export.json``
    Format and library versions, schema version, counts, the files and their sources, the
    experiments the database holds (and the one exported, when one was chosen).
``datapackage.json`` and ``dataset_description.json``
    Written by ``tripletsearch export`` once every CSV of the folder is
    (:func:`~..export.describe_folder`): each CSV's columns, types and descriptions.
"""

from __future__ import annotations

import datetime as _dt
import statistics
from typing import Any

from ... import __version__
from ..catalogue import Catalogue
from ..experiment import listing
from ..export import TABLES
from ..service.recorded import RecordedSession, found_flags
from ..store import SCHEMA_VERSION, Store
from .export import collect_trials, collect_triplets
from .quality import counted_sessions

__all__ = ["export_data", "EXPORT_VERSION", "FILES"]

# 2: undos (kind, undone), study columns; 3: the vocabulary of 0.2.0 (sessions.csv: k ->
# n_choices, queries -> n_queries; choices.csv: chosen -> item); 5: collected triplets in
# collect_triplets.csv, records in cells as JSON; 4: collected triplets,
# triplets_info.csv; 6: the data files in data/, named as Psych-DS asks (DATA_FILES); 7:
# one rule for every cell (export.cell: formula-safe text, true/false, floats rounded); 8:
# collect_trials.csv (each collected answer as one trial) and answers.csv's picks
EXPORT_VERSION = 8
_ITEM_NAMES = ("head_name", "closer_name", "farther_name")
_WHERE = ("session", "participant", "screen", "sampler", "kind", "response_ms")


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
            "picks": h.get("picks"),
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


#: The triplets' files in the export folder -> what they hold (``export.json``'s ``files``).
FILES = {
    TABLES[n].path: TABLES[n].description
    for n in ("triplets.csv", "collect_triplets.csv", "collect_trials.csv")
}


def _named(rows: list[list[int]], info: list[dict], catalogue: Catalogue | None) -> list[dict]:
    """The info records with the three items' names."""
    names = () if catalogue is None else catalogue.names
    for row, where in zip(rows, info):
        for key, item in zip(_ITEM_NAMES, row):
            where[key] = names[item] if 0 <= item < len(names) else None
    cols = TABLES["triplets_info.csv"].names  # (the collect's: the same names)
    return [{k: r.get(k) for k in cols} for r in info]


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
    # the collects' sessions that count, read once for both files (their checks: each one's)
    counted = counted_sessions(store, experiment, answered, fast_server_ms=fast_server_ms)
    for t in collect_triplets(store, counted=counted):
        collected.append(list(t["row"]))
        collected_info.append({"source": "collect", **{k: t[k] for k in _WHERE}})
    trials = collect_trials(store, counted=counted)
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
            "collect_trials": len(trials),
            "choices": len(choices),
        },
        "files": FILES,
        "experiments": listing(store),
        "experiment": experiment,
        "triplets": triplets,
        "triplet_info": _named(triplets, info, catalogue),
        "collect_triplets": collected,
        "collect_triplet_info": _named(collected, collected_info, catalogue),
        "collect_trials": trials,
        "choices": choices,
        "sessions": sessions,
        "answers": answers,
    }
