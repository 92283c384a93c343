"""The participants' table: who took part in an experiment, how it ended, their code, their flags.

One row per participant of a study or a collect, withdrawn ones too (its columns: the
declaration ``TABLES["participants.csv"]`` of :mod:`~..export`, each column's name,
Frictionless type and description). The owner pays, rejects or excludes from it: the
dashboards show it (``GET /api/admin/study``, the collect dashboard's participants) and
every export that holds participants writes it as ``participants.csv``
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

import datetime as _dt
import json
from typing import Any

from ..export import TABLES, write_table
from ..store import Store
from ..store.participants import OUTCOMES, outcome

__all__ = [
    "OUTCOMES",
    "roster",
    "participant_record",
    "outcome",
    "is_duplicate",
    "write_participants",
]


def _iso(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, tz=_dt.timezone.utc).isoformat(timespec="seconds")


def is_duplicate(row: Any) -> bool:
    """Whether participant ``row`` is a kept duplicate: a platform id, no ``platform_key``.

    A participation the owner released (``released``) holds no key and is none.
    """
    released = getattr(row, "released", None)
    return row.platform_id is not None and row.platform_key is None and released is None


def participant_record(row: Any, flags: list[dict], experiment: str = "") -> dict[str, Any]:
    """A participant's row of the table (its declared columns' names as keys); their stored outcome.

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


def write_participants(rows: list[dict[str, Any]], out: Any) -> int:
    """Write ``participants.csv`` into the export folder ``out`` when there are participants.

    At its Psych-DS place (``data/description-participants_data.csv``). ``rows``: the
    participants' records (:func:`roster`; every experiment's with its kind's flags:
    :func:`~..commands.export_folder.experiment_roster`), one row each, its declared columns in
    order, every cell by the export's one rule (:func:`~..export.cell`: a platform id
    beginning with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return after a ``'``,
    never a formula in a spreadsheet). None written for no participant. Returns how many.
    """
    if not rows:
        return 0
    return write_table(out, TABLES["participants.csv"], rows)
