"""A study's participants: enrolment after consent, then their searches one after the other.

Each search is a find session started for its participant (an
:class:`~..service.search.Owner`: their slot, target, token and a seed of the study's),
answered and undone through the search service like any other. Nothing about the method
is shown.
"""

from __future__ import annotations

from typing import Any

from ..modes.find import FindMode
from ..participation.participants import Participants
from ..service.search import Owner, SearchService
from ..store import SessionRow
from .file import PLAN_VERSION, Study

__all__ = ["StudyService"]


class StudyService(Participants):
    """The participants of ``study``, served through ``service``."""

    kind = "study"

    def __init__(self, study: Study, service: SearchService):
        super().__init__(service, study.fingerprint, completion=study.completion)
        self.study = study
        self.catalogue = study.catalogue
        self.platform = study.platform

    @property
    def n_slots(self) -> int:
        """A participant's searches: one per target of the study."""
        return len(self.study.targets)

    def facts(self) -> dict:
        """Title, consent text, ``n_choices`` and ``show_names`` (names under the items)."""
        s = self.study
        return {
            "title": s.title,
            "consent": s.consent,
            "n_choices": s.n_choices,
            "show_names": s.show_names,
        }

    def info(self) -> dict:
        """The study's public facts: title, consent text, ``n_choices``, ``n_slots``.

        And ``show_names``: whether names go under the items. (``GET /api/study``'s,
        deprecated: :meth:`experiment` is ``GET /api/experiment``'s.)
        """
        return {**self.facts(), "n_slots": self.n_slots}

    def enrol(
        self,
        plan: int = PLAN_VERSION,
        platform_id: str | None = None,
        arms: Any = None,
        platform_params: dict | None = None,
        visit: str | None = None,
    ) -> dict:
        """Enrol a new participant (who consented): ``{"id", "token"}``."""
        return super().enrol(plan, platform_id, arms, platform_params, visit)

    def current_session(
        self, pid: str, row: Any, token: str, known: dict[int, SessionRow]
    ) -> tuple[int, SessionRow] | None:
        """The first search not finished (started when new); None after the last."""
        slot = next((j for j in range(self.n_slots) if not _finished(known.get(j))), None)
        if slot is None:
            return None
        return slot, self.session(pid, slot, known.get(slot), self._plan(pid, row, slot, token))

    def debrief_text(self, pid: str) -> str:
        """The thanks: every search done, and the participant's id."""
        n = self.n_slots
        searches = "the search is" if n == 1 else f"all {n} searches are"
        return f"Thank you: {searches} done. Your participant id is {pid}."

    def next(self, pid: str, token: str | None) -> dict:
        """The participant's current search (started when new); ``/api/study``'s shape.

        ``{"done": false, "slot", "n_slots", "target", "n_queries", "session": {"id",
        "screen"}}``, or ``{"done": true, "n_slots", "completion_code"?, "redirect"?}``
        after the last one, the part ended finished as on the participants' routes
        (:meth:`old_end`: the code recorded). (Deprecated: :meth:`current` is
        ``POST /api/participants/{id}/next``'s.)
        """
        row = self.active(pid, token)
        assert token is not None  # authorized
        part = self.current_session(pid, row, token, self.known(pid))
        if part is None:
            return self.old_end(pid, n_slots=self.n_slots)
        slot, current = part
        screen = self.store.screen(current.id, current.screen)
        return {
            "done": False,
            "slot": slot,
            "n_slots": self.n_slots,
            "target": self.study.catalogue.item(int(current.target or 0)),
            "n_queries": current.n_queries,
            "session": {"id": current.id, "screen": None if screen is None else screen[0]},
        }

    def _plan(self, pid: str, row: Any, slot: int, token: str) -> Any:
        """What starts the participant's search ``slot`` (for :meth:`session`)."""

        def start() -> tuple[str, int, dict, Owner, int]:
            number = int(row.number)
            target, method = self.study.plan(number, int(row.plan))[slot]
            owner = Owner(pid, slot, target, token, self.study.session_seed(number, slot))
            s = self.study
            return FindMode.name, s.n_choices, s.params(method), owner, s.search_screens

        return start


def _finished(row: SessionRow | None) -> bool:
    return row is not None and bool(row.done)
