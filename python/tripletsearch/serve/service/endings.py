"""How a participant's part ends: the outcome's completion code and redirect, recorded once.

:class:`Endings` is mixed into :class:`~.participants.Participants`: it reads the
experiment's ``completion`` (codes and redirects per outcome), its ``store``, the kind's
``n_slots`` and ``debrief_text``.
"""

from __future__ import annotations

import json
from typing import Any


class Endings:
    """The end of a participant's part (mixed into ``Participants``)."""

    completion: dict[str, dict]
    completion_code: str | None
    redirect: str | None
    store: Any

    @property
    def n_slots(self) -> int:
        """A participant's parts (the kind's: ``Participants.n_slots``)."""
        raise NotImplementedError

    def debrief_text(self, pid: str) -> str:
        """What the participant reads at the end (the kind's: ``Participants``')."""
        raise NotImplementedError

    def done(self, **facts: Any) -> dict:
        """The deprecated routes' reply once a part is over: ``{"done": true, **facts}``.

        With the finished outcome's ``completion_code`` and ``redirect`` when the
        experiment has them (not recorded: :meth:`end` is the participants' routes').
        """
        reply: dict = {"done": True, **facts}
        if self.completion_code is not None:
            reply["completion_code"] = self.completion_code
        if self.redirect is not None:
            reply["redirect"] = self.redirect
        return reply

    #: What a withdrawn participant reads at the end.
    WITHDRAWN_TEXT = "You have stopped taking part: your answers will not be used. Thank you."

    def end(self, pid: str, outcome: str) -> dict:
        """The end of participant ``pid``'s part with ``outcome`` ("finished", "withdrawn").

        ``{"done": true, "outcome", "n_slots", "debrief", "completion_code"?,
        "redirect"?}``: the outcome's code and redirect as the experiment gives them
        (:attr:`completion`). The code shown is recorded once (``Store.record_code``):
        shown again, the end shows the recorded one (with the redirect of the outcome that
        gives that code, if any). A code never depends on the participant's checks.
        """
        given = self.completion.get(outcome, {})
        code, redirect = given.get("code"), given.get("redirect")
        kept = self.store.record_code(pid, code) if code is not None else None
        if kept is None:
            row = self.store.participant(pid)
            kept = None if row is None else row.code
        if kept is not None and kept != code:  # an earlier end's (another outcome, file)
            redirect = next(
                (e.get("redirect") for e in self.completion.values() if e.get("code") == kept),
                redirect,
            )
        text = self.WITHDRAWN_TEXT if outcome == "withdrawn" else self.debrief_text(pid)
        reply: dict = {"done": True, "outcome": outcome, "n_slots": self.n_slots, "debrief": text}
        if kept is not None:
            reply["completion_code"] = kept
        if redirect is not None:
            reply["redirect"] = self._filled(pid, redirect, kept)
        return reply

    def _filled(self, pid: str, redirect: str, code: str | None) -> str:
        """``redirect`` with the participant's link parameters filled in (``{id}``, ...)."""
        if "{" not in redirect:
            return redirect
        from ..crowd.completion import fill_redirect

        row = self.store.participant(pid)
        params = json.loads(row.platform_params) if row and row.platform_params else {}
        return fill_redirect(redirect, params, code)
