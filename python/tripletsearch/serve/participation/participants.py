"""Participants: pseudonymous people enrolled, after their consent, in an experiment.

A participant is a random id (``P-3F9A0C21D4E8B713``, never a name) and a bearer token whose
hash the database keeps; participants are numbered within their experiment in enrolment
order (a study balances its assignment by that number). :class:`Participants` is what every
kind of experiment (a study, a triplet collection) does with its participants: enrol,
authorize, withdraw, start their sessions (each session is theirs: an
:class:`~.search.Owner`), and end their part with the completion code and redirect. A kind
of experiment specialises it with what its participants do (a study's searches one after
the other, a collect's queries).

:class:`Experiment` is what the participants' routes (``/api/experiment``,
``/api/participants/...``) ask of every kind: the experiment's public facts, then, per
participant, enrol, next, answer, undo, withdraw and debrief, each replying in one shape
(:meth:`Participants.current`). :class:`Participants` implements it for every kind from two
of the kind's answers: its parts (:attr:`~Participants.n_slots`), and which session is a
participant's current one (:meth:`~Participants.current_session`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ..errors import Conflict, Invalid, NotFound, Unauthorized
from ..schema import MAX_RESPONSE_MS, Answer, Undo
from ..service.search import Owner, SearchService
from ..service.tokens import token_matches
from ..store import (
    SessionRow,
    WriteConflict,
    preview_group,
)
from .endings import REFUSED
from .enrolment import PREVIEW_ID, Enrolment
from .protocol import Experiment

__all__ = ["Participants", "Experiment", "PREVIEW_ID"]

STARTS = 3  # tries to start a participant's session while racing requests start it too


class Participants(Enrolment):
    """The participants of experiment ``group`` (its identity in the database).

    Parameters
    ----------
    service : SearchService
        Their sessions' service (and its database).
    group : str
        The experiment's identity: participants are numbered within it.
    completion_code, redirect : str, optional
        What a participant who finished gets at the end of their part (a crowdsourcing
        platform's code, a link back to it).
    completion : dict, optional
        The codes and redirects per outcome (``{"finished": {"code", "redirect"},
        "withdrawn": {...}}``, :func:`~..experiment.completion`); given, it replaces
        ``completion_code`` and ``redirect``.
    """

    #: The experiment's kind, as ``GET /api/experiment`` names it.
    kind: ClassVar[str] = ""
    #: Whether a participant may take back an answer (:meth:`undo`).
    undoable: ClassVar[bool] = True
    #: Whether the page's measure of a person's time on a screen is recorded with each
    #: answer (``response_ms``; refused otherwise).
    timed: ClassVar[bool] = False

    def __init__(
        self,
        service: SearchService,
        group: str,
        completion_code: str | None = None,
        redirect: str | None = None,
        completion: dict | None = None,
    ):
        self.service, self.store, self.group = service, service.store, group
        if completion is None:
            given = completion_code is not None or redirect is not None
            completion = (
                {"finished": {"code": completion_code, "redirect": redirect}} if given else {}
            )
        self.completion: dict[str, dict] = completion
        finished = completion.get("finished", {})
        self.completion_code, self.redirect = finished.get("code"), finished.get("redirect")
        self.catalogue: Any = None  # the kind's (its item(i): a target's record)
        # the crowd platform the experiment's file names (crowd.platforms.Platform), or None
        self.platform: Any = None

    def authorize(self, pid: str, token: str | None) -> Any:
        """The participant's row (id, token_hash, study, number, created, plan, withdrawn).

        NotFound when there is no such participant in the experiment (or its preview:
        :meth:`enrol_preview`), Unauthorized when the token is not theirs, Conflict (409,
        ``"released": true``) once the owner released them (``participants release``).
        """
        row = self.store.participant(pid) if isinstance(pid, str) and len(pid) <= 64 else None
        if row is None or row.study not in (self.group, preview_group(self.group)):
            raise NotFound("no such participant in this study")
        if not token_matches(token, row.token_hash):
            # a token given and not theirs (any more): the part continued with another
            # (the same link opened in another window resumed them), as the page says
            elsewhere = {"continued_elsewhere": True} if token else None
            raise Unauthorized("missing or wrong token for this participant", elsewhere)
        if row.released is not None:
            raise Conflict(
                "The researcher released this participation for a fresh start: open the "
                "study's link again to take part.",
                details={"released": True},
            )
        return row

    def active(self, pid: str, token: str | None) -> Any:
        """As :meth:`authorize`, and Conflict when the participant stopped taking part.

        The Conflict's reply carries their end (the withdrawn one: :meth:`end`).
        """
        row = self.authorize(pid, token)
        if row.withdrawn is not None:
            raise Conflict(REFUSED["finished"], details=self.end(pid, row=row))
        return row

    def withdraw(self, pid: str, token: str | None) -> dict:
        """The participant stops taking part: ``{"withdrawn": true}`` and their end screen.

        Their open sessions end and leave the worker's live searchers; their answers stay in
        the database, left out of what is computed from it (fits, report, export). The
        reply is :meth:`end`'s (``"outcome": "withdrawn"``, the withdrawn outcome's code
        and redirect, recorded) with ``"withdrawn": true``; repeats answer the same.

        Once finished there is nothing to withdraw from: a Conflict (409) whose reply
        carries the finished end screen (:meth:`end`'s), the participant kept finished
        (their code stays the finished one). A part whose every part is done ends finished
        first (its finish was due). The withdraw and a finish are each one row update: the
        first to commit decides (:meth:`conclude`).
        """
        row = self.authorize(pid, token)
        if row.withdrawn is None and row.finished is None and self._finished(pid):
            try:  # every part done: finished
                self._over(pid)
            except Conflict:  # withdrawn meanwhile (another request): a repeat below
                pass
        end = self.conclude(pid, "withdrawn")
        for s in self.store.participant_sessions(pid):
            self.service.live.drop(s.id)
        return {"withdrawn": True, **end}

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
            if pid.startswith(PREVIEW_ID):  # a preview's: takes nothing others would get
                params = {**params, "preview": True}
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

    # ------------------------------------------------------- one surface for every kind
    @property
    def n_slots(self) -> int:
        """A participant's parts (sessions), one after the other."""
        return 1

    def current_session(
        self, pid: str, row: Any, token: str, known: dict[int, SessionRow]
    ) -> tuple[int, SessionRow] | None:
        """(slot, session) of the participant's current part, started when new; None: over.

        ``row``: the participant's, authorized; ``known``: their sessions by slot.
        """
        raise NotImplementedError

    def debrief_text(self, pid: str) -> str:
        """What the participant reads at the end of their part."""
        raise NotImplementedError

    def facts(self) -> dict:
        """The kind's public facts (:meth:`experiment` adds the common ones)."""
        return {}

    def experiment(self) -> dict:
        """The public facts: ``kind``, the kind's facts, the page's limits.

        The kind's facts: title, consent, ... (:meth:`facts`); the limits: ``undo``
        (whether answers can be taken back), ``max_response_ms`` (the longest time on a
        screen recorded; None: none recorded) and ``n_slots``. And, when the file names
        one, ``platform``: the crowdsourcing platform whose link parameters the page sends
        at enrolment (``{"name", "id", "params", "required", "preview": {"param",
        "value"} | null}``, :meth:`.platforms.Platform.facts`).
        """
        reply = {
            "kind": self.kind,
            **self.facts(),
            "n_slots": self.n_slots,
            "undo": self.undoable,
            "max_response_ms": MAX_RESPONSE_MS if self.timed else None,
        }
        if self.platform is not None:
            reply["platform"] = self.platform.facts()
        return reply

    def known(self, pid: str) -> dict[int, SessionRow]:
        """The participant's sessions, by slot."""
        return {int(s.slot): s for s in self.store.participant_sessions(pid) if s.slot is not None}

    def _part(self, pid: str, token: str | None) -> tuple[Any, tuple[int, SessionRow] | None]:
        row = self.active(pid, token)
        assert token is not None  # authorized
        return row, self.current_session(pid, row, token, self.known(pid))

    def _reply(
        self, slot: int, session: SessionRow, screen: dict, n_queries: int, **more: Any
    ) -> dict:
        """The reply showing ``screen`` of ``session`` (the participant's part ``slot``)."""
        target = None if session.target is None else self.catalogue.item(int(session.target))
        return {
            "done": False,
            "mode": session.mode,
            "slot": slot,
            "n_slots": self.n_slots,
            "target": target,
            "n_queries": n_queries,
            "screen": screen,
            **more,
        }

    def current(self, pid: str, token: str | None) -> dict:
        """The participant's current screen, their next part started when new.

        ``{"done": false, "mode", "slot", "n_slots", "target", "n_queries", "screen",
        "history"}``: the renderer's mode, the part (``slot`` of ``n_slots``; ``target``:
        the item the part searches for, or None), its answers that count, the screen (its
        ``number`` and what it shows) and the part's history (``GET /api/sessions/{id}``'s).
        After the last part, or once they withdrew: :meth:`end`'s reply (``"outcome":
        "finished"`` or ``"withdrawn"``); the last part done, the part ends finished then
        (:meth:`conclude`: a Conflict carrying the withdrawn end if a withdraw came first).
        """
        row = self.authorize(pid, token)
        if row.withdrawn is not None or row.finished is not None:
            return self.end(pid, row=row)
        assert token is not None  # authorized
        part = self.current_session(pid, row, token, self.known(pid))
        if part is None:
            return self._over(pid)
        slot, session = part
        stored = self.store.screen(session.id, session.screen)
        if stored is None:
            raise Conflict("this participant's current screen is missing")
        history = self.service.get(session.id, token)["history"]
        return self._reply(slot, session, stored[0], session.n_queries, history=history)

    def respond(
        self, pid: str, token: str | None, request: Answer, slot: int | None = None
    ) -> dict:
        """Record the answer to screen ``request.screen`` of part ``slot``; what follows.

        ``slot`` None: the current part. The reply as :meth:`current`'s (no history): the
        part's next screen, else the next part's first, else the end.

        The same answer again gets the same reply (a repeat to a finished part: what follows
        it now); a different one is a Conflict. The last part's last answer ends the part
        finished (:meth:`conclude`); a withdraw that came first makes it a Conflict whose
        reply carries the withdrawn end, as an answer after a withdraw gets; a different
        answer to a part finished elsewhere first, a Conflict carrying the finished end.
        """
        if request.response_ms is not None and not self.timed:
            raise Invalid(f"response_ms: this {self.kind} records no response times")
        row = self.active(pid, token)
        assert token is not None  # authorized
        known = self.known(pid)
        if slot is None or slot not in known:
            found = self.current_session(pid, row, token, known)
            if found is None:  # over: a repeat of the last part's last answer, or a Conflict
                if not known:
                    return self._over(pid)
                found = max(known), known[max(known)]
            if slot is not None and slot != found[0]:
                raise Invalid(f"slot: part {slot} has not begun (the current part is {found[0]})")
            slot, session = found
        else:
            session = known[slot]
        try:
            reply = self.service.answer_row(session, request)
        except Conflict as exc:
            row = self.active(pid, token)  # withdrawn meanwhile (their search ended): their end
            if row.finished is not None and not exc.details:  # finished elsewhere: its end
                raise Conflict(exc.message, details=self.end(pid, row=row)) from None
            raise
        if reply["done"]:
            row = self.active(pid, token)  # withdrawn meanwhile: their end, refused
            if self.current_session(pid, row, token, self.known(pid)) is None:
                return self._over(pid)  # the last part done: it ends finished, or a 409
            return self.current(pid, token)
        return self._reply(slot, session, reply["screen"], reply["n_queries"])

    def undo(self, pid: str, token: str | None, request: Undo) -> dict:
        """Take back the last answer that counts of the current part.

        As ``POST /api/sessions/{id}/undo``; the reply as :meth:`respond`'s.
        """
        if not self.undoable:  # (authorized first; no part started to be refused)
            self.active(pid, token)
            raise Conflict(f"a {self.kind}'s answers are not taken back")
        _, part = self._part(pid, token)
        if part is None:
            raise Conflict("this participant's part is over")
        slot, session = part
        reply = self.service.undo(session.id, token, request)
        return self._reply(slot, session, reply["screen"], reply["n_queries"])
