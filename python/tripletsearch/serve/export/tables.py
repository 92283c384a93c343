"""What a declaration of an exported file is: its columns (:class:`Column`) and its place.

A :class:`Table` is one CSV of an export folder: the name it is declared under (the name
the export has always used, ``answers.csv``), where it lives in the folder (:attr:`Table.
path`: a data file under ``data/``, named as `Psych-DS <https://psych-ds.github.io/>`_
asks, :data:`DATA_FILES`) and its columns in order, each a :class:`Column`: its name, its
`Frictionless <https://datapackage.org/>`_ type and description, and for a number the
decimals it carries (:attr:`Column.digits`: a clock's resolution, what a cell keeps).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Column",
    "Table",
    "TYPES",
    "DATA_DIR",
    "DATA_FILES",
    "DATA_FILE_PATTERN",
    "data_path",
]

#: The Frictionless field types a declaration may give (``array`` and ``object``: JSON).
TYPES = ("integer", "number", "string", "boolean", "datetime", "object", "array")

#: Psych-DS: an export's data files live in this folder, each named by keyword-value pairs
#: (its official keywords ``task`` and ``description``) and the ``_data.csv`` suffix.
DATA_DIR = "data"
#: Each data file of an export (by the name it is declared under) -> its Psych-DS keywords
#: (:func:`data_path`: its path in the export).
DATA_FILES = {
    "triplets.csv": "task-search_description-triplets",
    "triplets_info.csv": "task-search_description-tripletsinfo",
    "choices.csv": "task-search_description-choices",
    "collect_triplets.csv": "task-collect_description-triplets",
    "collect_triplets_info.csv": "task-collect_description-tripletsinfo",
    "collect_trials.csv": "task-collect_description-trials",
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


@dataclass(frozen=True)
class Column:
    """One column of an exported CSV.

    ``name``; ``type``: its Frictionless type (:data:`TYPES`); ``description``: what it
    holds, in a sentence (the package's and the Psych-DS description's); ``digits``: for a
    number, the decimals it carries (a time in ms by the page's clock: 1), every cell
    rounded to them (None: :data:`~.cells.SIGNIFICANT_DIGITS` significant digits);
    ``format``: a Frictionless format, when not the type's default.
    """

    name: str
    type: str
    description: str
    digits: int | None = None
    format: str | None = None

    def __post_init__(self) -> None:
        if self.type not in TYPES or not self.description.strip():
            raise ValueError(f"column {self.name!r} needs a type of {TYPES} and a description")

    def field(self) -> dict[str, Any]:
        """The column as a Frictionless field (name, type, description; format if any)."""
        out: dict[str, Any] = {"name": self.name, "type": self.type}
        if self.format is not None:
            out["format"] = self.format
        out["description"] = self.description
        return out


@dataclass(frozen=True)
class Table:
    """One CSV of an export: ``name`` (as declared), ``columns`` in order, ``description``.

    ``description``: what the file holds, in a sentence (its resource's in
    ``datapackage.json``; empty: none said).
    """

    name: str
    columns: tuple[Column, ...]
    description: str = ""
    _by_name: dict[str, Column] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name = {c.name: c for c in self.columns}
        if len(by_name) != len(self.columns):
            raise ValueError(f"{self.name}: a column declared twice")
        object.__setattr__(self, "_by_name", by_name)

    @property
    def path(self) -> str:
        """Its path in an export folder (a data file's: :func:`data_path`)."""
        return data_path(self.name) if self.name in DATA_FILES else self.name

    @property
    def names(self) -> list[str]:
        """Its columns' names, in order (the CSV's header)."""
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        """The column ``name`` (KeyError: not one of this file's)."""
        return self._by_name[name]

    def with_columns(self, *extra: Column) -> Table:
        """The file with ``extra`` columns after its own (for a declaration that grows)."""
        return Table(self.name, (*self.columns, *extra), self.description)
