"""What the participants' routes ask of an experiment, whatever its kind: :class:`Experiment`.

:class:`~.participants.Participants` implements it for every kind (studies and collects);
``web/views/participants.py`` serves it.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from ..schema import Answer, Undo

__all__ = ["Experiment"]


@runtime_checkable
class Experiment(Protocol):
    """What the participants' routes ask of an experiment, whatever its kind.

    Every method but :meth:`experiment` and :meth:`enrol` takes the participant's id and
    token. :meth:`current`, :meth:`respond` and :meth:`undo` reply in one shape (the
    participant's current screen, or the end of their part: see
    :meth:`Participants.current`).
    """

    kind: ClassVar[str]

    def experiment(self) -> dict:
        """The public facts a participants' page needs before anyone enrols."""

    def enrol(self, plan: int = ..., platform_id: str | None = None, arms: Any = None) -> dict:
        """A new participant (who consented): ``{"id", "token"}``."""

    def join(self, link: dict | None = None, platform_id: str | None = None) -> dict:
        """Enrol from a participant's link (its platform's parameters).

        ``{"id", "token"}``, with ``"resumed": true`` when its platform id took part already.
        """

    def rejoin(self, link: dict | None) -> dict:
        """Resume the link's participant whose part ended (no consent again): their end."""

    def enrol_preview(self) -> dict:
        """The owner's preview participant: ``{"id", "token", "preview": true}``."""

    def current(self, pid: str, token: str | None) -> dict:
        """Their current screen (their next part started when new), or the end."""

    def respond(
        self, pid: str, token: str | None, request: Answer, slot: int | None = None
    ) -> dict:
        """Record their answer to a screen of part ``slot`` (None: the current); what follows."""

    def undo(self, pid: str, token: str | None, request: Undo) -> dict:
        """Take back their last answer that counts."""

    def withdraw(self, pid: str, token: str | None) -> dict:
        """They stop taking part."""

    def debrief(self, pid: str, token: str | None) -> dict:
        """The end of their part: the debrief, the completion code, the redirect."""
