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
from typing import Any, Callable

from .store import Store
from .store.participants import OUTCOMES, outcome

__all__ = [
    "COLUMNS",
    "OUTCOMES",
    "roster",
    "collect_flags",
    "study_flags",
    "FLAGS",
    "experiment_roster",
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


def collect_flags(
    store: Store, key: str, fast_server_ms: float | None = None
) -> dict[str, list[dict]]:
    """The flags of every participant of the collect of key ``key``, by participant id.

    ``fast_server_ms`` None: as its server recorded it (:func:`.clock.fast_server_ms`).
    """
    from .clock import bound
    from .collect.quality import checks, read_agreement
    from .collect.rules import collect_sessions

    answered, scores = store.all_answers(), read_agreement(store, key)
    fast_server_ms = bound(store, key, fast_server_ms)
    out = {}
    for s in collect_sessions(store, key, withdrawn=True):
        history = answered.get(s.id, [])
        got = checks(history, scores.get(s.id), fast_server_ms=fast_server_ms)
        out[str(s.participant)] = got["flags"]
    return out


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


def study_flags(
    store: Store, key: str, fast_server_ms: float | None = None
) -> dict[str, list[dict]]:
    """The flags of every participant of the study of key ``key`` (:mod:`.study.checks`)."""
    from .study.checks import study_flags as flags

    return flags(store, key, fast_server_ms)


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
    from .experiment import listing

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


def write_participants(
    store: Store,
    out: Any,
    experiment: str | None = None,
    *,
    fast_server_ms: float | None = None,
) -> int:
    """Write ``participants.csv`` into folder ``out`` when there are participants; how many.

    Of :func:`experiment_roster` (``experiment``: the key of one study or collect; None:
    every experiment), one row each, :data:`COLUMNS` in order: booleans ``true``/``false``,
    ``platform_params`` as JSON, an absent value empty, a text beginning with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return after a ``'`` (:func:`_cell`: never a formula in
    a spreadsheet). None written for no participant.
    """
    rows = experiment_roster(store, experiment, fast_server_ms=fast_server_ms)
    if not rows:
        return 0
    path = Path(os.fspath(out)) / "participants.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(NAMES)
        w.writerows([_cell(r[k]) for k in NAMES] for r in rows)
    return len(rows)
