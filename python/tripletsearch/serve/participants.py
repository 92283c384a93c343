"""Participants: pseudonymous people enrolled, after their consent, in a group (a study).

A participant is a random id (``P-3F9A0C21``, never a name) and a bearer token whose hash
the database keeps; participants are numbered within their group in enrolment order (a
study balances its assignment by that number). Participant-scoped routes (a study's, a
triplet collection's) authorize with :meth:`Participants.authorize`.
"""

from __future__ import annotations

import secrets
from typing import Any

from .errors import NotFound, Unauthorized
from .store import Store
from .tokens import new_token, token_hash, token_matches

__all__ = ["Participants"]


class Participants:
    """The participants of group ``group`` (a study's fingerprint) in ``store``."""

    def __init__(self, store: Store, group: str):
        self.store, self.group = store, group

    def enrol(self) -> dict:
        """A new participant (after their consent): ``{"id", "token"}``."""
        pid = "P-" + secrets.token_hex(4).upper()
        token = new_token()
        self.store.enrol(self.group, pid, token_hash(token))
        return {"id": pid, "token": token}

    def authorize(self, pid: str, token: str | None) -> Any:
        """The participant's row (id, token_hash, study, number, created).

        NotFound when there is no such participant in the group, Unauthorized when the
        token is not theirs.
        """
        row = self.store.participant(pid) if isinstance(pid, str) and len(pid) <= 64 else None
        if row is None or row.study != self.group:
            raise NotFound("no such participant in this study")
        if not token_matches(token, row.token_hash):
            raise Unauthorized("missing or wrong token for this participant")
        return row
