"""Experiments by name: their kind, the key their rows are kept under, their design.

A study's or a collect's participants are grouped under its key
(``ts_participants.study``), its sessions carry the key (``ts_sessions.experiment``), and so
do a collect's queries and embedding versions. The name maps to the key, so that an edited
file finds its rows (``serve/experiment.py`` decides what an edit may change). Databases of
older versions have rows under keys without a name: :meth:`ExperimentRecords.groups` finds
them.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from .engine import Database, WriteConflict
from .records import is_preview
from .tables import (
    collect_embeddings,
    collect_queries,
    experiments,
    participants,
    sessions,
)

__all__ = ["ExperimentRecords", "ExperimentRow"]


@dataclass(frozen=True)
class ExperimentRow:
    """A row of ``ts_experiments``, decoded."""

    name: str
    kind: str
    key: str
    design: dict
    settings: dict
    created: float
    updated: float

    @classmethod
    def from_row(cls, r: Any) -> ExperimentRow:
        """Decode a database row (its JSON parsed)."""
        return cls(
            r.name,
            r.kind,
            r.key,
            json.loads(r.design),
            json.loads(r.settings),
            float(r.created),
            float(r.updated),
        )


class ExperimentRecords(Database):
    """The experiments of the database, and the rows kept under a key."""

    def experiments(self, kind: str | None = None) -> list[ExperimentRow]:
        """Every experiment (of ``kind``), by name."""
        q = sa.select(experiments).order_by(experiments.c.name)
        if kind is not None:
            q = q.where(experiments.c.kind == kind)
        with self._reading() as c:
            return [ExperimentRow.from_row(r) for r in c.execute(q)]

    def experiment(self, name: str) -> ExperimentRow | None:
        """The experiment named ``name``, or None."""
        with self._reading() as c:
            r = c.execute(sa.select(experiments).where(experiments.c.name == name)).first()
        return None if r is None else ExperimentRow.from_row(r)

    def add_experiment(
        self, name: str, kind: str, key: str, design: dict, settings: dict
    ) -> ExperimentRow:
        """A new experiment; :class:`WriteConflict` when its name or key is taken."""
        now = time.time()
        row = {
            "name": name,
            "kind": kind,
            "key": key,
            "design": json.dumps(design, sort_keys=True),
            "settings": json.dumps(settings, sort_keys=True),
            "created": now,
            "updated": now,
        }
        try:
            with self._tx() as c:
                c.execute(sa.insert(experiments).values(**row))
        except sa.exc.IntegrityError as exc:
            raise WriteConflict(f"experiment {name!r} or its key exists") from exc
        return ExperimentRow(name, kind, key, design, settings, now, now)

    def update_experiment(self, name: str, design: dict, settings: dict) -> None:
        """Store an experiment's design and settings as its file now says."""
        with self._tx() as c:
            c.execute(
                sa.update(experiments)
                .where(experiments.c.name == name)
                .values(
                    design=json.dumps(design, sort_keys=True),
                    settings=json.dumps(settings, sort_keys=True),
                    updated=time.time(),
                )
            )

    def key_in_use(self, key: str) -> bool:
        """Whether rows are kept under ``key``: participants, sessions, queries, versions."""
        checks = (
            sa.select(participants.c.id).where(participants.c.study == key),
            sa.select(sessions.c.id).where(sessions.c.experiment == key),
            sa.select(collect_queries.c.id).where(collect_queries.c.collect == key),
            sa.select(collect_embeddings.c.id).where(collect_embeddings.c.collect == key),
        )
        with self._reading() as c:
            return any(c.execute(q.limit(1)).first() is not None for q in checks)

    def participant_count(self, key: str) -> int:
        """Participants enrolled under ``key`` (withdrawn ones included)."""
        q = sa.select(sa.func.count()).select_from(participants)
        with self._reading() as c:
            return int(c.execute(q.where(participants.c.study == key)).scalar_one())

    def groups(self) -> dict[str, dict[str, Any]]:
        """Every key rows are kept under: ``{key: {"participants", "sessions", "modes"}}``.

        Its participants (a study's or a collect's group, withdrawn ones included), its
        sessions (those whose ``experiment`` is the key) and their modes (sorted: what the
        caller tells a study from a collect by). The owner's previews' keys are left out
        (:data:`~.records.PREVIEW`).
        """
        out: dict[str, dict[str, Any]] = {}

        def group(key: str) -> dict[str, Any]:
            return out.setdefault(key, {"participants": 0, "sessions": 0, "modes": []})

        with self._reading() as c:
            q = sa.select(participants.c.study, sa.func.count()).group_by(participants.c.study)
            for key, n in c.execute(q):
                group(key)["participants"] = int(n)
            q = (
                sa.select(sessions.c.experiment, sessions.c.mode, sa.func.count())
                .where(sessions.c.experiment.is_not(None))
                .group_by(sessions.c.experiment, sessions.c.mode)
            )
            for key, mode, n in c.execute(q):
                rec = group(key)
                rec["sessions"] += int(n)
                rec["modes"] = sorted({*rec["modes"], str(mode)})
        return {key: g for key, g in out.items() if not is_preview(key)}
