"""The interface every mode of the service implements (see the package docstring)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

from ..catalogue import Catalogue
from ..config import GAMMA
from ..errors import Invalid
from ..schema import Answer
from ..store import Store

__all__ = ["Mode", "Screen", "ScreenSizes", "Settings", "SessionInfo"]


class Screen(NamedTuple):
    """A screen: its public ``payload`` (what the page gets) and the ``query`` behind it.

    Both JSON objects, stored as shown; the query is what answers are replayed against.
    ``claim``: what the mode took to make it that is not stored with it (a query from a
    buffer), given back by :meth:`Mode.discard` when the screen is never recorded.
    """

    payload: dict
    query: dict
    claim: Any = None


class ScreenSizes(NamedTuple):
    """Items per screen a mode offers: ``min`` to ``max``, ``default`` when not given."""

    min: int
    max: int
    default: int

    def to_json(self) -> dict[str, int]:
        """``{"min", "max", "default"}``."""
        return self._asdict()


@dataclass(frozen=True)
class Settings:
    """What the server was started with, for the modes that use it.

    ``gamma``: the gamma-CKL power assumed of people in find mode, or "auto". ``threads``:
    the native threads of each search step (results are the same for any number).
    ``collect``: the collect file the collect mode serves (None: none). ``embeddings``: a
    study method's own embedding of the catalogue's items (method -> array), searched
    instead of the catalogue's by that method's sessions. ``guesses``: the best guesses
    offered with each screen of a free find session that asks for none (0: the paper's
    protocol). Built by :func:`~.mode_registry` from the server's configuration and what
    its experiment gives (``collect`` and ``embeddings``: the experiment's
    ``mode_settings()``).
    """

    gamma: float | str = GAMMA
    threads: int = 1
    collect: Any = None  # the collect file (serve.collect.CollectConfig) when collecting
    embeddings: Any = None  # {method: ndarray (n_items, d)} or None
    guesses: int = 0


class SessionInfo(NamedTuple):
    """What a mode may read of a stored session: its screen size, parameters and target.

    ``target``: the item a participant-scoped session was given (a study's), else None.
    """

    n_choices: int
    params: dict
    target: int | None


class Mode(ABC):
    """One kind of search the service serves (find an item, mix a colour, ...).

    One object per process, built with the catalogue, the server's settings and the
    sessions' database (a mode may keep its own rows there); the per-session state is the
    "searcher" it builds, and everything a searcher depends on is stored, so any worker
    rebuilds it (see the package docstring, "Adding a mode").
    """

    name: ClassVar[str]
    #: the kind of experiment whose participants' sessions run this mode (a study's
    #: searches; a mode that collects triplets is its collect's)
    experiment_kind: ClassVar[str] = "study"

    def __init__(self, catalogue: Catalogue, settings: Settings, store: Store | None = None):
        self.catalogue, self.settings, self.store = catalogue, settings, store

    # ---------------------------------------------------------------- what it offers
    @classmethod
    def offered_by(cls, catalogue: Catalogue) -> bool:
        """Whether ``catalogue`` can serve new sessions of this mode."""
        return True

    @property
    @abstractmethod
    def space(self) -> str:
        """What its sessions search (a catalogue's fingerprint, ...), stored with each.

        A session started on another space is refused.
        """

    @property
    @abstractmethod
    def screen_sizes(self) -> ScreenSizes:
        """The items per screen it offers."""

    def close(self) -> None:  # noqa: B027 - a hook: most modes hold nothing to release
        """Release resources shared by its sessions (when the app stops)."""

    # ---------------------------------------------------------------- sessions
    @abstractmethod
    def new_params(self, n_choices: int | None, guesses: int | None = None) -> tuple[int, dict]:
        """Check a new session's mode-specific fields: (items per screen, its parameters).

        ``guesses``: best guesses asked per screen (None: not asked; a mode that offers none
        refuses a number > 0 with :meth:`_no_guesses`). Raises :class:`~..errors.Invalid`.
        The parameters are stored with the session.
        """

    @abstractmethod
    def searcher(self, n_choices: int, params: dict, seed: int) -> Any:
        """A session's state before any answer, from its stored parameters and seed."""

    #: What a live searcher of a mode that cannot tell is taken to hold (a nominal MiB).
    NOMINAL_STATE_BYTES = 1 << 20

    def session_bytes(self, n_choices: int, params: dict) -> int:
        """The bytes a live searcher of these parameters holds (before it is built).

        The server's memory budget reserves them before it builds or replays one. Default:
        :attr:`NOMINAL_STATE_BYTES`.
        """
        return self.NOMINAL_STATE_BYTES

    def state_bytes(self, searcher: Any) -> int:
        """The bytes ``searcher`` holds (default: its ``state_bytes``, else nominal)."""
        return int(getattr(searcher, "state_bytes", self.NOMINAL_STATE_BYTES))

    def started(self, searcher: Any, params: dict) -> dict:
        """The parameters to store once the searcher is built (default: as given)."""
        return params

    @abstractmethod
    def next_screen(self, searcher: Any, number: int) -> Screen | None:
        """Screen ``number`` from the searcher, or None when the search is over."""

    def for_target(self, screen: Screen, target: int, attention: bool, seed: int) -> Screen:
        """``screen`` of a session with a ``target`` (a study's), as the study's checks need.

        ``attention``: an attention screen (the target among the candidates). Default: the
        screen as it is (a mode without checks).
        """
        return screen

    def discard(self, screen: Screen) -> None:  # noqa: B027 - most modes take nothing
        """Give back what ``screen`` took (its ``claim``): it was made but never recorded.

        The service calls it when the write of the answer that made it lost a race (the
        session moved on under the request) or failed. Default: nothing to give back.
        """

    @abstractmethod
    def check_answer(self, session: SessionInfo, screen: Screen, answer: Answer) -> None:
        """Refuse (Invalid) an answer that does not fit the stored screen."""

    def check(self, session: SessionInfo, screen: Screen, answer: Answer) -> None:
        """Refuse (Invalid) an answer that does not fit the stored screen or its picks."""
        self.check_answer(session, screen, answer)
        self.check_picks(screen, answer)

    def picks_of(self, query: dict) -> int:
        """How many positions an answer to a screen of ``query`` picks (default: one).

        An answer to a screen of more gives them in order (``Answer.picks``); one of one
        gives ``choice`` alone.
        """
        return 1

    def check_picks(self, screen: Screen, answer: Answer) -> None:
        """Refuse (Invalid) ``picks`` that the screen does not ask: a skip, or its number.

        Each position is on the screen (:meth:`check_answer` checks ``choice``).
        """
        r, picks = self.picks_of(screen.query), answer.picks
        if answer.choice is None or r == 1:
            if picks is not None:
                what = "a skip" if answer.choice is None else "one pick (choice)"
                raise Invalid(f"picks: this screen takes {what}, not picks")
            return
        if picks is None or len(picks) != r:
            raise Invalid(f"picks: this screen asks {r} positions in order, got {picks}")

    @abstractmethod
    def apply(self, searcher: Any, query: dict, choice: int | None) -> None:
        """One stored answer (not "this is it") into the searcher, as it was shown."""

    @abstractmethod
    def found_result(self, screen: Screen, choice: int | None) -> dict:
        """The session's result when the person ends it on ``screen`` ("this is it")."""

    @abstractmethod
    def end_result(self, searcher: Any, number: int) -> dict:
        """The session's result when its screens run out at screen ``number``."""

    # ---------------------------------------------------------------- reading records
    @classmethod
    def shown_items(cls, query: dict) -> list[int] | None:
        """The catalogue items a stored screen showed, in order (None: not items)."""
        return None

    @classmethod
    def shown_record(cls, payload: dict, query: dict) -> Any:
        """What a stored screen showed, for the export's ``answers.csv``."""
        return cls.shown_items(query)

    @classmethod
    def found_item(cls, result: Any) -> int | None:
        """The catalogue item a finished session's result names as found (None: none)."""
        return None

    # ---------------------------------------------------------------- helpers
    def _no_guesses(self, guesses: int | None) -> None:
        if guesses:
            raise Invalid(f"guesses: the {self.name} mode offers no guesses (0 or none)")

    @staticmethod
    def _check_position(choice: int | None, size: int) -> None:
        if choice is not None and not 0 <= choice < size:
            raise Invalid(f"choice: expected an index in 0..{size - 1} or null, got {choice}")
