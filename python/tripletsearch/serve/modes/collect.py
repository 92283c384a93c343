"""Collect mode: the collect's query mix (:mod:`~..collect.screens`) behind the modes' interface.

A participant's queries form one session of this mode (started by
:class:`~tripletsearch.serve.collect.service.CollectService`, never as a free session). What
each screen asks, the checks among them and the participant's state live in the collect's
home (:class:`~..collect.screens.QueryMix`, :class:`~..collect.screens.Participant`); this
adapter builds the page's payload, checks an answer's position and reads stored sessions.
"""

from __future__ import annotations

from typing import Any

from ..collect.screens import MODE, Participant, QueryMix, gold_positions
from ..errors import Invalid
from ..schema import Answer
from .base import Mode, Screen, ScreenSizes, SessionInfo

__all__ = ["CollectMode"]


class CollectMode(Mode):
    """Triplet queries to participants (see the module docstring).

    Served only when the server runs a collect file (``Settings.collect``).
    """

    name = MODE
    experiment_kind = "collect"

    @classmethod
    def offered_by(cls, catalogue: Any) -> bool:
        """Never as a free session: its sessions are participants' (CollectService)."""
        return False

    @property
    def config(self) -> Any:
        """The collect file served (Invalid when the server collects nothing)."""
        if self.settings.collect is None:
            raise Invalid("this server collects no triplets")
        return self.settings.collect

    @property
    def space(self) -> str:
        """``collect:<fingerprint>``: what its sessions search, compared, never parsed.

        The collect a session belongs to is the store's column (``SessionRow.experiment``).
        """
        return "none" if self.settings.collect is None else f"collect:{self.fingerprint}"

    @property
    def fingerprint(self) -> str:
        """The collect design's identity in the database (the collect file's)."""
        return str(self.config.fingerprint)

    @property
    def mix(self) -> QueryMix:
        """The collect's query mix (built once; Invalid when the server collects nothing)."""
        got = self.__dict__.get("_mix")
        if got is None:
            got = self._mix = QueryMix(self.catalogue, self.config, self.store)
        return got

    @property
    def screen_sizes(self) -> ScreenSizes:
        """The file's ``k`` candidates (odd-one-out: 3 items)."""
        k = 2 if self.settings.collect is None else self.config.k
        return ScreenSizes(k, k, k)

    def new_params(self, n_choices: int | None, guesses: int | None = None) -> tuple[int, dict]:
        """``k`` candidates; the sampler and participant come from CollectService."""
        self._no_guesses(guesses)
        return self.config.k, {}

    def searcher(self, n_choices: int, params: dict, seed: int) -> Participant:
        """The participant's state (their queries are replayed into it)."""
        p = Participant(str(params["sampler"]), str(params["participant"]), seed)
        p.preview = bool(params.get("preview", False))
        if self.settings.collect is not None:  # (the limit the session started with)
            most = int(params.get("max_queries", self.config.max_queries))
            p.rules = int(params.get("checks", 1))
            p.gold = gold_positions(self.config, seed, most, p.rules)
        return p

    def session_bytes(self, n_choices: int, params: dict) -> int:
        """A few KiB: the queries shown."""
        return 64 << 10

    def state_bytes(self, searcher: Any) -> int:
        """As ``session_bytes``."""
        return 64 << 10

    # ---------------------------------------------------------------- screens
    def next_screen(self, searcher: Participant, number: int) -> Screen | None:
        """Screen ``number``: the query mix's query (:meth:`QueryMix.query`), its items."""
        query, claim = self.mix.query(searcher, number)
        cat = self.catalogue
        try:
            payload = {
                "number": number,
                "head": None if query.get("head") is None else cat.item(query["head"]),
                "candidates": [cat.item(c) for c in query["candidates"]],
            }
            if query.get("trial") is not None:  # (odd-one-out: three items, no head)
                payload["trial"] = query["trial"]
            if query.get("picks", 1) > 1:  # (ranked picks, in order)
                payload["picks"] = int(query["picks"])
        except BaseException:  # the query taken from the buffer is free again
            self.mix.release(claim)
            raise
        return Screen(payload, query, claim)

    def discard(self, screen: Screen) -> None:
        """A query taken from the buffer for a screen never recorded: free again."""
        if self.settings.collect is not None:
            self.mix.release(screen.claim)

    # ---------------------------------------------------------------- answers
    def check_answer(self, session: SessionInfo, screen: Screen, answer: Answer) -> None:
        """A candidate's position, or a skip; never "found" (refused here, the one place)."""
        if answer.found:
            raise Invalid("found: a collect query has no 'this is it'")
        size = len(screen.query["candidates"])
        self._check_position(answer.choice, size)
        if answer.picks is not None and not all(0 <= p < size for p in answer.picks):
            raise Invalid(f"picks: expected positions in 0..{size - 1}, got {list(answer.picks)}")

    def picks_of(self, query: dict) -> int:
        """A query's ``picks`` (ranked picks in order; default one)."""
        return int(query.get("picks", 1))

    def apply(self, searcher: Participant, query: dict, choice: int | None) -> None:
        """Remember the query shown (for the repeats and to never ask it twice)."""
        searcher.remember(query)

    def found_result(self, screen: Screen, choice: int | None) -> dict:
        """Never called: :meth:`check_answer` refuses "found" before any answer is applied."""
        raise AssertionError("collect: check_answer refuses found; no result to give")

    def end_result(self, searcher: Any, number: int) -> dict:
        """``{"target": None, "reason": "max_queries"}``: the participant's queries done."""
        return {"target": None, "reason": "max_queries"}

    @classmethod
    def shown_items(cls, query: dict) -> list[int] | None:
        """The head, then the candidates (odd-one-out: the three items)."""
        head = [] if query.get("head") is None else [int(query["head"])]
        return [*head, *(int(c) for c in query["candidates"])]

    @classmethod
    def shown_record(cls, payload: dict, query: dict) -> Any:
        """``{"head", "candidates", "kind"}``, and the trial's ``picks`` or ``trial``."""
        out = {"head": query["head"], "candidates": query["candidates"], "kind": query["kind"]}
        out.update({k: query[k] for k in ("picks", "trial") if k in query})
        return out
