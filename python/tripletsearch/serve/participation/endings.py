"""How a participant's part ends: the outcome, decided once, with its code and redirect.

:class:`Endings` is mixed into :class:`~.participants.Participants`: it reads the
experiment's ``completion`` (codes and redirects per outcome), its ``store``, the kind's
``n_slots`` and ``debrief_text``. A part ends finished or withdrawn, never both: each is one
row update of the participant (``Store.finish``, ``Store.withdraw``) that records the
outcome's code with it, and the first to commit decides (:meth:`Endings.conclude`).
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..errors import Conflict
from ..store import preview_group
from ..store.participants import outcome as stored_outcome
from .completion import fill_redirect

#: Why a request that would have ended a part the other way is refused (409), by the
#: outcome it asked for; the reply carries the end of the outcome that was decided.
REFUSED = {
    "finished": "this participant has stopped taking part",
    "withdrawn": "this participant has finished every part: there is nothing to withdraw from",
}


class Endings:
    """The end of a participant's part (mixed into ``Participants``)."""

    completion: dict[str, dict]
    completion_code: str | None
    redirect: str | None
    store: Any
    group: str
    # (the participant's row authorized and their sessions by slot: ``Participants``')
    authorize: Any
    known: Any

    @property
    def n_slots(self) -> int:
        """A participant's parts (the kind's: ``Participants.n_slots``)."""
        raise NotImplementedError

    def debrief_text(self, pid: str) -> str:
        """What the participant reads at the end (the kind's: ``Participants``')."""
        raise NotImplementedError

    #: What a withdrawn participant reads at the end.
    WITHDRAWN_TEXT = "You have stopped taking part: your answers will not be used. Thank you."

    def conclude(self, pid: str, outcome: str) -> dict:
        """End participant ``pid``'s part with ``outcome`` ("finished", "withdrawn"): its end.

        One row update (``Store.finish`` or ``Store.withdraw``) decides it, with the
        outcome's completion code, only while the part has not ended: the first of a finish
        and a withdraw to commit decides. Ended so already (a repeat): the same end. Ended
        the other way: a Conflict (409) whose reply carries that outcome's end (:meth:`end`).
        """
        code = self.completion.get(outcome, {}).get("code")
        decide = self.store.finish if outcome == "finished" else self.store.withdraw
        decide(pid, time.time(), code)
        row = self.store.participant(pid)
        if stored_outcome(row) != outcome:
            raise Conflict(REFUSED[outcome], details=self.end(pid, row=row))
        return self.end(pid, row=row)

    def old_end(self, pid: str, **facts: Any) -> dict:
        """The deprecated routes' reply once a part is over: ``{"done": true, **facts}``.

        The part ends finished as on the participants' routes (:meth:`conclude`: the code
        shown is the one recorded), with its ``completion_code`` and ``redirect`` when the
        experiment has them.
        """
        end = self.conclude(pid, "finished")
        reply: dict = {"done": True, **facts}
        for key in ("completion_code", "redirect"):
            if key in end:
                reply[key] = end[key]
        return reply

    def end(self, pid: str, outcome: str | None = None, *, row: Any = None) -> dict:
        """The end of participant ``pid``'s part, by their stored outcome.

        ``{"done": true, "outcome", "n_slots", "debrief", "completion_code"?,
        "redirect"?}``: the code recorded when the outcome was decided (:meth:`conclude`),
        with the redirect of the outcome that gives that code (the file's, per outcome:
        :attr:`completion`). A participant whose outcome was decided without a code (before
        codes were recorded, or the file gave none then) is shown the outcome's code now,
        recorded once (``Store.record_code``). A code never depends on the participant's
        checks. ``row``: theirs, as just read (None: read now); ``outcome``: the one the
        caller expects, ignored (the stored one decides).
        """
        row = self.store.participant(pid) if row is None else row
        decided = stored_outcome(row)
        given = self.completion.get(decided, {})
        code, redirect = given.get("code"), given.get("redirect")
        kept = row.code
        if kept is None and code is not None:
            kept = self.store.record_code(pid, code)
        if kept is not None and kept != code:  # an earlier end's (another file's)
            redirect = next(
                (e.get("redirect") for e in self.completion.values() if e.get("code") == kept),
                redirect,
            )
        text = self.WITHDRAWN_TEXT if decided == "withdrawn" else self.debrief_text(pid)
        reply: dict = {"done": True, "outcome": decided, "n_slots": self.n_slots, "debrief": text}
        if kept is not None:
            reply["completion_code"] = kept
        if redirect is not None:
            reply["redirect"] = self._filled(pid, redirect, kept, row)
        return reply

    def _filled(self, pid: str, redirect: str, code: str | None, row: Any = None) -> str:
        """``redirect`` with the participant's link parameters filled in (``{id}``, ...)."""
        if "{" not in redirect:
            return redirect

        row = self.store.participant(pid) if row is None else row
        params = json.loads(row.platform_params) if row and row.platform_params else {}
        return fill_redirect(redirect, params, code)

    def _decided_end(self, pid: str, token: str | None) -> dict | None:
        """Participant ``pid``'s end screen once their part ended (as stored), else None."""
        row = self.authorize(pid, token)
        ended = row.withdrawn is not None or row.finished is not None
        return self.end(pid, row=row) if ended else None

    def _over(self, pid: str) -> dict:
        """Every part done: the part ends finished (:meth:`conclude`), or a Conflict."""
        return self.conclude(pid, "finished")

    def _finished(self, pid: str) -> bool:
        """Whether every part of participant ``pid`` is done.

        Their sessions: when the part is to end finished (the outcome itself is stored:
        :meth:`conclude`).
        """
        known = self.known(pid)
        return all(j in known and known[j].done for j in range(self.n_slots))

    def settle(self, sid: str) -> None:
        """After session ``sid`` ended on a route of sessions (deprecated for participants).

        When it is a participant's of this experiment and every part of theirs is done,
        their part ends finished (:meth:`conclude`, the code recorded; a withdraw that came
        first stands), as their last answer on the participants' routes ends it.
        """
        session = self.store.session(sid)
        if session is None or session.participant is None:
            return
        pid = str(session.participant)
        row = self.store.participant(pid)
        if row is None or row.study not in (self.group, preview_group(self.group)):
            return
        if row.withdrawn is None and row.finished is None and self._finished(pid):
            try:
                self._over(pid)
            except Conflict:  # withdrawn first: that stands
                pass

    def debrief(self, pid: str, token: str | None) -> dict:
        """The end of the participant's part (:meth:`end`); Conflict before its end.

        ``{"done": true, "outcome", "n_slots", "debrief", "completion_code"?,
        "redirect"?}``; a withdrawn participant's at any time.
        """
        ended = self._decided_end(pid, token)
        if ended is not None:
            return ended
        if not self._finished(pid):
            raise Conflict("this participant's part is not over yet")
        return self._over(pid)
