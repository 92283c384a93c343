"""A self-describing export: ``datapackage.json`` and ``dataset_description.json``.

Every export folder (``tripletsearch export``, with and without ``--collect``) carries,
beside ``export.json``, and so does a study report's folder (``tripletsearch report``):

``data/``
    The data files, named as `Psych-DS <https://psych-ds.github.io/>`_ asks
    (:data:`DATA_FILES`, :func:`data_path`: ``data/description-answers_data.csv``, ...).
``datapackage.json``
    A `Frictionless Data Package <https://datapackage.org/>`_: each CSV of the folder a
    tabular resource (its path, format, encoding and schema: every field's name, type and
    description), the package's name, title, creation time and the library's version.
``dataset_description.json``
    A `Psych-DS <https://psych-ds.github.io/>`_ description (``@context`` schema.org,
    ``@type`` Dataset): its name, description, the library's version, ``variableMeasured``
    (a ``PropertyValue`` per column of the data, by name and description).

Both are built from ONE declaration of the CSVs' columns, :data:`COLUMNS` (file name ->
``(column, Frictionless type, description)`` rows): the folder's CSVs are read (their
header lines) and every column is looked up there, so that a column written without a
description is a ValueError at export time (:func:`describe_folder`), never a package that
says less than the files. A new CSV (or column) of the export: add its rows here (or, for
a module that declares its own columns, as ``participants.csv`` does in
:mod:`.participation.roster`, name that declaration in :data:`COLUMNS`).
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import os
import re
from pathlib import Path
from typing import Any

from .. import __version__

__all__ = [
    "COLUMNS",
    "DATA_DIR",
    "DATA_FILES",
    "DATA_FILE_PATTERN",
    "data_path",
    "TYPES",
    "describe_folder",
    "package",
    "dataset_description",
    "PACKAGE_FILE",
    "DESCRIPTION_FILE",
]

#: Psych-DS: an export's data files live in this folder, each named by keyword-value pairs
#: (its official keywords ``task`` and ``description``) and the ``_data.csv`` suffix.
DATA_DIR = "data"
#: Each data file of an export (by the name :data:`COLUMNS` declares it under) -> its
#: Psych-DS keywords (:func:`data_path`: its path in the export).
DATA_FILES = {
    "triplets.csv": "task-search_description-triplets",
    "triplets_info.csv": "task-search_description-tripletsinfo",
    "choices.csv": "task-search_description-choices",
    "collect_triplets.csv": "task-collect_description-triplets",
    "collect_triplets_info.csv": "task-collect_description-tripletsinfo",
    "collect_participants.csv": "task-collect_description-participants",
    "sessions.csv": "description-sessions",
    "answers.csv": "description-answers",
    "participants.csv": "description-participants",
}
#: The Psych-DS rule of a data file's name (its validator's ``fileRegex``).
DATA_FILE_PATTERN = r"([a-z]+-[a-zA-Z0-9]+)(_[a-z]+-[a-zA-Z0-9]+)*_data\.csv"


def data_path(name: str) -> str:
    """Where data file ``name`` (a key of :data:`DATA_FILES`) lives in an export folder."""
    return f"{DATA_DIR}/{DATA_FILES[name]}_data.csv"


_DECLARED_AS = {data_path(name): name for name in DATA_FILES}

PACKAGE_FILE = "datapackage.json"
DESCRIPTION_FILE = "dataset_description.json"
#: The Frictionless field types a declaration may give.
TYPES = ("integer", "number", "string", "boolean", "datetime", "object")

Column = tuple[str, str, str]

_SESSION = ("session", "string", "The session's id (one search or one participant's collect).")
_SCREEN = ("screen", "integer", "The screen's number within its session, from 0.")
_PARTICIPANT = (
    "participant",
    "string",
    "The participant's pseudonymous id (P- and 16 hex digits); empty: a session outside a "
    "study or collect.",
)
_TRIPLET: tuple[Column, ...] = (
    ("head", "integer", "The item id the comparison is about (the target, or the query's head)."),
    ("closer", "integer", "The item id judged closer to head."),
    ("farther", "integer", "The item id judged farther from head."),
)
_KINDS = (
    "The kind of query, by what chose it: burn-in (one of the participant's first queries, "
    "random), random (a sampler's random query: the random sampler's, or another's before "
    "its burn-in's end and first fit), active or arr (that sampler's method chose it), test "
    "(a held-out random query) or fallback (random: the sampler had no query ready). "
    "Exports of collects run before 0.4.0 say adaptive for any sampler's query."
)


def _info(collect: bool) -> tuple[Column, ...]:
    """The columns of ``triplets_info.csv`` (searches) or ``collect_triplets_info.csv``."""
    if collect:
        sampler = "The collect's sampler the participant was assigned (random, active, arr)."
        kind = _KINDS
    else:
        sampler = kind = "Empty: a search's answer has no sampler or kind of query."
    return (
        ("source", "string", "collect (a collect's answer)." if collect else "search."),
        _SESSION,
        _PARTICIPANT,
        _SCREEN,
        ("sampler", "string", sampler),
        ("kind", "string", kind),
        ("response_ms", "number", "The response time the page measured, in ms; empty: unknown."),
        ("head_name", "string", "The head item's name (given the catalogue)."),
        ("closer_name", "string", "The closer item's name (given the catalogue)."),
        ("farther_name", "string", "The farther item's name (given the catalogue)."),
    )


def _roster() -> tuple[Column, ...]:
    from .participation.roster import COLUMNS as ROSTER

    return tuple(ROSTER)


def _collect_participants() -> tuple[Column, ...]:
    counted = "Their {} answered as expected, of {}."
    pairs = (
        ("attention", "attention checks"),
        ("gold", "gold-standard queries"),
        ("repeats", "repeated queries"),
        ("clear_repeats", "repeated clear queries"),
    )
    checks: list[Column] = []
    for key, what in pairs:
        checks.append((f"{key}_passed" if key in ("attention", "gold") else f"{key}_agreed",
                       "integer", counted.format(what, f"{key}_of")))  # fmt: skip
        checks.append((f"{key}_of", "integer", f"The {what} they were shown."))
    return (
        ("participant", "string", "The participant's pseudonymous id (P- and 16 hex digits)."),
        ("number", "integer", "Their enrolment order within the collect, from 0."),
        ("session", "string", "Their session's id; empty: none started."),
        ("sampler", "string", "The sampler that chose their queries."),
        (
            "answers",
            "integer",
            "Their answers that count: picks on the samplers' and test "
            "queries, not undone (k - 1 triplets each; checks, repeats and skips not counted).",
        ),
        ("withdrawn", "boolean", "Whether they withdrew (their answers left out)."),
        ("rules", "string", "The version of the check rules they were judged by."),
        ("flagged", "boolean", "Flagged by the checks (their answers left out of the fits)."),
        ("flagged_by", "string", "The check rules that flag them, space-separated."),
        *checks,
        ("agreement_agreed", "integer", "Their picks as everyone else's answers predict."),
        ("agreement_answers", "integer", "Their answers scored for agreement."),
        ("agreement_z", "number", "The z-score of their agreement."),
        ("agreement_p", "number", "The p-value of their agreement (by chance alone)."),
        (
            "server_ms_median",
            "number",
            "The median time per screen by the server's clock, ms, to the microsecond.",
        ),
        (
            "response_ms_median",
            "number",
            "The median response time the page measured, ms, to 0.1 ms.",
        ),
        ("why", "string", "Why they are flagged, a sentence per flag, separated by '; '."),
    )


def _stimuli() -> tuple[Column, ...]:
    return (
        ("item", "integer", "The item's id."),
        ("name", "string", "The item's name."),
        ("file", "string", "The copied picture, relative to catalogue/."),
        ("source", "string", "The picture's path in the served catalogue's folder."),
        ("bytes", "integer", "Its size in bytes (the copy's and the original's)."),
        ("sha256", "string", "Its SHA-256, hex (the copy's and the original's)."),
    )


#: Every CSV an export folder may hold: its path in the folder -> its columns, each
#: ``(name, Frictionless type, description)`` (a callable: another module's declaration,
#: read when an export is described). Add a new CSV or column HERE (see the module
#: docstring); ``participants.csv``: :data:`.roster.COLUMNS`.
COLUMNS: dict[str, Any] = {
    "triplets.csv": _TRIPLET,
    "triplets_info.csv": _info(False),
    "collect_triplets.csv": _TRIPLET,
    "collect_triplets_info.csv": _info(True),
    "choices.csv": (
        _SESSION,
        _SCREEN,
        ("target", "integer", "The session's target item id."),
        ("item", "integer", "The item id picked."),
        ("shown", "string", "The item ids shown, space-separated."),
    ),
    "sessions.csv": (
        _SESSION,
        ("mode", "string", "The session's mode (find, rank, collect, ...)."),
        ("n_choices", "integer", "Items shown per screen."),
        ("library", "string", "The tripletsearch version that ran it."),
        ("created", "string", "When it began (UTC, ISO 8601)."),
        ("done", "boolean", "Whether it ended."),
        _PARTICIPANT,
        ("slot", "integer", "The study participant's search slot, from 0; empty: none."),
        ("method", "string", "The search method of a study's search; empty: none."),
        ("found", "boolean", "Whether the search found its target."),
        ("n_queries", "integer", "Screens answered."),
        ("queries_to_find", "integer", "Screens answered to find the target; empty: not found."),
        ("undos", "integer", "Answers undone."),
        ("target", "integer", "The target item id; empty: unknown."),
        ("target_name", "string", "The target item's name; empty: unknown."),
        ("seconds_total", "number", "Seconds spent answering, summed over screens."),
        ("seconds_per_answer_median", "number", "The median seconds per answer."),
    ),
    "answers.csv": (
        _SESSION,
        _SCREEN,
        ("mode", "string", "The session's mode."),
        (
            "kind",
            "string",
            "answer, undo or check (a study's attention screen: in no query) (and a collect "
            "query's kind).",
        ),
        ("choice", "integer", "The position picked among those shown; empty: none (a skip)."),
        ("found", "boolean", "Whether the answer said the target was shown; empty: n/a."),
        ("undone", "boolean", "Whether the answer was undone later."),
        ("seconds", "number", "Seconds from showing the screen to the answer."),
        ("shown", "string", "What was shown: item ids space-separated, or a JSON record."),
    ),
    "participants.csv": _roster,
    "collect_participants.csv": _collect_participants,
    "catalogue/items.csv": (
        ("name", "string", "The item's name (its id is its row, from 0)."),
        ("hex", "string", "The item's colour, #rrggbb."),
        ("image", "string", "The item's picture, relative to catalogue/."),
    ),
    "catalogue/stimuli.csv": _stimuli,
    # (a new CSV of the export: its path here, its columns as above)
    # the study report's folder (``tripletsearch report``: :mod:`.study.report`)
    "methods.csv": (
        ("method", "string", "The search method."),
        ("searches", "integer", "Its searches in the study."),
        ("finished", "integer", "Its searches that ended (found or not)."),
        ("unfinished", "integer", "Its searches left before the end."),
        ("not_found", "integer", "Its finished searches that did not find the target."),
        ("found_rate", "number", "The share of finished searches that found the target."),
        ("found_rate_interval", "string", "Its 95 % Wilson interval, a JSON [low, high]."),
        ("found", "integer", "Its searches that found the target."),
        ("mean_queries", "number", "The mean screens to find the target (found searches)."),
        ("se_queries", "number", "The standard error of that mean."),
        ("median_queries", "number", "The median screens to find the target."),
        ("seconds_per_answer_median", "number", "The median of its searches' seconds/answer."),
        ("seconds_per_answer_mean", "number", "The mean of its searches' seconds per answer."),
    ),
    "searches.csv": (
        _SESSION,
        _PARTICIPANT,
        ("slot", "integer", "The participant's search slot, from 0."),
        ("method", "string", "The search method."),
        ("guesses", "integer", "The size of the strip of guesses (0: none)."),
        ("target", "integer", "The target item id."),
        ("done", "boolean", "Whether the search ended."),
        ("outcome", "string", "found, not found or unfinished."),
        ("found", "boolean", "Whether it found the target."),
        ("n_queries", "integer", "Screens answered."),
        ("undos", "integer", "Answers undone."),
        ("seconds_per_answer", "number", "The mean seconds per answer."),
        (
            "flagged",
            "boolean",
            "Its participant is flagged by the study's checks: reported apart, not compared.",
        ),
    ),
}


def _declared(rel: str) -> dict[str, Column]:
    found = COLUMNS.get(_DECLARED_AS.get(rel, rel))
    if found is None:
        raise ValueError(f"{rel}: a CSV of the export without a declaration in datapackage.COLUMNS")
    cols = found() if callable(found) else found
    out = {}
    for c in cols:
        name, kind, text = c
        if kind not in TYPES or not isinstance(text, str) or not text.strip():
            raise ValueError(f"{rel}: column {name!r} needs a type of {TYPES} and a description")
        out[name] = (name, kind, text)
    return out


def _header(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as fh:
        return next(csv.reader(fh), [])


def resources(folder: Path, files: Any = None) -> list[dict[str, Any]]:
    """The folder's CSVs as tabular resources (sorted by path), each field declared.

    ``files``: the CSVs to describe, as paths relative to ``folder`` (None: every CSV in
    it). ValueError naming the file and the column written without a declaration.
    """
    out = []
    paths = folder.rglob("*.csv") if files is None else (folder / f for f in files)
    for path in sorted(paths):
        rel = path.relative_to(folder).as_posix()
        declared = _declared(rel)
        fields = []
        for name in _header(path):
            if name not in declared:
                raise ValueError(
                    f"{rel}: column {name!r} has no description (declare it in "
                    "tripletsearch.serve.datapackage.COLUMNS)"
                )
            _, kind, text = declared[name]
            fields.append({"name": name, "type": kind, "description": text})
        named = _DECLARED_AS.get(rel, rel)  # a data file: by the name it is declared under
        stem = re.sub(r"[^a-z0-9._-]+", "-", named.lower().removesuffix(".csv"))
        out.append(
            {
                "name": stem.replace("/", "-"),
                "path": rel,
                "profile": "tabular-data-resource",
                "format": "csv",
                "mediatype": "text/csv",
                "encoding": "utf-8",
                "schema": {"fields": fields},
            }
        )
    return out


def _slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-")
    return s or "tripletsearch-export"


def package(folder: Path, title: str, created: str, files: Any = None) -> dict[str, Any]:
    """The ``datapackage.json`` of ``folder`` (its CSVs, or ``files``: :func:`resources`)."""
    return {
        "profile": "tabular-data-package",
        "name": _slug(title),
        "title": title,
        "created": created,
        "version": __version__,
        "description": "Answers recorded by tripletsearch's web service, as exported.",
        "sources": [{"title": f"tripletsearch {__version__}"}],
        "tripletsearch": {"library": __version__},
        "resources": resources(folder, files),
    }


def dataset_description(pkg: dict[str, Any], description: str) -> dict[str, Any]:
    """The Psych-DS ``dataset_description.json`` of a package (:func:`package`)."""
    seen: dict[str, dict[str, str]] = {}
    for res in pkg["resources"]:
        for f in res["schema"]["fields"]:
            seen.setdefault(
                f["name"],
                {"@type": "PropertyValue", "name": f["name"], "description": f["description"]},
            )
    return {
        "@context": "https://schema.org/",
        "@type": "Dataset",
        "name": pkg["title"],
        "description": description,
        "dateCreated": pkg["created"],
        "version": __version__,
        "creator": {
            "@type": "SoftwareApplication",
            "name": "tripletsearch",
            "softwareVersion": __version__,
        },  # fmt: skip
        "variableMeasured": list(seen.values()),
    }


def describe_folder(
    folder: Any, *, title: str, description: str | None = None, files: Any = None
) -> dict:
    """Write ``datapackage.json`` and ``dataset_description.json`` into the export ``folder``.

    After every CSV of it is written. ``title``: the package's and dataset's name (e.g. the
    experiment's); ``description``: the dataset's (default: a sentence naming the library);
    ``files``: the CSVs written, relative to ``folder`` (None: every CSV in it, for a folder
    written whole; a folder that may hold other files, such as a report's ``--out``, names
    its own so another CSV there is neither described nor refused). ValueError (nothing
    written) when a CSV or one of its columns has no declaration in :data:`COLUMNS`.
    Returns the package.
    """
    if not isinstance(title, str) or not title:
        raise ValueError("title: a non-empty string")
    d = Path(os.fspath(folder))
    created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    pkg = package(d, title, created, files)
    text = description or (
        f"{title}: triplet comparisons and searches recorded by tripletsearch "
        f"{__version__}'s web service; each CSV is described in datapackage.json."
    )
    (d / PACKAGE_FILE).write_text(json.dumps(pkg, indent=2) + "\n", encoding="utf-8")
    desc = dataset_description(pkg, text)
    (d / DESCRIPTION_FILE).write_text(json.dumps(desc, indent=2) + "\n", encoding="utf-8")
    return pkg
