"""The export declared once: every exported CSV's columns, the one cell rule, the one writer.

``tables`` (what a declaration is: a :class:`Table` of :class:`Column` s, each with its name,
Frictionless type and description, and where a data file lives, :func:`data_path`),
``declarations`` (:data:`TABLES`: every CSV an export folder or a study report's holds,
declared once), ``cells`` (:func:`cell`, the one rule for a CSV cell: formula-safe text,
``true``/``false``, floats rounded to the digits they carry, None empty; and
:func:`write_table`, the one writer, a file's rows from its declaration), ``descriptions``
(``datapackage.json`` and ``dataset_description.json``, built from the same declarations:
:func:`describe_folder`) and ``outfolder`` (``--out`` checked; the finished export put in
its place whole).

This package sits low in the service's layers: it imports the library and the service's
errors, clock, catalogue and store only, so that every writer above it (the participants'
table, a collect's and a study report's files, the export command) writes from it. What
fills the files: the export command (:mod:`~..commands.export_folder`), the recorded answers as
training data (:mod:`~..collect.training`), a collect's part (:mod:`~..collect.export`),
the participants' table (:mod:`~..participation.roster`) and a study report
(:mod:`~..study.report`).
"""

from __future__ import annotations

from .cells import FORMULA_STARTS, SIGNIFICANT_DIGITS, cell, number, write_table
from .declarations import SECONDS_DIGITS, TABLES
from .descriptions import (
    DESCRIPTION_FILE,
    PACKAGE_FILE,
    dataset_description,
    describe_folder,
    package,
)
from .tables import DATA_DIR, DATA_FILE_PATTERN, DATA_FILES, TYPES, Column, Table, data_path

__all__ = [
    "Column",
    "Table",
    "TABLES",
    "TYPES",
    "DATA_DIR",
    "DATA_FILES",
    "DATA_FILE_PATTERN",
    "data_path",
    "cell",
    "number",
    "write_table",
    "FORMULA_STARTS",
    "SIGNIFICANT_DIGITS",
    "SECONDS_DIGITS",
    "describe_folder",
    "package",
    "dataset_description",
    "PACKAGE_FILE",
    "DESCRIPTION_FILE",
]
