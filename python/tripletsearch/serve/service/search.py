"""The search service without HTTP: sessions of people searching a catalogue.

Every screen and answer is in the database (:mod:`..store`); a session's searcher is rebuilt
from them (:mod:`.live`). What a session shows and how an answer moves it is its mode's
(:mod:`..modes`): the service creates sessions, checks tokens, keeps answers idempotent and
durable, undoes, and asks the mode for the rest; requests parsed by :mod:`..schema`.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import __version__
from ...utils import derived_seed
from ..catalogue import Catalogue
from ..config import ServeConfig
from ..errors import Busy, Closed, Conflict, Invalid, NotFound, Unauthorized
from ..modes import Mode, Screen, SessionInfo, mode_registry
from ..schema import Answer, NewSession, Undo
from ..store import SessionRow, Store, WriteConflict
from .live import LiveSearchers
from .tokens import new_id, new_token, token_hash, token_matches

#: Seconds after its last answer (or its start) that an unfinished session counts as open.
OPEN_FOR = 3600.0

__all__ = ["SearchService", "Owner"]

log = logging.getLogger("tripletsearch.serve")


@dataclass(frozen=True)
class Owner:
    """Who a participant-scoped session belongs to (a study's, see ``start_session``).

    The participant, their slot (one session per slot), the target they were given (None:
    none), their token (it opens the session) and the searcher's seed.
    """

    participant: str
    slot: int
    target: int | None
    token: str
    seed: int


def _slot_start(store: Store, owner: Owner | None) -> tuple[str, int] | None:
    """(the session of ``owner``'s slot, 0): where a racing start stored its screen 0."""
    if owner is None:
        return None
    ours = store.participant_sessions(owner.participant)
    return next(((s.id, 0) for s in ours if s.slot == owner.slot), None)


def _for_target(mode: Mode, params: dict, n: int, screen: Any, target: Any, seed: int) -> Any:
    """``screen`` as a search for ``target`` shows it (:meth:`~..modes.Mode.for_target`)."""
    if screen is None or target is None:
        return screen
    check = n + 1 in params.get("attention", ())  # screen n + 1: an attention screen?
    return mode.for_target(screen, int(target), check, derived_seed(seed, n))


class SearchService:
    """Sessions of people searching ``catalogue``, stored in ``store``.

    It knows no experiment kind: what a session shows and how an answer moves it is the
    business of its mode, one of ``modes``; a study or a collect gives its own when it is
    bound (:func:`~..modes.mode_registry`).

    Parameters
    ----------
    catalogue : Catalogue
    store : Store
        Set up (``store.setup()``) before the service starts.
    modes : dict, optional
        Mode name -> its :class:`~..modes.Mode` object, built for this catalogue and store
        (None: :func:`~..modes.mode_registry` of ``settings`` without an experiment).
    settings : ServeConfig, optional
        The server's settings (:class:`~..config.ServeConfig`; None: its defaults): the
        screens per session (``max_queries``, stored with each new session), the seeds of
        free sessions (``random_state``), the open free sessions allowed
        (``limits.max_open_sessions``) and the search steps (a new session's prior and
        first screen, an answer with its next screen, a rebuild) computed at once
        (``steps_at_once``; the others wait their turn).
    cache_size : int
        Live searchers kept per process at most.
    memory_budget : int, optional
        Bytes the live searchers of this process may hold together (least recently used
        evicted first, rebuilt from the database on their next request; a request that
        cannot fit gets :class:`~.errors.Busy`). None: bounded by ``cache_size`` only.
    closed : str
        When set, new free sessions are refused with this message (a study server).
    """

    def __init__(
        self,
        catalogue: Catalogue,
        store: Store,
        modes: Mapping[str, Mode] | None = None,
        *,
        settings: ServeConfig | None = None,
        cache_size: int = 4096,
        closed: str = "",
        memory_budget: int | None = None,
    ):
        settings = ServeConfig() if settings is None else settings
        self.catalogue, self.store, self.settings = catalogue, store, settings
        self.max_open_sessions = int(settings.limits.max_open_sessions)
        self._open_count = (-1e9, 0)  # (when counted, how many): read at most once a second
        self._open_lock = threading.Lock()
        # free sessions' seeds: secret and fresh, or a reproducible sequence (tests, demos)
        seeds = settings.random_state
        self._seeds = None if seeds is None else np.random.default_rng(seeds)
        self._seeds_lock = threading.Lock()
        self.modes: Mapping[str, Mode] = (
            mode_registry(catalogue, settings, store) if modes is None else modes
        )
        self.max_queries = int(settings.max_queries)
        self.closed = closed
        self.live = LiveSearchers(store, cache_size, memory_budget)
        steps = settings.steps_at_once
        self._steps: contextlib.AbstractContextManager = (
            contextlib.nullcontext() if steps is None else threading.BoundedSemaphore(steps)
        )

    def _new_seed(self) -> int:
        if self._seeds is None:
            return secrets.randbits(63)
        with self._seeds_lock:
            return int(self._seeds.integers(2**63))

    @property
    def offered(self) -> list[str]:
        """The modes new sessions may take (those the catalogue can serve)."""
        return [name for name, m in self.modes.items() if m.offered_by(self.catalogue)]

    def mode(self, name: str) -> Mode:
        """The mode object of stored sessions of mode ``name``."""
        found = self.modes.get(name)
        if found is None:
            raise Conflict(f"this server does not serve {name!r} sessions")
        return found

    # ------------------------------------------------------------------ new sessions
    def create(self, request: NewSession) -> dict:
        """A new free session: ``{"id", "token", "screen"}``."""
        if self.closed:
            raise Closed(self.closed)
        name = self.offered[0] if request.mode is None else request.mode
        if name not in self.offered:
            raise Invalid(f"mode: expected one of {self.offered}, got {name!r}")
        n_choices, params = self.modes[name].new_params(request.n_choices, request.guesses)
        self._check_open_sessions()
        sid, token = self.start_session(name, n_choices, params)
        screen = self.store.screen(sid, 0)
        assert screen is not None
        return {"id": sid, "token": token, "screen": screen[0]}

    def _check_open_sessions(self) -> None:
        """:class:`~.errors.Busy` when ``max_open_sessions`` free sessions are open.

        Open: not finished, an answer or a start within :data:`OPEN_FOR`; counted in the
        database at most once a second per process.
        """
        if self.max_open_sessions <= 0:
            return
        now = time.monotonic()
        with self._open_lock:
            when, count = self._open_count
            if now - when > 1.0:
                when, count = now, self.store.count_open(time.time() - OPEN_FOR)
            if count >= self.max_open_sessions:
                raise Busy(
                    f"the server has {count} searches open (at most "
                    f"{self.max_open_sessions}); try again later",
                    retry_after=60,
                )
            self._open_count = (when, count + 1)

    def start_session(
        self,
        mode: str,
        n_choices: int,
        params: dict,
        *,
        owner: Owner | None = None,
        max_queries: int | None = None,
    ) -> tuple[str, str]:
        """Create a session of ``mode`` with its first screen; (id, token).

        ``params`` as the mode's ``new_params`` gives them. A participant-scoped session
        names its ``owner`` (:class:`~.store.WriteConflict` when the slot has a session
        already); others get a fresh token and a random seed. ``max_queries``: its screen
        limit (default: the service's).
        """
        the_mode = self.mode(mode)
        sid = new_id()
        token = owner.token if owner is not None else new_token()
        seed = owner.seed if owner is not None else self._new_seed()
        limit = self.max_queries if max_queries is None else int(max_queries)
        with self.live.hold(sid, fresh=True):
            with self._steps:  # the memory reserved only once it is this step's turn
                self.live.reserve(sid, the_mode.session_bytes(n_choices, params))
                searcher = the_mode.searcher(n_choices, params, seed)
                params = {**the_mode.started(searcher, params), "max_queries": limit}
                target = None if owner is None else owner.target
                screen = self._next_screen(the_mode, params, 0, searcher, target, seed)
            assert screen is not None  # a catalogue has >= 2 items
            try:
                self.store.create_session(
                    sid=sid,
                    token_hash=token_hash(token),
                    mode=mode,
                    n_choices=n_choices,
                    seed=str(seed),
                    params=params,
                    catalogue=the_mode.space,
                    library=__version__,
                    payload=screen.payload,
                    query=screen.query,
                    participant=None if owner is None else owner.participant,
                    slot=None if owner is None else owner.slot,
                    target=None if owner is None else owner.target,
                )
            except BaseException:  # a racing request started the slot, or the write failed
                self._discard(sid, the_mode, screen, lambda: _slot_start(self.store, owner))
                raise
            self.live.put(sid, searcher, 0, 0, 0, the_mode.state_bytes(searcher))
        return sid, token

    def _next_screen(self, mode: Mode, params: dict, number: int, searcher: Any,
                     target: int | None = None, seed: int = 0) -> Screen | None:  # fmt: skip
        """Screen ``number`` (with a ``target``: :func:`_for_target`'s), or None."""
        if number >= int(params.get("max_queries", self.max_queries)):
            return None
        return _for_target(mode, params, number, mode.next_screen(searcher, number), target, seed)

    # ------------------------------------------------------------------ answers
    def _authorized(self, sid: str, token: str | None) -> SessionRow:
        if not isinstance(sid, str) or not 0 < len(sid) <= 64:
            raise NotFound("no such session")
        row = self.store.session(sid)
        if row is None:
            raise NotFound("no such session")
        if not token_matches(token, row.token_hash):
            raise Unauthorized("missing or wrong token for this session")
        return row

    def _current(self, row: SessionRow, number: int, kind: str, *key: Any) -> dict | None:
        """The stored reply when screen ``number`` was handled before (a repeat), else None.

        Before returning None, checks that ``number`` is the current screen of an open session.
        """
        if number < row.screen or (row.done and number <= row.screen):
            return self._repeat(row.id, number, kind, *key)
        if number > row.screen:
            raise Invalid(
                f"screen: {number} has not been shown (the current screen is {row.screen})"
            )
        return None

    def answer(self, sid: str, token: str | None, request: Answer) -> dict:
        """Record the answer to a screen; ``{"screen": next or None, "done", "n_queries"}``.

        The same answer again returns the same reply; a different one is a Conflict.
        """
        return self.answer_row(self._authorized(sid, token), request)

    def answer_row(self, row: SessionRow, request: Answer) -> dict:
        """:meth:`answer` for the session ``row`` as its caller read and authorized it.

        A participant-scoped caller (a collect's) reads the session once per request: the
        row is read again only when another request of this process held the session
        meanwhile (it may have moved on); a row that another process moved on makes the
        answer's write lose (:class:`~..store.WriteConflict`), and the stored reply is
        returned as for a repeat.
        """
        repeat = self._current(row, request.screen, "answer", *request.key)
        if repeat is not None:
            return repeat
        mode = self.mode(row.mode)
        if row.catalogue != mode.space:
            raise Conflict("this session was started on another catalogue")
        stored = self.store.screen(row.id, request.screen)
        if stored is None:
            raise Conflict("this session's current screen is missing")
        screen = Screen(*stored)
        mode.check(SessionInfo(row.n_choices, row.params, row.target), screen, request)
        with self.live.hold(row.id) as waited:
            return self._advance(row, mode, screen, request, waited)

    def _step(
        self, row: SessionRow, mode: Mode, screen: Screen, request: Answer
    ) -> tuple[Any, Screen | None, dict | None]:
        """(the searcher after the answer or None, the next screen or None, the result)."""
        check = screen.query.get("check") is not None  # (an attention screen: not applied)
        if request.found and not check:
            return None, None, mode.found_result(screen, request.choice)
        with self._steps:
            searcher = self.live.at(row, mode)
            if not check:
                mode.apply(searcher, screen.query, request.choice)
            nxt = self._next_screen(
                mode, row.params, request.screen + 1, searcher, row.target, int(row.seed)
            )
            end = mode.end_result(searcher, request.screen + 1) if nxt is None else None
        return searcher, nxt, end

    def _advance(
        self, row: SessionRow, mode: Mode, screen: Screen, request: Answer, waited: bool
    ) -> dict:
        sid, number, key = row.id, request.screen, request.key
        # another request of this process held the session: it may have moved it on
        moved = waited or self.live.ahead(sid, row.screen)
        fresh = self.store.session(sid) if moved else row
        if fresh is None or fresh.screen != number or fresh.done:
            return self._repeat(sid, number, "answer", *key)
        nxt: Screen | None = None
        counts = screen.query.get("check") is None  # (an attention screen's: in no query)
        n_queries = fresh.n_queries + counts
        try:
            searcher, nxt, result = self._step(fresh, mode, screen, request)
            reply = {
                "screen": None if nxt is None else nxt.payload,
                "done": nxt is None,
                "n_queries": n_queries,
            }
            self.store.record_answer(
                sid,
                number,
                choice=request.choice,
                found=request.found,
                reply=reply,
                done=nxt is None,
                result=result,
                next_payload=None if nxt is None else nxt.payload,
                next_query=None if nxt is None else nxt.query,
                response_ms=request.response_ms,
                counts=counts,
                picks=request.picks,
            )
        except WriteConflict:  # another worker answered this screen first: nothing written
            self._discard(sid, mode, nxt, lambda: (sid, number + 1))
            return self._repeat(sid, number, "answer", *key)
        except BaseException:  # the database, the disk, a bug: the retry finds all as it was
            self._discard(sid, mode, nxt, lambda: (sid, number + 1))
            raise
        try:
            if nxt is None or searcher is None:
                self.live.drop(sid)
            else:
                self.live.put(
                    sid,
                    searcher,
                    number + 1,
                    fresh.undos,
                    n_queries,
                    mode.state_bytes(searcher),
                )
        except BaseException:  # recorded, but not cached: rebuilt on the next request
            self.live.drop(sid)
            raise
        return reply

    def _discard(
        self, sid: str, mode: Mode, screen: Screen | None, where: Callable[[], Any]
    ) -> None:
        """Forget a step that was never recorded: its searcher, and what its screen took.

        Any error between reading an answer and committing its next screen comes here: the
        cached searcher may hold the answer already (it is dropped: the next request
        rebuilds it from the database), and what the screen took is given back
        (:meth:`~..modes.Mode.discard`) unless the screen ``where()`` names (session id,
        number; None: none) is stored showing it: the write committed before it failed, or
        a racing request recorded the same query (a retry is given the query it holds
        again). Never raises: the error that brought it here is the one to report.
        """
        self.live.drop(sid)
        if screen is None or screen.claim is None:
            return
        try:
            at = where()
            stored = None if at is None else self.store.screen(*at)
            if stored is None or stored[1] != screen.query:
                mode.discard(screen)
        except Exception as exc:  # the database still failing: the claim stays taken
            log.info("session %s: a claim kept, not given back (%s)", sid, type(exc).__name__)

    def undo(self, sid: str, token: str | None, request: Undo) -> dict:
        """Take back the last answer that counts, from the current screen.

        The answer stays recorded (marked undone), the undo is recorded as screen n's answer,
        and screen n + 1 shows the undone screen again. The same undo again returns the same
        reply.
        """
        row = self._authorized(sid, token)
        number = request.screen
        repeat = self._current(row, number, "undo", None, False, None)
        if repeat is not None:
            return repeat
        if row.n_queries == 0:
            raise Invalid("screen: there is no answer to undo")
        with self.live.hold(sid):
            effective = self.store.effective(sid)
            if not effective:  # a racing undo of this screen took the last answer back
                return self._repeat(sid, number, "undo", None, False, None)
            last = effective[-1]
            payload = {**last["payload"], "number": number + 1}
            reply = {"screen": payload, "done": False, "n_queries": row.n_queries - 1}
            try:
                self.store.record_undo(
                    sid,
                    number,
                    undone_screen=last["number"],
                    reply=reply,
                    payload=payload,
                    query=last["query"],
                )
            except WriteConflict:
                return self._repeat(sid, number, "undo", None, False, None)
            finally:
                self.live.drop(sid)
        return reply

    def _repeat(self, sid: str, number: int, kind: str, *key: Any) -> dict:
        """A screen handled before: its reply again for the same (choice, found, picks)."""
        stored = self.store.answer(sid, number)
        if stored is None:
            raise Conflict("this session is finished")
        was, s_choice, s_found, reply, s_picks = stored
        was = "answer" if was == "check" else was  # (an attention screen's answer)
        if was != kind:
            raise Conflict(
                f"screen {number} was "
                + ("undone" if was == "undo" else "answered")
                + f" already; the first {'undo' if was == 'undo' else 'answer'} stands"
            )
        if (s_choice, s_found, s_picks) != key:
            picked = f"choice {s_choice}" + ("" if s_picks is None else f", picks {list(s_picks)}")
            raise Conflict(f"screen {number} was already answered ({picked}, found "
                           f"{str(s_found).lower()}); the first answer stands")  # fmt: skip
        return reply

    # ------------------------------------------------------------------ reading
    def leave(self, sid: str, token: str | None) -> dict:
        """End a free session unfinished, left by its person: abandoned, never found.

        ``{"done": true, "left": bool}`` (false: it had ended before). A study's search
        ends when found or when its participant withdraws: Conflict.
        """
        row = self._authorized(sid, token)
        if row.participant is not None:
            raise Conflict("a study's search ends when found, or when its participant withdraws")
        with self.live.hold(sid):  # not while a step of it is under way
            left = self.store.leave(sid, time.time())
            self.live.drop(sid)
        return {"done": True, "left": left}

    def get(self, sid: str, token: str | None) -> dict:
        """The session: id, mode, n_choices, done, n_queries, the current screen, the history.

        The history: every recorded answer and undo, undone answers marked.
        """
        row = self._authorized(sid, token)
        history = [
            {
                "screen": h["number"],
                "kind": h["kind"],
                "shown": {k: v for k, v in h["payload"].items() if k != "number"},
                "choice": h["choice"],
                "found": h["found"],
                "undone": h["undone"],
                "seconds": round(h["answered_at"] - h["shown_at"], 3),
            }
            for h in self.store.history(sid)
        ]
        current = None
        if not row.done:
            stored = self.store.screen(sid, row.screen)
            current = None if stored is None else stored[0]
        return {
            "id": row.id,
            "mode": row.mode,
            "n_choices": row.n_choices,
            "done": row.done,
            "n_queries": row.n_queries,
            "screen": current,
            "result": row.result,
            "history": history,
        }
