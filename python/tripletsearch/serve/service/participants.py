"""Participants: pseudonymous people enrolled, after their consent, in an experiment.

A participant is a random id (``P-3F9A0C21D4E8B713``, never a name) and a bearer token whose
hash the database keeps; participants are numbered within their experiment in enrolment
order (a study balances its assignment by that number). :class:`Participants` is what every
kind of experiment (a study, a triplet collection) does with its participants: enrol,
authorize, withdraw, start their sessions (each session is theirs: an
:class:`~.search.Owner`), and end their part with the completion code and redirect. A kind
of experiment specialises it with what its participants do (a study's searches one after
the other, a collect's queries).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Any

from ..errors import Busy, Conflict, NotFound, Unauthorized
from ..store import IdTaken, SessionRow, StoreBusy, WriteConflict
from .search import Owner, SearchService
from .tokens import new_token, token_hash, token_matches

__all__ = ["Participants"]

STARTS = 3  # tries to start a participant's session while racing requests start it too


class Participants:
    """The participants of experiment ``group`` (its identity in the database).

    Parameters
    ----------
    service : SearchService
        Their sessions' service (and its database).
    group : str
        The experiment's identity: participants are numbered within it.
    completion_code, redirect : str, optional
        What a participant gets at the end of their part (a crowdsourcing platform's code,
        a link back to it).
    """

    def __init__(
        self,
        service: SearchService,
        group: str,
        completion_code: str | None = None,
        redirect: str | None = None,
    ):
        self.service, self.store, self.group = service, service.store, group
        self.completion_code, self.redirect = completion_code, redirect

    def enrol(self, plan: int = 1, platform_id: str | None = None, arms: Any = None) -> dict:
        """A new participant (after their consent): ``{"id", "token"}``.

        The id has 64 random bits (``P-`` and 16 hex digits); one already taken is drawn
        again. ``plan``: the experiment's plan version when this is its first participant
        (see :meth:`.store.Store.enrol`); ``platform_id``: a crowdsourcing platform's id
        for them; ``arms``: the arms to assign them one of (``store.Arms``).
        :class:`~.errors.Busy` (503) when the database keeps losing races.
        """
        token = new_token()
        for _ in range(8):
            pid = "P-" + secrets.token_hex(8).upper()
            try:
                self.store.enrol(self.group, pid, token_hash(token), plan, platform_id, arms)
            except IdTaken:
                continue
            except StoreBusy as exc:
                raise Busy(f"{exc}; try again in a moment") from None
            return {"id": pid, "token": token}
        raise Busy("could not draw a free participant id; try again")

    def authorize(self, pid: str, token: str | None) -> Any:
        """The participant's row (id, token_hash, study, number, created, plan, withdrawn).

        NotFound when there is no such participant in the experiment, Unauthorized when the
        token is not theirs.
        """
        row = self.store.participant(pid) if isinstance(pid, str) and len(pid) <= 64 else None
        if row is None or row.study != self.group:
            raise NotFound("no such participant in this study")
        if not token_matches(token, row.token_hash):
            raise Unauthorized("missing or wrong token for this participant")
        return row

    def active(self, pid: str, token: str | None) -> Any:
        """As :meth:`authorize`, and Conflict when the participant stopped taking part."""
        row = self.authorize(pid, token)
        if row.withdrawn is not None:
            raise Conflict("this participant has stopped taking part")
        return row

    def withdraw(self, pid: str, token: str | None) -> dict:
        """The participant stops taking part: ``{"withdrawn": true}`` (repeats: the same).

        Their open sessions end and leave the worker's live searchers; their answers stay in
        the database, left out of what is computed from it (fits, report, export).
        """
        self.authorize(pid, token)
        self.store.withdraw(pid, time.time())
        for s in self.store.participant_sessions(pid):
            self.service.live.drop(s.id)
        return {"withdrawn": True}

    def session(
        self,
        pid: str,
        slot: int,
        known: SessionRow | None,
        start: Callable[[], tuple[str, int, dict, Owner, int]],
    ) -> SessionRow:
        """The participant's session of ``slot``: ``known`` (as read), or started now.

        ``start()`` gives what to start: (mode, items per screen, parameters, owner,
        screens at most). A request racing this one may start it first: then it is read
        back (:data:`STARTS` tries).
        """
        for _ in range(STARTS):
            if known is not None:
                return known
            mode, n_choices, params, owner, max_queries = start()
            try:
                sid, _ = self.service.start_session(
                    mode, n_choices, params, owner=owner, max_queries=max_queries
                )
            except WriteConflict:
                known = {s.slot: s for s in self.store.participant_sessions(pid)}.get(slot)
                continue
            row = self.store.session(sid)
            assert row is not None
            return row
        raise Conflict("could not start the participant's next part; try again")

    def done(self, **facts: Any) -> dict:
        """The reply once the participant's part is over: ``{"done": true, **facts}``.

        With ``completion_code`` and ``redirect`` when the experiment has them.
        """
        reply: dict = {"done": True, **facts}
        if self.completion_code is not None:
            reply["completion_code"] = self.completion_code
        if self.redirect is not None:
            reply["redirect"] = self.redirect
        return reply
