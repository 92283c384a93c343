"""A self-describing export: ``datapackage.json`` and ``dataset_description.json``.

Every export folder (``tripletsearch export``, with and without ``--collect``) carries,
beside ``export.json``, and so does a study report's folder (``tripletsearch report``):

``data/``
    The data files, named as `Psych-DS <https://psych-ds.github.io/>`_ asks
    (:data:`~.tables.DATA_FILES`, :func:`~.tables.data_path`:
    ``data/description-answers_data.csv``, ...).
``datapackage.json``
    A `Frictionless Data Package <https://datapackage.org/>`_: each CSV of the folder a
    tabular resource (its path, format, encoding, description and schema: every field's
    name, type and description), the package's name, title, creation time and the
    library's version.
``dataset_description.json``
    A `Psych-DS <https://psych-ds.github.io/>`_ description (``@context`` schema.org,
    ``@type`` Dataset): its name, description, the library's version, ``variableMeasured``
    (a ``PropertyValue`` per column of the data, by name and description).

Both are built from the declarations the CSVs were written from,
:data:`~.declarations.TABLES`: the folder's CSVs are read (their header lines) and every
column is looked up there, so that a CSV or column without a declaration is a ValueError
at export time (:func:`describe_folder`), never a package that says less than the files.
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import os
import re
from pathlib import Path
from typing import Any

from ... import __version__
from .declarations import TABLES
from .tables import DATA_FILES, Table, data_path

__all__ = [
    "describe_folder",
    "resources",
    "package",
    "dataset_description",
    "PACKAGE_FILE",
    "DESCRIPTION_FILE",
]

PACKAGE_FILE = "datapackage.json"
DESCRIPTION_FILE = "dataset_description.json"

_DECLARED_AS = {data_path(name): name for name in DATA_FILES}


def _declared(rel: str) -> Table:
    """The declaration of the CSV at ``rel`` in an export folder (ValueError: none)."""
    found = TABLES.get(_DECLARED_AS.get(rel, rel))
    if found is None:
        raise ValueError(
            f"{rel}: a CSV of the export without a declaration in tripletsearch.serve.export.TABLES"
        )
    return found


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
        table = _declared(rel)
        fields = []
        for name in _header(path):
            if name not in table.names:
                raise ValueError(
                    f"{rel}: column {name!r} has no description (declare it in "
                    f"tripletsearch.serve.export.TABLES[{table.name!r}])"
                )
            fields.append(table.column(name).field())
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
                **({"description": table.description} if table.description else {}),
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
    written) when a CSV or one of its columns has no declaration in
    :data:`~.declarations.TABLES`.
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
