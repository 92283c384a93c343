"""The participants' table: who took part in an experiment, how it ended, their code, their flags.

One row per participant of a study or a collect, withdrawn ones too (:data:`COLUMNS`: each
column's name, Frictionless type and description). The owner pays, rejects or excludes from
it: the dashboards show it (``GET /api/admin/study``, the collect dashboard's participants)
and every export that holds participants writes it as ``participants.csv``
(:func:`write_participants`); ``tripletsearch codes`` checks a platform's submitted codes
against it (:mod:`.codes`).

A participant's ``outcome`` is the stored one (:func:`~.store.participants.outcome`, the
one rule): ``finished`` (every part done), ``withdrawn`` (they stopped taking part: their
answers are left out of fits, report and export) or ``started`` (neither, yet); finished
and withdrawn are each decided once, never both. Their ``code`` is the completion code they
were shown, recorded with their outcome (``Store.finish``, ``Store.withdraw``): it never
depends on their checks, which a collect's ``flagged``, ``flagged_by`` and ``why`` give
apart (:func:`~.collect.quality.checks`, a study's
:func:`~.study.checks.participant_checks`).
A ``duplicate`` is a second participant of one platform id that a database written before
one participation per id held (schema 7 kept them, without a ``platform_key``).
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any

from ..store import Store
from ..store.participants import OUTCOMES, outcome

__all__ = [
    "COLUMNS",
    "OUTCOMES",
    "roster",
    "participant_record",
    "outcome",
    "is_duplicate",
    "write_participants",
]

#: ``participants.csv``'s columns: (name, Frictionless Data type, description).
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("experiment", "string", "The experiment's name (a study or a collect of the database)."),
    ("participant", "string", "The participant's pseudonymous id (P- and 16 hex digits)."),
    ("number", "integer", "Their enrolment order within the experiment, from 0."),
    ("enrolled", "datetime", "When they enrolled after their consent (UTC, ISO 8601)."),
    (
        "platform_id",
        "string",
        "Their crowdsourcing platform's id (Prolific's PROLIFIC_PID, MTurk's workerId, ...); "
        "empty: none given. One beginning with = + - @, a tab or a carriage return is "
        "written after a ' (never a spreadsheet formula): drop it to get the id.",
    ),
    (
        "platform_params",
        "object",
        "Every parameter of their platform's link, a JSON object; empty: none given.",
    ),
    (
        "duplicate",
        "boolean",
        "A second participant of one platform id, kept from a database written before one "
        "participation per id.",
    ),
    (
        "outcome",
        "string",
        "finished (every part done), withdrawn (stopped taking part: answers left out of "
        "the results) or started (neither yet).",
    ),
    (
        "code",
        "string",
        "The completion code they were shown, as recorded (never depends on their checks); "
        "empty: none shown.",
    ),
    (
        "flagged",
        "boolean",
        "Flagged by the checks on people (a collect's: answers left out of the fits; a "
        "study's: searches reported apart); never changes the code shown.",
    ),
    ("flagged_by", "string", "The check rules that flag them, space-separated."),
    ("why", "string", "Why, a sentence per flag, separated by '; '."),
)
NAMES = [c[0] for c in COLUMNS]


def _iso(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, tz=_dt.timezone.utc).isoformat(timespec="seconds")


def is_duplicate(row: Any) -> bool:
    """Whether participant ``row`` is a kept duplicate: a platform id, no ``platform_key``.

    A participation the owner released (``released``) holds no key and is none.
    """
    released = getattr(row, "released", None)
    return row.platform_id is not None and row.platform_key is None and released is None


def participant_record(row: Any, flags: list[dict], experiment: str = "") -> dict[str, Any]:
    """A participant's row of the table (:data:`COLUMNS`' names as keys); their stored outcome.

    ``flags``: the records of the rules that flag them (``rule``, ``why``: a collect's
    :func:`~.collect.quality.checks`; ``[]``: none).
    """
    params = row.platform_params
    return {
        "experiment": experiment,
        "participant": row.id,
        "number": int(row.number),
        "enrolled": _iso(float(row.created)),
        "platform_id": row.platform_id,
        "platform_params": None if params is None else json.loads(params),
        "duplicate": is_duplicate(row),
        "outcome": outcome(row),
        "code": row.code,
        "flagged": bool(flags),
        "flagged_by": " ".join(f["rule"] for f in flags),
        "why": "; ".join(f["why"] for f in flags),
        # not a column: released by the owner for a fresh start (the dashboards mark it)
        "released": getattr(row, "released", None) is not None,
    }


def roster(
    store: Store,
    key: str,
    *,
    flags: dict[str, list[dict]] | None = None,
    name: str = "",
) -> list[dict[str, Any]]:
    """The participants of the experiment of key ``key``, by enrolment number.

    ``flags``: the records of the rules that flag each participant, by id (a collect's:
    :func:`collect_flags`; None: none); ``name``: the experiment's, in each row.
    """
    flags = flags or {}
    return [
        participant_record(row, flags.get(row.id, []), name)
        for row in store.iter_participants()
        if row.study == key
    ]


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    """A CSV cell of ``participants.csv``.

    A text beginning with one of :data:`FORMULA_STARTS` (a platform id is the
    participant's own text) gets a leading ``'``, so a spreadsheet opening the file shows
    it as text and never runs it as a formula (OWASP's advice on CSV injection).
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_participants(rows: list[dict[str, Any]], out: Any) -> int:
    """Write ``participants.csv`` into folder ``out`` when there are participants; how many.

    ``rows``: the participants' records (:func:`roster`; every experiment's with its kind's
    flags: :func:`~..export.experiment_roster`), one row each, :data:`COLUMNS` in order:
    booleans ``true``/``false``,
    ``platform_params`` as JSON, an absent value empty, a text beginning with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return after a ``'`` (:func:`_cell`: never a formula in
    a spreadsheet). None written for no participant.
    """
    if not rows:
        return 0
    path = Path(os.fspath(out)) / "participants.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(NAMES)
        w.writerows([_cell(r[k]) for k in NAMES] for r in rows)
    return len(rows)
