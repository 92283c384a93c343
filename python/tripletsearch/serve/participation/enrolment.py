"""A participant's enrolment and identity.

A new participant, one from a platform's link, a returning one whose part ended, the
refusal of a second visit, the owner's preview.

:class:`Enrolment` is a part of :class:`~.participants.Participants` (a mixin over its
``store``, ``group`` and ``platform``, after :class:`~.endings.Endings`).
"""

from __future__ import annotations

import copy
import secrets
from typing import Any

from ..errors import Busy, Conflict, Invalid, NotFound
from ..service.tokens import new_token, token_hash
from ..store import IdTaken, SecondVisit, StoreBusy, is_preview, preview_group
from .endings import Endings
from .platforms import PlatformError, canonical_id, spelled

__all__ = ["Enrolment", "PREVIEW_ID"]

#: The ids of the owner's preview participants begin so (real ones: ``P-``); they are kept
#: under the experiment's preview key (``store.preview_group``): nothing of theirs counts.
PREVIEW_ID = "PREVIEW-"


class Enrolment(Endings):
    """Enrolling participants (see the module docstring)."""

    platform: Any

    def enrol(
        self,
        plan: int = 1,
        platform_id: str | None = None,
        arms: Any = None,
        platform_params: dict | None = None,
        visit: str | None = None,
    ) -> dict:
        """A new participant (after their consent): ``{"id", "token"}``.

        The id has 64 random bits (``P-`` and 16 hex digits); one already taken is drawn
        again. ``plan``: the experiment's plan version when this is its first participant
        (see :meth:`.store.Store.enrol`); ``platform_id``: a crowdsourcing platform's id
        for them, ``platform_params`` their link's parameters; ``arms``: the arms to assign
        them one of (:class:`~..collect.rules.Arms`). One participant per platform id: an id already
        enrolled with this ``visit`` (the platform's value for the visit) resumes its
        participant (``Store.enrol_as``): ``{"id", "token", "resumed": true}`` with a new
        token, the previous one no longer valid; with another visit's value a
        :class:`~.errors.Conflict` (409, :meth:`refusal`), nothing of theirs shown.
        :class:`~.errors.Busy` (503) when the database keeps losing races.
        """
        token = new_token()
        for _ in range(8):
            prefix = PREVIEW_ID if is_preview(self.group) else "P-"
            pid = prefix + secrets.token_hex(8).upper()
            try:
                resumed = False
                if platform_id is None and not platform_params:  # as before 0.5
                    self.store.enrol(self.group, pid, token_hash(token), plan, None, arms)
                else:
                    pid, _, resumed = self.store.enrol_as(
                        self.group, pid, token_hash(token), plan, platform_id, arms,
                        platform_params, visit,
                    )  # fmt: skip
            except IdTaken:
                continue
            except SecondVisit:
                raise self.refusal() from None
            except StoreBusy as exc:
                raise Busy(f"{exc}; try again in a moment") from None
            reply: dict = {"id": pid, "token": token}
            return {**reply, "resumed": True} if resumed else reply
        raise Busy("could not draw a free participant id; try again")

    def join(self, link: dict | None = None, platform_id: str | None = None) -> dict:
        """Enrol from a participant's link: ``POST /api/participants``'s reply.

        ``link``: the platform parameters the page read from its link (``{name: value}``),
        read by the file's :attr:`platform` (:meth:`.platforms.Platform.read`: unknown
        names ignored, each value checked, a required id or an MTurk preview refused, 400
        naming the parameter); its id parameter is the ``platform_id``. Without a platform
        the old ``platform_id`` alone (and no parameters) as before. A ``platform_id`` that
        differs from the link's id is refused. Then :meth:`enrol`.
        """
        params = None
        if self.platform is not None:
            given = dict(link or {})
            if platform_id is not None:
                given.setdefault(self.platform.id, platform_id)
            try:
                read, params = self.platform.read(given)
            except PlatformError as exc:
                raise Invalid(str(exc)) from None
            if platform_id is not None and read != canonical_id(self.platform.name, platform_id):
                raise Invalid(f"platform_id: not the link's {self.platform.id}")
            platform_id = read
            visit = self.platform.visit_of(params)
            return self.enrol(platform_id=platform_id, platform_params=params or None, visit=visit)
        if platform_id is not None:  # no platform: the id in its compared form, no visit
            platform_id = canonical_id(None, platform_id)
            if not platform_id:
                raise Invalid("platform_id: no visible characters")
        return self.enrol(platform_id=platform_id)

    def rejoin(self, link: dict | None) -> dict:
        """A returning participant whose part ended: ``POST /api/participants/resume``.

        The link's platform id with its visit's value (read as :meth:`join` reads them), of
        a participant who finished or withdrew, resumes them without consent again
        (``{"id", "token", "resumed": true, "end"}``: a new token, and :meth:`end`'s reply,
        their code and redirect), on any device. NotFound, nothing recorded, for anyone else
        (no platform, no id, another visit's value, a part not over): the page asks consent.
        """
        if self.platform is None or is_preview(self.group):
            raise NotFound("no part to resume here: consent to take part")
        try:
            platform_id, params = self.platform.read(link)
        except PlatformError as exc:
            raise Invalid(str(exc)) from None
        token, pid = new_token(), None
        if platform_id is not None:
            visit = self.platform.visit_of(params)
            hashed = token_hash(token)
            pid = self.store.resume_ended(self.group, platform_id, hashed, params, visit)
        if pid is None:
            raise NotFound("no ended part of this link to resume: consent to take part")
        return {"id": pid, "token": token, "resumed": True, "end": self.end(pid)}

    def refusal(self) -> Conflict:
        """The 409 for a second session of a platform id: said in plain words, nothing else.

        ``{"error": ..., "refused": true}``: no id, token, code or answer of the participant
        the id belongs to (their token still works).
        """
        name = spelled("" if self.platform is None else self.platform.name)
        what = "this id" if name == "the platform" else f"this {name} id"
        return Conflict(
            f"You cannot take part from this link: {what} is already taking part "
            f"from another session. If it is yours and you started again on {name}, ask the "
            "researcher to release your earlier participation, then open the link again. "
            "Nothing of yours was recorded here.",
            details={"refused": True},
        )

    def enrol_preview(self) -> dict:
        """A preview participant, for the owner: ``{"id", "token", "preview": true}``.

        Enrolled as :meth:`enrol` enrols (the kind's plan and arms) in the experiment's
        preview group (``store.preview_group``: ``preview:<key>``, numbered apart), with an
        id beginning :data:`PREVIEW_ID`; then served by the same methods as everyone. Every
        query by the experiment's key misses them and those over every key leave them out:
        no count, fit, export, report, dashboard, arm balance or plan number sees them; their
        sessions take nothing shared (``params["preview"]``: a collect's preview takes no
        query from the samplers' buffers).
        """
        twin = copy.copy(self)
        twin.group = preview_group(self.group)
        return {**twin.enrol(), "preview": True}
