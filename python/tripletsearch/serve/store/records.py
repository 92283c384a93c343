"""What a session's stored rows say.

The decoded session row and the rule of the answers that count, read by the store, the
service, the checks, the dashboard and the export alike.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["SessionRow", "is_counted", "counted_answers", "PREVIEW", "preview_group", "is_preview"]

#: The key an experiment's preview participants are kept under begins so: ``preview:<key>``
#: (their ``ts_participants.study`` and their sessions' ``experiment``). Every query by the
#: experiment's key misses them; those over every key leave them out (sessions, participants,
#: groups): the owner's walk through the participant's pages counts nowhere.
PREVIEW = "preview:"


def preview_group(key: str) -> str:
    """The key the preview participants of the experiment of key ``key`` are kept under."""
    return PREVIEW + key


def is_preview(key: str | None) -> bool:
    """Whether ``key`` (a participant's group, a session's experiment) is a preview's."""
    return key is not None and key.startswith(PREVIEW)


def is_counted(record: dict) -> bool:
    """Whether an answered screen's record is an answer that counts.

    The one rule: an answer (not an undo) not taken back by an undo (``undone``). Its count
    is a session's ``n_queries``; a skip counts (as an answer without a choice).
    """
    return record["kind"] == "answer" and not record["undone"]


def counted_answers(history: list[dict]) -> list[dict]:
    """The records of ``history`` that are answers that count (:func:`is_counted`), in order."""
    return [h for h in history if is_counted(h)]


@dataclass(frozen=True)
class SessionRow:
    """A row of ``ts_sessions``, decoded."""

    id: str
    token_hash: str
    mode: str
    n_choices: int
    seed: str
    params: dict
    catalogue: str
    library: str
    created: float
    updated: float
    screen: int  # the current screen's number: screens answered or undone
    done: bool
    result: Any
    n_queries: int  # answers that count
    undos: int
    participant: str | None
    slot: int | None
    target: int | None
    experiment: str | None = None  # the key of its study or collect (None: a free session)

    @classmethod
    def from_row(cls, r: Any) -> SessionRow:
        """Decode a database row of ``ts_sessions`` (JSON parameters and result parsed)."""
        return cls(
            r.id,
            r.token_hash,
            r.mode,
            int(r.n_choices),
            r.seed,
            json.loads(r.params),
            r.catalogue,
            r.library,
            float(r.created),
            float(r.updated),
            int(r.screen),
            bool(r.done),
            None if r.result is None else json.loads(r.result),
            int(r.n_queries),
            int(r.undos),
            r.participant,
            None if r.slot is None else int(r.slot),
            None if r.target is None else int(r.target),
            r.experiment,
        )
