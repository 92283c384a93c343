"""Participants: pseudonymous people enrolled, after their consent, in a group (a study).

A participant is a random id (``P-3F9A0C21D4E8B713``, never a name) and a bearer token whose hash
the database keeps; participants are numbered within their group in enrolment order (a
study balances its assignment by that number). Participant-scoped routes (a study's, a
triplet collection's) authorize with :meth:`Participants.authorize`.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from .errors import Busy, NotFound, Unauthorized
from .store import IdTaken, Store, StoreBusy
from .tokens import new_token, token_hash, token_matches

__all__ = ["Participants"]


class Participants:
    """The participants of group ``group`` (a study's fingerprint) in ``store``."""

    def __init__(self, store: Store, group: str):
        self.store, self.group = store, group

    def enrol(self, plan: int = 1, platform_id: str | None = None) -> dict:
        """A new participant (after their consent): ``{"id", "token"}``.

        The id has 64 random bits (``P-`` and 16 hex digits); one already taken is drawn
        again. ``plan``: the group's plan version when this is its first participant (see
        :meth:`.store.Store.enrol`); ``platform_id``: a crowdsourcing platform's id for
        them. :class:`~.errors.Busy` (503) when the database keeps losing races.
        """
        token = new_token()
        for _ in range(8):
            pid = "P-" + secrets.token_hex(8).upper()
            try:
                self.store.enrol(self.group, pid, token_hash(token), plan, platform_id)
            except IdTaken:
                continue
            except StoreBusy as exc:
                raise Busy(f"{exc}; try again in a moment") from None
            return {"id": pid, "token": token}
        raise Busy("could not draw a free participant id; try again")

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

    def withdraw(self, pid: str, token: str | None, live: Any) -> dict:
        """The participant stops taking part: ``{"withdrawn": true}`` (repeats: the same).

        Their open sessions end and leave ``live`` (the worker's searchers); their answers
        stay in the database, left out of what is computed from it.
        """
        self.authorize(pid, token)
        self.store.withdraw(pid, time.time())
        for s in self.store.participant_sessions(pid):
            live.drop(s.id)
        return {"withdrawn": True}
