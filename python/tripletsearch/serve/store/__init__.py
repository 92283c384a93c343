"""The sessions database (SQLAlchemy only, no HTTP): :class:`Store` and its parts by concept.

``engine`` (engines, write transactions, schema version, leases), ``tables`` (the tables and
their migrations), ``sessions`` (sessions, screens, answers, and which answers count:
:func:`is_counted`), ``participants`` (study and
collect participants), ``experiments`` (studies and collects by name), ``collect`` (the
samplers' query buffers and embedding versions) and ``unavailable`` (which errors are the
database or its disk failing, not a bug).
It imports SQLAlchemy and the standard library only.
"""

from __future__ import annotations

from .collect import CollectRecords
from .engine import (
    DEFAULT_DATABASE,
    Database,
    IdTaken,
    StoreBusy,
    StoreError,
    WriteConflict,
    default_url,
)
from .experiments import ExperimentRecords, ExperimentRow
from .participants import ParticipantRecords, SecondVisit
from .records import PREVIEW, is_preview, preview_group
from .sessions import SessionRecords, SessionRow, counted_answers, is_counted
from .tables import MIGRATIONS, SCHEMA_VERSION

__all__ = [
    "SCHEMA_VERSION",
    "MIGRATIONS",
    "DEFAULT_DATABASE",
    "Database",
    "Store",
    "SessionRow",
    "ExperimentRow",
    "is_counted",
    "counted_answers",
    "StoreError",
    "WriteConflict",
    "StoreBusy",
    "IdTaken",
    "SecondVisit",
    "default_url",
    "PREVIEW",
    "preview_group",
    "is_preview",
]


class Store(SessionRecords, ParticipantRecords, ExperimentRecords, CollectRecords):
    """The sessions database: sessions and their answers, participants, experiments.

    Each concept's queries in a module of its own, over one :class:`~.engine.Database`
    (its engines and transactions).

    ``Store(url).setup()`` once before the workers start; then every worker opens
    ``Store(url)``.
    """
