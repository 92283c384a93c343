"""A collect file's participants: an experiment of the participants' routes (``/api/participants``).

:class:`CollectService` enrols consenting, pseudonymous participants (assigned at random
to one of the collect file's samplers at enrolment: the least assigned so far, ties in a
seeded order per block of enrolments, so that the samplers' counts never differ by more
than one),
starts each one's collect session (:class:`~..modes.collect.CollectMode`) and answers
through the search service like every mode (a repeated screen gets the stored reply; a
choice out of range or an answer to a screen never shown is a 4xx with a message). An
answer reads the participant's row and their session once; the session is authorized by
the participant's token, and the search service records the answer from that row.
"""

from __future__ import annotations

from typing import Any

from ...utils import derived_seed
from ..modes.collect import CollectMode
from ..participation.participants import Participants
from ..schema import Answer
from ..service.search import Owner, SearchService
from ..store import SessionRow
from .file import CollectConfig
from .rules import ARM_SEED, collect_arms, participant_sampler
from .screens import CHECK_RULES

__all__ = ["CollectService", "ARM_SEED"]


class CollectService(Participants):
    """A collect file's participants: enrolment after consent, their queries, answers."""

    kind = "collect"
    undoable = False  # an answer stands: a repeated query checks it, not an undo
    timed = True  # the page's measure of each answer's time is recorded (response_ms)

    def __init__(self, config: CollectConfig, service: SearchService):
        super().__init__(service, config.fingerprint, completion=config.completion)
        self.config = config
        self.fingerprint = config.fingerprint
        self.catalogue = config.catalogue
        self.platform = config.platform

    def facts(self) -> dict:
        """Title, instructions, consent, ``n_choices``, ``max_queries``, ``show_names``."""
        c = self.config
        return {
            "title": c.title,
            "instructions": c.instructions,
            "consent": c.consent,
            "n_choices": c.n_choices,
            "max_queries": c.max_queries,
            "show_names": c.show_names,
        }

    def info(self) -> dict:
        """The public facts: title, instructions, consent, ``n_choices``, ``max_queries``.

        ``mode`` names the renderer the page shows the queries with; ``show_names``
        whether names go under the items; ``k``: ``n_choices``'s name before 0.3.0.
        (``GET /api/collect``'s, deprecated: :meth:`experiment` is ``GET /api/experiment``'s.)
        """
        return {"mode": CollectMode.name, **self.facts(), "k": self.config.n_choices}

    def enrol(
        self,
        plan: int = 1,
        platform_id: str | None = None,
        arms: Any = None,
        platform_params: dict | None = None,
        visit: str | None = None,
    ) -> dict:
        """A new participant (who consented): ``{"id", "token"}``; their sampler assigned."""
        arms = collect_arms(self.config) if arms is None else arms
        return super().enrol(plan, platform_id, arms, platform_params, visit)

    def sampler_of(self, row: Any) -> str:
        """The sampler of participant ``row`` (:func:`~.rules.participant_sampler`)."""
        return participant_sampler(self.config, row)

    def current_session(
        self, pid: str, row: Any, token: str, known: dict[int, SessionRow]
    ) -> tuple[int, SessionRow] | None:
        """The participant's collect session (started when new); None once it is done."""
        session = self.session(pid, 0, known.get(0), self._plan(pid, row, token))
        return None if session.done else (0, session)

    def debrief_text(self, pid: str) -> str:
        """The collect file's debrief."""
        return self.config.debrief

    def _session(self, pid: str, token: str | None) -> SessionRow:
        """The participant's collect session (started when new), read once."""
        row = self.active(pid, token)
        assert token is not None  # authorized
        known = self.store.participant_sessions(pid)
        return self.session(pid, 0, known[0] if known else None, self._plan(pid, row, token))

    def _plan(self, pid: str, row: Any, token: str) -> Any:
        """What starts the participant's collect session (for :meth:`session`)."""

        def start() -> tuple[str, int, dict, Owner, int]:
            number = int(row.number)
            owner = Owner(pid, 0, None, token, derived_seed(self.config.seed, number))
            # the check rules enrolled under (gold pool, choice of repeats: the mode's)
            params = {"sampler": self.sampler_of(row), "participant": pid, "checks": CHECK_RULES}
            return CollectMode.name, self.config.n_choices, params, owner, self.config.max_queries

        return start

    def next(self, pid: str, token: str | None) -> dict:
        """The participant's current query, or the debrief after their last.

        ``/api/collect``'s shape, deprecated (:meth:`current` is
        ``POST /api/participants/{id}/next``'s).
        """
        session = self._session(pid, token)
        if session.done:
            return self._done(pid)
        screen = self.store.screen(session.id, session.screen)
        assert screen is not None
        return {"query": _public(screen[0])}

    def answer(self, pid: str, token: str | None, request: Answer) -> dict:
        """Record the answer to the current query; the next query or the debrief.

        ``/api/collect``'s shape, deprecated (:meth:`respond` is
        ``POST /api/participants/{id}/answer``'s).
        """
        session = self._session(pid, token)
        reply = self.service.answer_row(session, request)
        if reply["done"]:
            return self._done(pid)
        return {"query": _public(reply["screen"])}

    def _done(self, pid: str) -> dict:
        """The deprecated routes' end: the part ended finished, its code recorded."""
        return self.old_end(pid, debrief=self.config.debrief)


def _public(payload: dict) -> dict:
    """A stored screen in ``/api/collect``'s deprecated shape.

    ``{"screen", "head", "candidates"}``, and a grid's ``picks`` or an odd-one-out's
    ``trial`` (``/api/participants`` gives the stored screen as it is).
    """
    out = {
        "screen": payload["number"],
        "head": payload["head"],
        "candidates": payload["candidates"],
    }
    out.update({k: payload[k] for k in ("picks", "trial") if k in payload})
    return out
